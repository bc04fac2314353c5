package io.sluice.server;

import com.codahale.metrics.MetricRegistry;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.sluice.common.Clock;
import io.sluice.network.NetworkConf;
import io.sluice.network.TransportServer;
import io.sluice.protocol.SluiceProtocol;
import io.sluice.server.memory.MemoryBudget;
import io.sluice.server.read.ReadStreams;
import io.sluice.server.storage.DataDirectories;
import io.sluice.server.storage.ShuffleRegistry;
import java.io.Closeable;
import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The shuffle server: one per node, the same in the daemon and in the NodeManager. Accepts pushed
 * batches, buffers them within the memory budget, flushes them to split files on its data
 * directories, commits, serves reads, and deletes the files of unregistered shuffles and expired
 * applications. Knows nothing of Spark, Flink or YARN.
 */
public final class ShuffleServer implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(ShuffleServer.class);

  private final ServerConf conf;
  private final MemoryBudget memory;
  private final ServerMetrics metrics;
  private final DataDirectories dirs;
  private final ShuffleRegistry registry;
  private final ReadStreams streams;
  private final ScheduledExecutorService housekeeping;
  private final TransportServer transport;
  private final String advertisedHost;
  private volatile boolean closed;

  /**
   * Starts a server: creates the data directories, binds the port and starts the expiry check.
   *
   * @throws IOException when a directory cannot be used or the port cannot be bound
   */
  public ShuffleServer(
      ServerConf conf, NetworkConf networkConf, MetricRegistry metricRegistry, Clock clock)
      throws IOException {
    this.conf = conf;
    this.memory =
        new MemoryBudget(
            conf.memoryMax(),
            conf.pauseWatermark(),
            conf.replicaPauseWatermark(),
            conf.resumeWatermark(),
            clock);
    this.metrics = new ServerMetrics(metricRegistry, memory);
    this.dirs = new DataDirectories(conf, memory, metrics);
    this.registry = new ShuffleRegistry(dirs, clock);
    this.streams = new ReadStreams(conf.maxStreamsPerConnection());
    this.advertisedHost = advertisedHost(conf.host());
    this.housekeeping =
        Executors.newSingleThreadScheduledExecutor(
            new DefaultThreadFactory("sluice-housekeeping", true));
    ServerRequestHandler handler = new ServerRequestHandler(registry, memory, streams, metrics);
    try {
      this.transport =
          new TransportServer(
              "sluice-server",
              networkConf,
              SluiceProtocol.INSTANCE,
              handler,
              conf.host(),
              conf.port());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      closeQuietly();
      throw new IOException("interrupted while binding port " + conf.port(), e);
    } catch (RuntimeException e) {
      closeQuietly();
      throw new IOException("Cannot bind " + conf.host() + ":" + conf.port() + ": " + e, e);
    }
    memory.setPressureListener(
        bytesToFree -> housekeeping.execute(() -> relieveMemoryPressure(bytesToFree)));
    housekeeping.scheduleWithFixedDelay(
        this::checkDisks,
        conf.diskCheckIntervalMillis(),
        conf.diskCheckIntervalMillis(),
        TimeUnit.MILLISECONDS);
    housekeeping.scheduleWithFixedDelay(
        this::expireApplications,
        conf.appExpiryCheckIntervalMillis(),
        conf.appExpiryCheckIntervalMillis(),
        TimeUnit.MILLISECONDS);
    LOG.info(
        "Sluice shuffle server serving {}:{} with data directories {} and memory max {} bytes",
        advertisedHost,
        port(),
        conf.dirs(),
        conf.memoryMax());
  }

  private static String advertisedHost(String bindHost) {
    if (bindHost != null && !bindHost.isEmpty() && !bindHost.equals("0.0.0.0")) {
      return bindHost;
    }
    try {
      return InetAddress.getLocalHost().getCanonicalHostName();
    } catch (UnknownHostException e) {
      return "localhost";
    }
  }

  private void relieveMemoryPressure(long bytesToFree) {
    long handed = registry.flushLargest(bytesToFree);
    LOG.debug(
        "Memory {}: {} of {} bytes held; flushing {} buffered bytes early",
        memory.state(),
        memory.held(),
        memory.max(),
        handed);
  }

  /** Visible for tests: checks every data directory now. */
  void checkDisks() {
    try {
      dirs.checkAll();
    } catch (RuntimeException e) {
      LOG.error("Data directory check failed", e);
    }
  }

  /** Visible for tests: runs one expiry pass now. */
  void expireApplications() {
    try {
      registry.expire(conf.appTimeoutMillis()).get(60, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException | RuntimeException e) {
      LOG.error("Application expiry check failed", e);
    }
  }

  public int port() {
    return transport.port();
  }

  /** The host name clients should use for this server. */
  public String host() {
    return advertisedHost;
  }

  public MemoryBudget memory() {
    return memory;
  }

  public ServerMetrics metrics() {
    return metrics;
  }

  public DataDirectories dataDirectories() {
    return dirs;
  }

  public ShuffleRegistry registry() {
    return registry;
  }

  /**
   * Stops serving: closes the port and every connection, deletes uncommitted split files (no
   * half-written file is left behind), lets queued flushes finish and stops the threads. Committed
   * files stay. Idempotent.
   */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    long start = System.nanoTime();
    closeQuietly();
    LOG.info(
        "Sluice shuffle server on port {} stopped in {} ms",
        conf.port(),
        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
  }

  private void closeQuietly() {
    housekeeping.shutdownNow();
    if (transport != null) {
      transport.close();
    }
    try {
      registry.discardUncommitted().get(60, TimeUnit.SECONDS);
    } catch (Exception e) {
      LOG.warn("Discarding uncommitted splits did not finish: {}", e.toString());
    }
    dirs.close();
  }
}
