package io.sluice.e2e.spark;

import com.codahale.metrics.MetricRegistry;
import io.sluice.common.Clock;
import io.sluice.common.SluiceConf;
import io.sluice.network.NetworkConf;
import io.sluice.server.ServerConf;
import io.sluice.server.ShuffleServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/** Real Sluice servers in the test JVM, on ephemeral loopback ports, for Spark jobs to use. */
final class SluiceServers implements AutoCloseable {
  private final List<ShuffleServer> servers = new ArrayList<>();
  private final List<SluiceConf> confs = new ArrayList<>();

  SluiceServers(Path root, int count) throws IOException {
    this(root, count, Map.of());
  }

  /** Servers with {@code extra} settings on top of the suites' own. */
  SluiceServers(Path root, int count, Map<String, String> extra) throws IOException {
    for (int i = 0; i < count; i++) {
      Path dir = Files.createDirectories(root.resolve("server" + i));
      SluiceConf conf =
          SluiceConf.of(
                  Map.of(
                      "sluice.server.host", "127.0.0.1",
                      "sluice.server.port", "0",
                      "sluice.server.dirs", dir.toString(),
                      "sluice.network.ioThreads", "2",
                      "sluice.memory.max", "128m",
                      "sluice.flush.size", "64k",
                      "sluice.read.chunkSize", "256k",
                      "sluice.commit.fsync", "false"))
              .with(extra);
      confs.add(conf);
      servers.add(start(conf));
    }
  }

  private static ShuffleServer start(SluiceConf conf) throws IOException {
    return new ShuffleServer(
        new ServerConf(conf), new NetworkConf(conf), new MetricRegistry(), Clock.SYSTEM);
  }

  /**
   * A graceful restart of server {@code i}, as {@code shuffle-daemon restart} does it: stops it
   * (its open splits are committed and recorded), then starts a new one on the same port, data
   * directory and state store, which serves what the old one committed, after {@code down} (a
   * process's restart takes seconds: clients find the port closed meanwhile).
   *
   * @return the new server
   */
  ShuffleServer restart(int i, Duration down) throws IOException, InterruptedException {
    ShuffleServer old = servers.get(i);
    int port = old.port();
    old.close();
    Thread.sleep(down.toMillis());
    ShuffleServer restarted = start(confs.get(i).with(Map.of("sluice.server.port", "" + port)));
    servers.set(i, restarted);
    return restarted;
  }

  /** The value of {@code spark.sluice.servers}. */
  String list() {
    return servers.stream().map(s -> "127.0.0.1:" + s.port()).collect(Collectors.joining(","));
  }

  List<ShuffleServer> all() {
    return servers;
  }

  /** Sorts done by all servers for map-range reads. */
  long sorts() {
    return count("sluice.server.sort.sorts");
  }

  /** Map-range reads all servers served from a split's map-run index, without sorting. */
  long indexedRangeReads() {
    return count("sluice.server.sort.indexedRangeReads");
  }

  /** Shuffle commits all servers answered. */
  long commits() {
    long n = 0;
    for (ShuffleServer s : servers) {
      n += s.metrics().commitLatency().getCount();
    }
    return n;
  }

  private long count(String meter) {
    long n = 0;
    for (ShuffleServer s : servers) {
      n += s.metrics().registry().meter(meter).getCount();
    }
    return n;
  }

  @Override
  public void close() {
    for (ShuffleServer s : servers) {
      s.close();
    }
  }
}
