package io.sluice.server;

import com.codahale.metrics.Counter;
import com.codahale.metrics.Gauge;
import com.codahale.metrics.Meter;
import com.codahale.metrics.MetricRegistry;
import com.codahale.metrics.Timer;
import io.sluice.network.TransportServer;
import io.sluice.server.memory.MemoryBudget;
import io.sluice.server.metrics.JvmMetrics;
import io.sluice.server.storage.DataDirectory;
import java.nio.file.Path;

/** The server's metrics; every name lives here. The registry is injected, never global. */
public final class ServerMetrics {
  public static final String PREFIX = "sluice.server.";

  private final MetricRegistry registry;
  private final Meter bytesPushed;
  private final Meter replicaBytesPushed;
  private final Meter bytesFlushed;
  private final Meter bytesRead;
  private final Meter writebacks;
  private final Meter writebackBytes;
  private final Meter pushesCongested;
  private final Meter softSplits;
  private final Meter badRequests;
  private final Meter mergedPushes;
  private final Meter batchesPushed;
  private final Meter singlePushes;
  private final Timer flushLatency;
  private final Timer commitLatency;
  private final Counter activeSplits;
  private final Counter mapReads;
  private final Counter mapReadsInOrder;
  private final Counter checksumFailures;
  private final Meter authFailures;
  private final Meter applicationsExpired;
  private final Meter memoryTierCommits;
  private final Meter memoryTierWritebacks;
  private final Meter memoryTierReads;
  private final Counter memoryTierSplits;
  private final Counter memoryTierBytes;
  private final Meter hdfsTierSplits;
  private final Meter hdfsTierBytes;
  private final Meter hdfsTierFailures;

  public ServerMetrics(MetricRegistry registry, MemoryBudget memory) {
    this.registry = registry;
    JvmMetrics.register(registry);
    this.bytesPushed = registry.meter(PREFIX + "bytesPushed");
    this.replicaBytesPushed = registry.meter(PREFIX + "replicaBytesPushed");
    this.bytesFlushed = registry.meter(PREFIX + "bytesFlushed");
    this.bytesRead = registry.meter(PREFIX + "bytesRead");
    this.writebacks = registry.meter(PREFIX + "writebacks");
    this.writebackBytes = registry.meter(PREFIX + "writebackBytes");
    this.memoryTierCommits = registry.meter(PREFIX + "memoryTierCommits");
    this.memoryTierWritebacks = registry.meter(PREFIX + "memoryTierWritebacks");
    this.memoryTierReads = registry.meter(PREFIX + "memoryTierReads");
    this.memoryTierSplits = registry.counter(PREFIX + "memoryTierSplits");
    this.memoryTierBytes = registry.counter(PREFIX + "memoryTierBytes");
    this.hdfsTierSplits = registry.meter(PREFIX + "hdfsTierSplits");
    this.hdfsTierBytes = registry.meter(PREFIX + "hdfsTierBytes");
    this.hdfsTierFailures = registry.meter(PREFIX + "hdfsTierFailures");
    this.pushesCongested = registry.meter(PREFIX + "pushesCongested");
    this.softSplits = registry.meter(PREFIX + "softSplits");
    this.badRequests = registry.meter(PREFIX + "badRequests");
    this.mergedPushes = registry.meter(PREFIX + "mergedPushes");
    this.batchesPushed = registry.meter(PREFIX + "batchesPushed");
    this.singlePushes = registry.meter(PREFIX + "singlePushes");
    this.flushLatency = registry.timer(PREFIX + "flushLatency");
    this.commitLatency = registry.timer(PREFIX + "commitLatency");
    this.activeSplits = registry.counter(PREFIX + "activeSplits");
    this.mapReads = registry.counter(PREFIX + "mapReads");
    this.mapReadsInOrder = registry.counter(PREFIX + "mapReadsInOrder");
    this.checksumFailures = registry.counter(PREFIX + "checksumFailures");
    this.authFailures = registry.meter(PREFIX + "authFailures");
    this.applicationsExpired = registry.meter(PREFIX + "applicationsExpired");
    registry.register(PREFIX + "memoryHeld", (Gauge<Long>) memory::held);
    registry.register(PREFIX + "memoryPeak", (Gauge<Long>) memory::peak);
    registry.register(PREFIX + "memoryMax", (Gauge<Long>) memory::max);
    registry.register(PREFIX + "memoryPausedMillis", (Gauge<Long>) memory::pausedMillis);
    registry.register(PREFIX + "memoryState", (Gauge<String>) () -> memory.state().name());
  }

  /** Bytes flushed into one data directory. */
  public Meter directoryBytesFlushed(Path root) {
    return registry.meter(directoryPrefix(root) + "bytesFlushed");
  }

  /**
   * Health (0 healthy, 1 full, 2 failed), usage, checksum failures reported against its files and
   * whether that made it suspect (1) of one data directory.
   */
  public void registerDirectory(DataDirectory dir) {
    String prefix = directoryPrefix(dir.root());
    registry.register(prefix + "health", (Gauge<Integer>) () -> dir.health().ordinal());
    registry.register(prefix + "usage", (Gauge<Double>) dir::usage);
    registry.register(prefix + "checksumFailures", (Gauge<Long>) dir::checksumFailures);
    registry.register(prefix + "suspect", (Gauge<Integer>) () -> dir.isSuspect() ? 1 : 0);
  }

  private static String directoryPrefix(Path root) {
    return PREFIX + "dir." + root.toString().replaceAll("[^A-Za-z0-9_-]+", "_") + ".";
  }

  public MetricRegistry registry() {
    return registry;
  }

  /** Bytes of replica pushes taken (second copies, sluice.replication.factor 2). */
  public Meter replicaBytesPushed() {
    return replicaBytesPushed;
  }

  public Meter bytesPushed() {
    return bytesPushed;
  }

  /** Batches of pushed data taken: each part of a merged push, each Flink frame. */
  public Meter batchesPushed() {
    return batchesPushed;
  }

  public Meter bytesFlushed() {
    return bytesFlushed;
  }

  /**
   * Writebacks that completed: a {@code force} of a file being written, run once it held {@code
   * sluice.flush.writebackBytes} unsynced bytes, ahead of the commit's fsync.
   */
  public Meter writebacks() {
    return writebacks;
  }

  /** Bytes written to files since their previous writeback, counted when a writeback completes. */
  public Meter writebackBytes() {
    return writebackBytes;
  }

  /** Splits committed in the memory tier (sluice.storage.memory.maxSplitSize). */
  public Meter memoryTierCommits() {
    return memoryTierCommits;
  }

  /** Memory-tier splits written to their files (pressure, age or a stop). */
  public Meter memoryTierWritebacks() {
    return memoryTierWritebacks;
  }

  /** Chunks served from the memory tier. */
  public Meter memoryTierReads() {
    return memoryTierReads;
  }

  /** Splits held in the memory tier now. */
  public Counter memoryTierSplits() {
    return memoryTierSplits;
  }

  /** Bytes held in the memory tier now (also counted in the memory budget). */
  public Counter memoryTierBytes() {
    return memoryTierBytes;
  }

  /** Splits moved to the distributed tier (sluice.storage.policy names hdfs). */
  public Meter hdfsTierSplits() {
    return hdfsTierSplits;
  }

  /** Bytes moved to the distributed tier. */
  public Meter hdfsTierBytes() {
    return hdfsTierBytes;
  }

  /** Splits that could not be moved to the distributed tier and stayed on local disk. */
  public Meter hdfsTierFailures() {
    return hdfsTierFailures;
  }

  public Meter bytesRead() {
    return bytesRead;
  }

  public Meter pushesCongested() {
    return pushesCongested;
  }

  /** Pushes taken with SOFT_SPLIT (split past its threshold or on a full disk). */
  public Meter softSplits() {
    return softSplits;
  }

  public Meter badRequests() {
    return badRequests;
  }

  /** Merged push requests (PushMerged) taken apart, each carrying several partitions' batches. */
  public Meter mergedPushes() {
    return mergedPushes;
  }

  /** Push requests (PushData) carrying one batch each. */
  public Meter singlePushes() {
    return singlePushes;
  }

  public Timer flushLatency() {
    return flushLatency;
  }

  public Timer commitLatency() {
    return commitLatency;
  }

  public Counter activeSplits() {
    return activeSplits;
  }

  /** Buffers read from map partition files (Flink). */
  public Counter mapReads() {
    return mapReads;
  }

  /**
   * Map partition reads that continued forward in the file the previous read was in (or moved to
   * another file): with mapReads, how sequential the IO scheduler kept the disk.
   */
  public Counter mapReadsInOrder() {
    return mapReadsInOrder;
  }

  /**
   * Pushed batches and map partition blocks whose CRC32C did not verify on receipt ({@code
   * sluice.integrity.verifyOnPush}); each was answered BAD_REQUEST.
   */
  public Counter checksumFailures() {
    return checksumFailures;
  }

  /** Requests refused FORBIDDEN and failed authentications (sluice.auth.enabled). */
  /** Applications whose data was deleted because nobody named them for sluice.app.timeout. */
  public Meter applicationsExpired() {
    return applicationsExpired;
  }

  public Meter authFailures() {
    return authFailures;
  }

  /** Read streams open on the server. */
  public void registerOpenStreams(Gauge<Integer> openStreams) {
    registry.register(PREFIX + "openStreams", openStreams);
  }

  /**
   * What the server's own Netty pool holds in direct memory, next to what the budget counts: {@code
   * nettyDirectMemoryPinned} is what buffers in use take (bodies, socket reads, answers in flight),
   * {@code nettyDirectMemoryUsed} what the pool took from the JVM (whole 4 MiB chunks). Also the
   * open connections.
   */
  public void registerTransport(TransportServer transport) {
    registry.register(
        PREFIX + "nettyDirectMemoryPinned", (Gauge<Long>) transport::pinnedDirectMemory);
    registry.register(PREFIX + "nettyDirectMemoryUsed", (Gauge<Long>) transport::usedDirectMemory);
    registry.register(PREFIX + "openConnections", (Gauge<Integer>) transport::connectionCount);
  }
}
