package io.sluice.benchmarks;

import com.codahale.metrics.MetricRegistry;
import io.sluice.common.Clock;
import io.sluice.common.SluiceConf;
import io.sluice.network.NetworkConf;
import io.sluice.server.ServerConf;
import io.sluice.server.ServerMetrics;
import io.sluice.server.ShuffleServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The Sluice servers of the Spark benchmarks, in the benchmark's JVM (the Spark driver and
 * executors run in JVMs of their own), on loopback ports. Their CPU is that of their own threads
 * ({@link CpuMeter}). The bytes shuffled are those pushed to them, replica copies not counted; a
 * server restarted with {@link #restart} keeps counting: the old server's counts stay in the
 * totals, the new one's are added.
 */
final class BenchServers implements AutoCloseable {
  /** Index in {@link #counters()}: bytes pushed, replica copies not counted. */
  static final int SHUFFLED = 0;

  /** Index in {@link #counters()}: bytes served to readers. */
  static final int READ = 1;

  /** Index in {@link #counters()}: batches pushed. */
  static final int BATCHES = 2;

  /** The servers running now, by index; a restart replaces one. */
  final List<ShuffleServer> servers = new CopyOnWriteArrayList<>();

  private final List<SluiceConf> confs = new CopyOnWriteArrayList<>();

  /** The registry of every server started, restarted ones included: the totals. */
  private final List<MetricRegistry> registries = new CopyOnWriteArrayList<>();

  /** The registry of each server running now, by index. */
  private final List<MetricRegistry> current = new CopyOnWriteArrayList<>();

  private final CpuMeter cpu = new CpuMeter();
  private final Map<String, String> settings;

  /**
   * @param settings more server settings ({@code --server-conf})
   */
  BenchServers(Map<String, String> settings) {
    this.settings = settings;
  }

  /** Starts one more server with its data (and state store) in {@code dir}, on a free port. */
  void start(Path dir) throws IOException {
    Files.createDirectories(dir);
    Map<String, String> values = new LinkedHashMap<>();
    values.put("sluice.server.host", "127.0.0.1");
    values.put("sluice.server.port", "0");
    values.put("sluice.server.dirs", dir.toString());
    values.put("sluice.commit.fsync", "false");
    values.putAll(settings);
    SluiceConf conf = SluiceConf.of(values);
    MetricRegistry registry = new MetricRegistry();
    servers.add(
        new ShuffleServer(new ServerConf(conf), new NetworkConf(conf), registry, Clock.SYSTEM));
    confs.add(conf);
    registries.add(registry);
    current.add(registry);
  }

  /**
   * Restarts server {@code i} gracefully, as {@code shuffle-daemon restart} does: stops it (new
   * pushes are answered HARD_SPLIT, open splits committed and recorded in its state store), keeps
   * its port closed for {@code downMillis}, then starts a new server on the same port, data
   * directory, state store and settings, and waits until it accepts connections.
   */
  ServerRestart restart(int i, long downMillis) throws IOException, InterruptedException {
    ShuffleServer old = servers.get(i);
    int port = old.port();
    long stopBegan = System.currentTimeMillis();
    long start = System.nanoTime();
    old.close();
    long stopped = System.nanoTime();
    Thread.sleep(downMillis);
    long startBegan = System.nanoTime();
    SluiceConf conf = confs.get(i).with(Map.of("sluice.server.port", Integer.toString(port)));
    MetricRegistry registry = new MetricRegistry();
    ShuffleServer restarted =
        new ShuffleServer(new ServerConf(conf), new NetworkConf(conf), registry, Clock.SYSTEM);
    registries.add(registry);
    current.set(i, registry);
    servers.set(i, restarted);
    ServerRestart.awaitAccepting(port);
    long back = System.nanoTime();
    return new ServerRestart(
        i,
        port,
        stopBegan,
        (stopped - start) / 1e9,
        (startBegan - stopped) / 1e9,
        (back - startBegan) / 1e9,
        (back - start) / 1e9,
        restarted.recovery());
  }

  boolean cpuSupported() {
    return cpu.serverCpuSupported();
  }

  CpuMeter.Snapshot cpu() {
    return cpu.snapshot();
  }

  /**
   * {@link #SHUFFLED} (bytes pushed, replica copies not counted), {@link #READ} (bytes served) and
   * {@link #BATCHES} (batches pushed) so far, by every server ever started here.
   */
  long[] counters() {
    return counters(registries);
  }

  /** The same counters of server {@code i} as it runs now: since its last restart, if any. */
  long[] counters(int i) {
    return counters(List.of(current.get(i)));
  }

  private static long[] counters(List<MetricRegistry> registries) {
    return new long[] {
      count(registries, "bytesPushed") - count(registries, "replicaBytesPushed"),
      count(registries, "bytesRead"),
      count(registries, "batchesPushed")
    };
  }

  private static long count(List<MetricRegistry> registries, String meter) {
    long n = 0;
    for (MetricRegistry registry : registries) {
      n += registry.meter(ServerMetrics.PREFIX + meter).getCount();
    }
    return n;
  }

  @Override
  public void close() {
    for (ShuffleServer server : servers) {
      server.close();
    }
  }
}
