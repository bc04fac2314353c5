package io.sluice.server;

import com.codahale.metrics.MetricRegistry;
import io.netty.channel.ChannelHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.internal.PlatformDependent;
import io.sluice.auth.AppKeys;
import io.sluice.auth.ServerAuthenticator;
import io.sluice.common.Clock;
import io.sluice.common.Json;
import io.sluice.network.NetworkConf;
import io.sluice.network.TransportServer;
import io.sluice.protocol.SluiceProtocol;
import io.sluice.server.memory.DirectMemoryLimit;
import io.sluice.server.memory.MemoryBudget;
import io.sluice.server.metrics.PrometheusSource;
import io.sluice.server.read.ChunkReader;
import io.sluice.server.read.FileAnswers;
import io.sluice.server.read.MapStreams;
import io.sluice.server.read.ReadStreams;
import io.sluice.server.read.StreamQuota;
import io.sluice.server.sort.MapRangeReads;
import io.sluice.server.state.ServerStateStore;
import io.sluice.server.state.StateRecovery;
import io.sluice.server.storage.CommittedSplitFile;
import io.sluice.server.storage.DataDirectories;
import io.sluice.server.storage.ShuffleRegistry;
import java.io.Closeable;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The shuffle server: one per node, the same in the daemon and in the NodeManager. Accepts pushed
 * batches, buffers them within the memory budget, flushes them to split files on its data
 * directories, commits, serves reads, and deletes the files of unregistered shuffles and expired
 * applications. Knows nothing of Spark, Flink or YARN.
 *
 * <p><b>Restarts.</b> What must survive a restart (registered shuffles, committed splits) is kept
 * in a {@link ServerStateStore} in {@code sluice.state.dir}; a starting server restores it before
 * it serves ({@link StateRecovery}). {@link #close()} is a graceful stop: new pushes are answered
 * HARD_SPLIT, every open split is committed and recorded, and only then does the port close, so
 * after a restart the server serves all the data it acknowledged.
 */
public final class ShuffleServer implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(ShuffleServer.class);

  private final ServerConf conf;
  private final MemoryBudget memory;
  private final ServerMetrics metrics;
  private final DataDirectories dirs;
  private final ServerStateStore state;
  private final StateRecovery.Summary recovery;
  private final ShuffleRegistry registry;
  private final ReadStreams streams;
  private final StreamQuota streamQuota;
  private final MapRangeReads rangeReads;
  private final ChunkReader chunkReader;
  private final MapStreams mapStreams;

  /** Disk probes, application expiry, memory-tier write-back: work that waits on IO. */
  private final ScheduledExecutorService housekeeping;

  /** Pausing and resuming pushers ({@link FlowControl}): never waits on IO or housekeeping. */
  private final ScheduledExecutorService flowControlExecutor;

  private final TransportServer transport;
  private final String advertisedHost;
  private volatile boolean closed;

  /** Where the admin API listens, named to HTTP requests on the shuffle port; -1 for nowhere. */
  private volatile int adminPort = -1;

  private final Clock clock;
  private final long startedAtMillis;

  /** Where a server is in its working life (the admin API's {@code state}). */
  public enum Lifecycle {
    /** Takes new shuffles and serves what it holds. */
    SERVING,
    /** Decommissioned: takes nothing new, serves what applications still hold here. */
    DECOMMISSIONING,
    /** Decommissioned and holding no application's data: it can be stopped without harm. */
    DRAINED
  }

  /** Each connection's authentication gate, or null without sluice.auth.enabled. */
  private Supplier<ChannelHandler> authGate(ServerConf conf) {
    if (!conf.auth().enabled()) {
      return null;
    }
    AppKeys keys = new RegisteredAppKeys(registry, conf.auth().requireClusterSecret());
    return ServerAuthenticator.gate(
        "sluice-server", keys, conf.auth(), () -> metrics.authFailures().mark());
  }

  /** Bytes of a frame a chunk leaves for the frame's prefix and response header. */
  private static final int CHUNK_RESPONSE_HEADROOM = 4096;

  /**
   * Starts a server: creates the data directories, restores what the state store recorded, binds
   * the port and starts the expiry check.
   *
   * @throws IOException when a directory or the state store cannot be used or the port cannot be
   *     bound
   */
  public ShuffleServer(
      ServerConf conf, NetworkConf networkConf, MetricRegistry metricRegistry, Clock clock)
      throws IOException {
    long startNanos = System.nanoTime();
    this.clock = clock;
    this.startedAtMillis = clock.millis();
    DirectMemoryLimit.check(conf.memoryMax(), PlatformDependent.maxDirectMemory());
    if (conf.chunkSize() > networkConf.maxFrameSize() - CHUNK_RESPONSE_HEADROOM) {
      throw new IllegalArgumentException(
          "sluice.read.chunkSize ("
              + conf.chunkSize()
              + " bytes) must leave room for a response header in sluice.network.maxFrameSize ("
              + networkConf.maxFrameSize()
              + " bytes): lower the first or raise the second");
    }
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
    try {
      this.state = ServerStateStore.open(conf.stateDir(), conf.commitFsync(), metricRegistry);
    } catch (IOException e) {
      dirs.close();
      throw e;
    }
    this.registry = new ShuffleRegistry(dirs, clock, state);
    try {
      this.recovery = StateRecovery.recover(state, registry, dirs);
    } catch (IOException | RuntimeException e) {
      state.close();
      dirs.close();
      throw e;
    }
    ApplicationLimits limits = new ApplicationLimits(registry, memory, conf, dirs.capacityBytes());
    dirs.limitWriters(limits);
    this.streamQuota = new StreamQuota(limits);
    this.streams = new ReadStreams(conf.maxStreamsPerConnection(), streamQuota);
    this.advertisedHost = conf.advertisedHost();
    this.housekeeping =
        Executors.newSingleThreadScheduledExecutor(
            new DefaultThreadFactory("sluice-housekeeping", true));
    this.flowControlExecutor =
        Executors.newSingleThreadScheduledExecutor(
            new DefaultThreadFactory("sluice-flow-control", true));
    this.rangeReads = MapRangeReads.start(conf.chunkSize(), conf.sortMapRanges(), metricRegistry);
    this.chunkReader = new ChunkReader(Math.max(2, networkConf.ioThreads()));
    FlowControl flowControl = new FlowControl(memory, registry::flushLargest, flowControlExecutor);
    memory.setListener(flowControl);
    this.mapStreams =
        new MapStreams(
            dirs.all(),
            conf.maxStreamsPerConnection(),
            streamQuota,
            streams::nextId,
            conf.mapReadBuffers(),
            conf.mapReadBufferSize(),
            memory,
            metrics,
            registry::countRead);
    metrics.registerOpenStreams(this::openStreamCount);
    ServerRequestHandler handler =
        new ServerRequestHandler(
            registry,
            memory,
            streams,
            metrics,
            flowControl,
            rangeReads,
            mapStreams,
            conf.mapWriteCredits(),
            conf.integrity(),
            chunkReader,
            new FileAnswers(networkConf.serverMaxFileAnswers()),
            limits);
    try {
      this.transport =
          new TransportServer(
              "sluice-server",
              networkConf,
              SluiceProtocol.INSTANCE,
              handler,
              conf.host(),
              conf.port(),
              networkConf.maxControlFrameSize(),
              memory,
              authGate(conf),
              this::misdirectedHttpAnswer);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      closeQuietly();
      throw new IOException("interrupted while binding port " + conf.port(), e);
    } catch (RuntimeException e) {
      closeQuietly();
      throw new IOException("Cannot bind " + conf.host() + ":" + conf.port() + ": " + e, e);
    }
    flowControl.attach(transport::setReading);
    metrics.registerTransport(transport);
    PrometheusSource.register(
        metricRegistry,
        advertisedHost + ":" + port(),
        conf.metrics().topApplications(),
        registry,
        dirs,
        memory);
    housekeeping.scheduleWithFixedDelay(
        this::checkDisks,
        conf.diskCheckIntervalMillis(),
        conf.diskCheckIntervalMillis(),
        TimeUnit.MILLISECONDS);
    if (conf.memoryTierMaxSplit() > 0) {
      long every = Math.max(100, Math.min(10_000, conf.memoryTierWritebackAfterMillis() / 4));
      housekeeping.scheduleWithFixedDelay(
          () ->
              registry.writeBackMemorySplits(
                  TimeUnit.MILLISECONDS.toNanos(conf.memoryTierWritebackAfterMillis())),
          every,
          every,
          TimeUnit.MILLISECONDS);
    }
    housekeeping.scheduleWithFixedDelay(
        this::expireApplications,
        conf.appExpiryCheckIntervalMillis(),
        conf.appExpiryCheckIntervalMillis(),
        TimeUnit.MILLISECONDS);
    LOG.info(
        "Sluice shuffle server serving {}:{} with data directories {} and memory max {} bytes;"
            + " started in {} ms; recovered from {}: {}",
        advertisedHost,
        port(),
        conf.dirs(),
        conf.memoryMax(),
        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos),
        state,
        recovery);
  }

  /** Visible for tests: checks every data directory now. */
  void checkDisks() {
    try {
      dirs.checkAll();
    } catch (RuntimeException e) {
      LOG.error("Data directory check failed", e);
    }
  }

  /** Visible for tests: the housekeeping thread, to hold it up as a slow disk probe would. */
  ScheduledExecutorService housekeeping() {
    return housekeeping;
  }

  /** Visible for tests: runs one expiry pass now. */
  void expireApplications() {
    try {
      registry
          .expire(conf.appTimeoutMillis(), () -> metrics.applicationsExpired().mark())
          .get(60, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException | RuntimeException e) {
      LOG.error("Application expiry check failed", e);
    }
  }

  public int port() {
    return transport.port();
  }

  /**
   * The port of this server's admin API ({@code sluice.metrics.port}), which an HTTP request sent
   * to the shuffle port is pointed to (421 Misdirected Request); -1, the default, when it has none.
   * The daemon and the aux service set it once the admin API listens.
   */
  public void setAdminPort(int port) {
    if (port < -1 || port > 65535) {
      throw new IllegalArgumentException("admin port must be -1 (none) or 0..65535, got " + port);
    }
    this.adminPort = port;
  }

  /** The JSON body of the answer to an HTTP request on the shuffle port (on an event loop). */
  private String misdirectedHttpAnswer() {
    int admin = adminPort;
    Map<String, Object> answer = new LinkedHashMap<>();
    if (admin > 0) {
      answer.put(
          "error",
          "this is the Sluice shuffle port; the admin API is at port "
              + admin
              + " (sluice.metrics.port)");
      answer.put("adminPort", admin);
    } else {
      answer.put(
          "error",
          "this is the Sluice shuffle port; this server serves no admin API (sluice.metrics.port"
              + " is -1 or could not be bound)");
    }
    return Json.write(answer);
  }

  /** The host name clients should use for this server. */
  public String host() {
    return advertisedHost;
  }

  /** Direct memory the server's Netty buffers in use take (see {@link TransportServer}). */
  public long nettyPinnedDirectMemory() {
    return transport.pinnedDirectMemory();
  }

  /** Open connections to this server. */
  public int connectionCount() {
    return transport.connectionCount();
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

  /** Read streams open per application. */
  public StreamQuota streamQuota() {
    return streamQuota;
  }

  /** Map partition read streams and the IO schedulers of the data directories. */
  public MapStreams mapStreams() {
    return mapStreams;
  }

  public ShuffleRegistry registry() {
    return registry;
  }

  /**
   * Takes the server out of service for maintenance: it takes no new shuffle and no new split
   * (clients place new data elsewhere; pushes to its splits are answered HARD_SPLIT, so writers
   * move those partitions on), commits its open splits with all they accepted, lets map partitions
   * already placed here finish, and goes on serving reads until the applications that hold data
   * here end or expire ({@link Lifecycle#DRAINED}). Idempotent.
   *
   * @return completes with the number of splits committed by this call
   */
  public CompletableFuture<Integer> decommission() {
    boolean first = !registry.isDecommissioning();
    if (first) {
      LOG.info(
          "Decommissioning the Sluice shuffle server on port {}: no new shuffles or splits; {}"
              + " shuffle(s) of {} application(s) are served until they end",
          port(),
          registry.shuffleCount(),
          registry.applicationCount());
    }
    return registry
        .decommission()
        .thenApply(
            committed -> {
              if (first) {
                LOG.info(
                    "Decommissioning the server on port {}: committed {} open split(s)",
                    port(),
                    committed.size());
              }
              return committed.size();
            });
  }

  /**
   * Stops after a drain: decommissions the server and waits, for at most {@code timeoutMillis},
   * until no application holds data here, then {@link #close() stops}. 0 stops at once.
   */
  public void drainThenClose(long timeoutMillis) {
    if (timeoutMillis > 0 && !closed) {
      long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
      decommission();
      long nextLog = System.nanoTime();
      while (lifecycle() != Lifecycle.DRAINED && System.nanoTime() < deadline) {
        if (System.nanoTime() - nextLog >= 0) {
          LOG.info(
              "Draining the server on port {} before it stops: {} shuffle(s) of {} application(s)"
                  + " left; stopping anyway in {} s (sluice.shutdown.drainTimeout)",
              port(),
              registry.shuffleCount(),
              registry.applicationCount(),
              TimeUnit.NANOSECONDS.toSeconds(deadline - System.nanoTime()));
          nextLog = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        }
        try {
          Thread.sleep(100);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          break;
        }
      }
      LOG.info(
          "Server on port {} {} before stopping",
          port(),
          lifecycle() == Lifecycle.DRAINED ? "drained" : "did not drain");
    }
    close();
  }

  /** Ends a decommission: the server takes new shuffles again. Idempotent. */
  public void cancelDecommission() {
    if (registry.isDecommissioning()) {
      registry.cancelDecommission();
      LOG.info("Decommission of the server on port {} cancelled: it takes new shuffles", port());
    }
  }

  public Lifecycle lifecycle() {
    if (!registry.isDecommissioning()) {
      return Lifecycle.SERVING;
    }
    return registry.shuffleCount() == 0 ? Lifecycle.DRAINED : Lifecycle.DECOMMISSIONING;
  }

  public long uptimeMillis() {
    return clock.millis() - startedAtMillis;
  }

  /** Read streams open now (reduce-partition splits and map partitions). */
  public int openStreamCount() {
    return streams.openCount() + mapStreams.openCount();
  }

  /** What this server restored from its state store when it started. */
  public StateRecovery.Summary recovery() {
    return recovery;
  }

  /**
   * Graceful stop: answers new pushes HARD_SPLIT, commits and records every open split with all it
   * accepted (for at most {@code sluice.shutdown.timeout}), then closes the port and every
   * connection, deletes the files of splits that did not commit (no half-written file is left
   * behind), lets queued flushes finish, stops the threads and closes the state store. Committed
   * files stay and are served again after a restart. Idempotent.
   */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    long start = System.nanoTime();
    int port = port();
    LOG.info(
        "Stopping the Sluice shuffle server on port {}: new pushes are answered HARD_SPLIT and"
            + " the open splits are committed",
        port);
    finishMapPartitions(conf.shutdownTimeoutMillis() / 2);
    List<CommittedSplitFile> committed = commitOpenSplits();
    writeBackMemoryTier();
    long committedNanos = System.nanoTime() - start;
    closeQuietly();
    long bytes = 0;
    for (CommittedSplitFile f : committed) {
      bytes += f.length();
    }
    LOG.info(
        "Sluice shuffle server on port {} stopped in {} ms: committed {} open split(s) of {} bytes"
            + " in {} ms; state kept in {}",
        port,
        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start),
        committed.size(),
        bytes,
        TimeUnit.NANOSECONDS.toMillis(committedNanos),
        state);
  }

  /** A map partition whose writer sent nothing for this long is not waited for at a stop. */
  private static final long WRITER_IDLE_NANOS = TimeUnit.SECONDS.toNanos(2);

  /**
   * Stop, first step: the Flink map partitions being written here may finish, for at most {@code
   * maxMillis} (half of {@code sluice.shutdown.timeout}), since a producer cut off in the middle
   * runs again from its start. Only writers at work count: one that sent nothing for two seconds (a
   * stalled or vanished producer) holds no stop. Meanwhile the server is decommissioned: new
   * shuffles go elsewhere (or wait for it, when it is the only one), pushes to new splits get
   * HARD_SPLIT and the open splits are committed, so reduce partitions move on at once. Map
   * partitions still being written after that are dropped below, and their producers rerun.
   */
  private void finishMapPartitions(long maxMillis) {
    int writing = registry.mapPartitionsBeingWrittenSince(System.nanoTime() - WRITER_IDLE_NANOS);
    if (writing == 0 || maxMillis <= 0) {
      return;
    }
    LOG.info(
        "Stopping: waiting up to {} ms (half of sluice.shutdown.timeout) for the {} map"
            + " partition(s) being written to commit",
        maxMillis,
        writing);
    registry.decommission();
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(maxMillis);
    while (writing > 0 && System.nanoTime() - deadline < 0) {
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
      writing = registry.mapPartitionsBeingWrittenSince(System.nanoTime() - WRITER_IDLE_NANOS);
    }
    if (writing > 0) {
      LOG.warn(
          "Stopping with {} map partition(s) still being written: they are dropped and their"
              + " producers run again",
          writing);
    }
  }

  /** Stop: what the memory tier holds goes to its files, so a restart serves it. */
  private void writeBackMemoryTier() {
    try {
      registry.writeBackMemorySplits(0).get(conf.shutdownTimeoutMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException | ExecutionException e) {
      LOG.error(
          "Writing the memory tier's splits to their files did not finish ({}); those not written"
              + " are lost and their shuffles will fail to commit after a restart",
          e.toString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private List<CommittedSplitFile> commitOpenSplits() {
    try {
      return registry
          .sealAndCommitOpenSplits()
          .get(conf.shutdownTimeoutMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      LOG.error(
          "The open splits did not all commit within {} ms (sluice.shutdown.timeout); the rest are"
              + " deleted and their shuffles will fail to commit",
          conf.shutdownTimeoutMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      LOG.error("Interrupted while committing the open splits; the rest are deleted");
    } catch (ExecutionException e) {
      LOG.error("Committing the open splits failed; the rest are deleted", e.getCause());
    }
    return List.of();
  }

  private void closeQuietly() {
    // connections first: a request that arrived while the readers below shut down would be
    // answered NOT_FOUND, which a client takes for lost data; a closed connection it takes for a
    // restart, and waits
    if (transport != null) {
      transport.close();
    }
    housekeeping.shutdownNow();
    flowControlExecutor.shutdownNow();
    rangeReads.close();
    chunkReader.close();
    mapStreams.close();
    try {
      registry.discardUncommitted().get(60, TimeUnit.SECONDS);
    } catch (Exception e) {
      LOG.warn("Discarding uncommitted splits did not finish: {}", e.toString());
    }
    dirs.close();
    state.close();
  }
}
