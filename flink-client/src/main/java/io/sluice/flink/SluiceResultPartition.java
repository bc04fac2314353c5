package io.sluice.flink;

import io.sluice.client.ClientContext;
import io.sluice.client.mappartition.ReplicatedMapPartitionWriter;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import org.apache.flink.core.memory.MemorySegment;
import org.apache.flink.runtime.checkpoint.CheckpointException;
import org.apache.flink.runtime.event.AbstractEvent;
import org.apache.flink.runtime.io.network.api.EndOfData;
import org.apache.flink.runtime.io.network.api.EndOfPartitionEvent;
import org.apache.flink.runtime.io.network.api.StopMode;
import org.apache.flink.runtime.io.network.api.serialization.EventSerializer;
import org.apache.flink.runtime.io.network.buffer.BufferPool;
import org.apache.flink.runtime.io.network.partition.BufferAvailabilityListener;
import org.apache.flink.runtime.io.network.partition.ResultPartition;
import org.apache.flink.runtime.io.network.partition.ResultPartitionManager;
import org.apache.flink.runtime.io.network.partition.ResultPartitionType;
import org.apache.flink.runtime.io.network.partition.ResultSubpartitionView;
import org.apache.flink.util.function.SupplierWithException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes one Flink result partition to a Sluice server as one map partition (to two, primary and
 * replica, with {@code sluice.replication.factor} 2: see {@link ReplicatedMapPartitionWriter},
 * which goes on with one copy when the other's server fails). Records are collected in a {@link
 * RegionSortBuffer} made of all but one of this partition's network buffers; when it is full it
 * goes out as one region, sorted by subpartition (the last buffer stages the copies). Broadcast
 * records make broadcast regions, stored once for every subpartition; a record larger than the
 * whole sort buffer is a region of its own; an event ends the current region and goes out in a
 * broadcast region of its own. {@link #finish()} flushes and waits until the server committed.
 * Consumers read from the server, never from this TaskManager.
 *
 * <p>Called by the task thread, except {@link #fail}/{@link #release} which Flink may call from a
 * canceling thread: those only mark the partition released; the task thread frees the memory and
 * the server side in {@link #close()}.
 */
public final class SluiceResultPartition extends ResultPartition {
  private static final Logger LOG = LoggerFactory.getLogger(SluiceResultPartition.class);

  private final ClientContext context;
  private final SluiceShuffleDescriptor descriptor;
  private final int segmentSize;
  private final List<MemorySegment> segments = new ArrayList<>();
  private MemorySegment staging;
  private RegionSortBuffer sortBuffer;
  private boolean sortBufferBroadcast;
  private ReplicatedMapPartitionWriter writer;
  private boolean endOfDataNotified;
  private long regions;
  private volatile boolean released;
  private boolean closed;

  public SluiceResultPartition(
      String owningTaskName,
      int partitionIndex,
      SluiceShuffleDescriptor descriptor,
      ResultPartitionType partitionType,
      int numSubpartitions,
      int numTargetKeyGroups,
      ResultPartitionManager partitionManager,
      SupplierWithException<BufferPool, IOException> bufferPoolFactory,
      ClientContext context,
      int segmentSize) {
    super(
        owningTaskName,
        partitionIndex,
        descriptor.getResultPartitionID(),
        partitionType,
        numSubpartitions,
        numTargetKeyGroups,
        partitionManager,
        null, // the core client compresses each block
        bufferPoolFactory);
    this.context = context;
    this.descriptor = descriptor;
    this.segmentSize = segmentSize;
  }

  /** Takes every buffer of the pool for good (a fixed-size pool), then opens the writer. */
  @Override
  protected void setupInternal() throws IOException {
    int required = bufferPool.getNumberOfRequiredMemorySegments();
    if (required < 2) {
      throw new IOException(
          descriptor.mapPartitionId()
              + ": a writer needs at least two network buffers, got "
              + required
              + "; raise "
              + FlinkClientConf.REGION_SIZE);
    }
    try {
      while (segments.size() < required) {
        segments.add(bufferPool.requestMemorySegmentBlocking());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      recycleSegments();
      throw new IOException("Interrupted while taking network buffers for " + descriptor, e);
    }
    staging = segments.get(0);
    sortBuffer = new RegionSortBuffer(segments.subList(1, segments.size()), numSubpartitions);
    writer =
        new ReplicatedMapPartitionWriter(
            context,
            descriptor.mapPartitionId(),
            descriptor.servers(),
            numSubpartitions,
            segmentSize);
    LOG.info(
        "{}: writing {} ({} subpartitions, regions of up to {} bytes) to {}",
        getOwningTaskName(),
        descriptor.mapPartitionId(),
        numSubpartitions,
        (long) (segments.size() - 1) * segmentSize,
        descriptor.serverList());
  }

  @Override
  public void emitRecord(ByteBuffer record, int targetSubpartition) throws IOException {
    checkWritable();
    int length = record.remaining();
    resultPartitionBytes.inc(targetSubpartition, length);
    numBytesOut.inc(length);
    append(record, targetSubpartition, false);
  }

  @Override
  public void broadcastRecord(ByteBuffer record) throws IOException {
    checkWritable();
    int length = record.remaining();
    resultPartitionBytes.incAll(length);
    numBytesOut.inc(length);
    append(record, 0, true);
  }

  private void append(ByteBuffer record, int subpartition, boolean broadcast) throws IOException {
    if (sortBufferBroadcast != broadcast) {
      flushRegion();
      sortBufferBroadcast = broadcast;
    }
    if (sortBuffer.append(record, subpartition)) {
      return;
    }
    flushRegion();
    if (sortBuffer.fitsWhenEmpty(record.remaining())) {
      sortBuffer.append(record, subpartition);
      return;
    }
    // larger than the whole sort buffer: a region of its own, straight from Flink's buffer
    writer.startRegion(broadcast);
    writer.write(subpartition, record);
    writer.finishRegion();
    regions++;
    numBuffersOut.inc();
  }

  /** Writes what the sort buffer holds as one region, if anything. */
  private void flushRegion() throws IOException {
    if (sortBuffer.isEmpty()) {
      return;
    }
    writer.startRegion(sortBufferBroadcast);
    int calls = sortBuffer.drainTo(writer::write, staging);
    writer.finishRegion();
    regions++;
    numBuffersOut.inc(calls);
  }

  /**
   * Ends the current region and writes the event in a broadcast region of its own. The end of the
   * partition is not written: readers deliver it at the end of every channel.
   */
  @Override
  public void broadcastEvent(AbstractEvent event, boolean isPriorityEvent) throws IOException {
    checkWritable();
    if (event instanceof EndOfPartitionEvent) {
      return;
    }
    flushRegion();
    ByteBuffer serialized = EventSerializer.toSerializedEvent(event);
    writer.startRegion(true);
    writer.writeEvent(0, serialized);
    writer.finishRegion();
    regions++;
  }

  @Override
  public void notifyEndOfData(StopMode mode) throws IOException {
    if (!endOfDataNotified) {
      broadcastEvent(new EndOfData(mode), false);
      endOfDataNotified = true;
    }
  }

  /** Consumers read from the server, after this partition finished: nothing to wait for. */
  @Override
  public CompletableFuture<Void> getAllDataProcessedFuture() {
    return CompletableFuture.completedFuture(null);
  }

  /** Flushes the last region and waits until the server committed the map partition. */
  @Override
  public void finish() throws IOException {
    checkWritable();
    flushRegion();
    long stored = writer.commit();
    super.finish();
    LOG.info(
        "{}: committed {} on {}: {} regions, {} bytes stored",
        getOwningTaskName(),
        descriptor.mapPartitionId(),
        writer.committedOn().stream().map(ClientContext::format).collect(Collectors.joining(",")),
        regions,
        stored);
  }

  private void checkWritable() throws IOException {
    checkInProduceState();
    if (released) {
      throw new IOException(descriptor.mapPartitionId() + " was released: the task is canceled");
    }
  }

  /** Marks the partition released; may run on a canceling thread, so {@link #close} frees. */
  @Override
  protected void releaseInternal() {
    released = true;
  }

  /** Frees the network buffers and drops the map partition on the server unless committed. */
  @Override
  public void close() {
    synchronized (segments) {
      if (closed) {
        return;
      }
      closed = true;
    }
    try {
      if (writer != null) {
        writer.close();
      }
    } finally {
      recycleSegments();
      // nothing is served from this TaskManager: no reason to keep it registered
      partitionManager.releasePartition(partitionId, null);
      super.close();
    }
  }

  private void recycleSegments() {
    for (MemorySegment segment : segments) {
      bufferPool.recycle(segment);
    }
    segments.clear();
    staging = null;
    sortBuffer = null;
  }

  @Override
  protected ResultSubpartitionView createSubpartitionView(
      int index, BufferAvailabilityListener availabilityListener) {
    throw new UnsupportedOperationException(
        "Sluice partitions are read from Sluice servers, not from TaskManagers; the consumer of "
            + descriptor
            + " needs the Sluice shuffle service too");
  }

  @Override
  public void flushAll() {}

  @Override
  public void flush(int subpartitionIndex) {}

  @Override
  public void alignedBarrierTimeout(long checkpointId) {}

  @Override
  public void abortCheckpoint(long checkpointId, CheckpointException cause) {}

  @Override
  public int getNumberOfQueuedBuffers() {
    return 0;
  }

  @Override
  public long getSizeOfQueuedBuffersUnsafe() {
    return 0;
  }

  @Override
  public int getNumberOfQueuedBuffers(int targetSubpartition) {
    return 0;
  }

  /** Always available: the sort buffer is flushed synchronously when full. */
  @Override
  public CompletableFuture<?> getAvailableFuture() {
    return AVAILABLE;
  }

  @Override
  public String toString() {
    return "SluiceResultPartition " + descriptor;
  }
}
