package io.sluice.flink;

import io.sluice.client.ApplicationLimitException;
import io.sluice.client.ClientContext;
import io.sluice.client.mappartition.MapPartitionReader;
import io.sluice.client.mappartition.ReplicatedMapPartitionReader;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.flink.core.memory.MemorySegment;
import org.apache.flink.runtime.checkpoint.channel.InputChannelInfo;
import org.apache.flink.runtime.event.AbstractEvent;
import org.apache.flink.runtime.event.TaskEvent;
import org.apache.flink.runtime.execution.CancelTaskException;
import org.apache.flink.runtime.io.network.api.EndOfData;
import org.apache.flink.runtime.io.network.api.EndOfPartitionEvent;
import org.apache.flink.runtime.io.network.api.StopMode;
import org.apache.flink.runtime.io.network.api.serialization.EventSerializer;
import org.apache.flink.runtime.io.network.buffer.Buffer;
import org.apache.flink.runtime.io.network.buffer.BufferPool;
import org.apache.flink.runtime.io.network.buffer.NetworkBuffer;
import org.apache.flink.runtime.io.network.partition.PartitionNotFoundException;
import org.apache.flink.runtime.io.network.partition.ResultPartitionType;
import org.apache.flink.runtime.io.network.partition.consumer.BufferOrEvent;
import org.apache.flink.runtime.io.network.partition.consumer.IndexedInputGate;
import org.apache.flink.runtime.io.network.partition.consumer.InputChannel;
import org.apache.flink.util.function.SupplierWithException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads one Flink input: a subpartition range of every producer partition it consumes (the same
 * range of each, or on Flink 2.x, when the adaptive batch scheduler splits a skewed subpartition
 * among consumers, a range per producer), from the Sluice servers that hold them. There is one
 * channel per (producer, subpartition), producer-major; one {@link ReplicatedMapPartitionReader}
 * per producer covers its whole range, from the partition's primary copy or, when that read fails
 * and there is a replica ({@code sluice.replication.factor} 2), from where it stopped on the
 * replica. Readers open on the first poll, at most {@code sluice.flink.readConcurrency} at once,
 * the next as one ends. Each data block is decompressed into a buffer of this gate's own pool and
 * handed over as a buffer of its channel; event blocks become events. When a reader ends, every
 * channel of its producer gets an {@link EndOfPartitionEvent}. A read that fails on every copy is a
 * {@link PartitionNotFoundException} of that producer's partition, so Flink runs the producer
 * again.
 *
 * <p>Polled by the task thread; {@link #close} may come from a canceling thread, readers' {@code
 * onAvailable} callbacks from network threads.
 */
public final class SluiceInputGate extends IndexedInputGate {
  private static final Logger LOG = LoggerFactory.getLogger(SluiceInputGate.class);

  private final String owningTaskName;
  private final int gateIndex;
  private final ResultPartitionType consumedPartitionType;
  private final List<Producer> producers;
  private final InputChannel[] channels;
  private final SupplierWithException<BufferPool, IOException> bufferPoolFactory;
  private final ClientContext context;
  private final int readConcurrency;
  private final int segmentSize;

  private final Object lock = new Object();
  private final Object availabilityLock = new Object();
  private final AtomicLong signals = new AtomicLong();
  private final ArrayDeque<Producer> waiting = new ArrayDeque<>();
  private final List<Producer> reading = new ArrayList<>();
  private final ArrayDeque<InputChannelInfo> endsToDeliver = new ArrayDeque<>();
  private final BitSet endedChannels;
  private final BitSet endOfDataChannels;
  private boolean drainOnEndOfData = true;
  private int cursor;
  private int producersDone;
  private BufferPool bufferPool;
  private MemorySegment spare;
  private boolean closed;

  /** One producer partition, the subpartitions read from it, and its read stream. */
  private static final class Producer {
    final SluiceShuffleDescriptor descriptor;
    final ConsumedPartition range;
    final int firstChannel;
    ReplicatedMapPartitionReader reader;

    Producer(ConsumedPartition range, int firstChannel) {
      this.descriptor = range.descriptor();
      this.range = range;
      this.firstChannel = firstChannel;
    }
  }

  /**
   * @param consumed the producer partitions and the subpartitions read from each, in Flink's order
   *     (the same range of every producer, or on Flink 2.x, where the adaptive batch scheduler
   *     splits a skewed subpartition, a range per producer)
   */
  public SluiceInputGate(
      String owningTaskName,
      int gateIndex,
      List<ConsumedPartition> consumed,
      FlinkChannelShim channelShim,
      SupplierWithException<BufferPool, IOException> bufferPoolFactory,
      ClientContext context,
      int readConcurrency,
      int segmentSize) {
    if (consumed.isEmpty()) {
      throw new IllegalArgumentException(owningTaskName + ": an input gate needs producers");
    }
    this.owningTaskName = owningTaskName;
    this.gateIndex = gateIndex;
    this.consumedPartitionType = channelShim.consumedPartitionType();
    this.bufferPoolFactory = bufferPoolFactory;
    this.context = context;
    this.readConcurrency = readConcurrency;
    this.segmentSize = segmentSize;
    this.producers = new ArrayList<>(consumed.size());
    int numChannels = 0;
    for (ConsumedPartition c : consumed) {
      Producer producer = new Producer(c, numChannels);
      producers.add(producer);
      waiting.add(producer);
      numChannels += producer.range.width();
    }
    this.channels = new InputChannel[numChannels];
    for (Producer p : producers) {
      for (int s = 0; s < p.range.width(); s++) {
        channels[p.firstChannel + s] =
            channelShim.channel(
                p.firstChannel + s,
                p.descriptor.getResultPartitionID(),
                p.range.startSubpartition() + s);
      }
    }
    this.endedChannels = new BitSet(channels.length);
    this.endOfDataChannels = new BitSet(channels.length);
  }

  @Override
  public void setup() throws IOException {
    bufferPool = bufferPoolFactory.get();
  }

  /** Nothing to request up front: readers open on the first poll. */
  @Override
  public void requestPartitions() {}

  @Override
  public Optional<BufferOrEvent> pollNext() throws IOException {
    synchronized (lock) {
      while (true) {
        if (closed) {
          throw new CancelTaskException(owningTaskName + ": input gate " + gateIndex + " closed");
        }
        long seen = signals.get();
        BufferOrEvent next = pollOnce();
        if (next != null) {
          return Optional.of(next);
        }
        if (isFinishedLocked()) {
          return Optional.empty();
        }
        synchronized (availabilityLock) {
          if (signals.get() == seen) {
            availabilityHelper.resetUnavailable();
            return Optional.empty();
          }
        }
        // something became available meanwhile: look again
      }
    }
  }

  @Override
  public Optional<BufferOrEvent> getNext() throws IOException, InterruptedException {
    while (true) {
      Optional<BufferOrEvent> next = pollNext();
      if (next.isPresent() || isFinished()) {
        return next;
      }
      try {
        getAvailableFuture().get();
      } catch (ExecutionException e) {
        throw new IOException(e.getCause());
      }
    }
  }

  /** Called from any thread when a reader or the buffer pool may have something for us. */
  private void signal() {
    signals.incrementAndGet();
    CompletableFuture<?> toComplete;
    synchronized (availabilityLock) {
      toComplete = availabilityHelper.getUnavailableToResetAvailable();
    }
    toComplete.complete(null);
  }

  private BufferOrEvent pollOnce() throws IOException {
    if (!endsToDeliver.isEmpty()) {
      return endOfPartition(endsToDeliver.poll());
    }
    while (reading.size() < readConcurrency && !waiting.isEmpty()) {
      open(waiting.poll());
    }
    for (int tried = 0; tried < reading.size(); tried++) {
      if (spare == null) {
        spare = bufferPool.requestMemorySegment();
        if (spare == null) {
          bufferPool.getAvailableFuture().thenRun(this::signal);
          return null;
        }
      }
      cursor = cursor % reading.size();
      Producer producer = reading.get(cursor);
      MapPartitionReader.Block block;
      try {
        block = producer.reader.poll();
        if (block != null) {
          return deliver(producer, block);
        }
      } catch (ApplicationLimitException e) {
        // the server holds the application to a limit: not lost, the task fails with it
        throw e;
      } catch (IOException e) {
        throw lost(producer, e);
      }
      if (producer.reader.isFinished()) {
        finished(producer);
        return endsToDeliver.isEmpty() ? null : endOfPartition(endsToDeliver.poll());
      }
      cursor++;
    }
    return null;
  }

  private void open(Producer producer) throws IOException {
    SluiceShuffleDescriptor d = producer.descriptor;
    try {
      producer.reader =
          ReplicatedMapPartitionReader.open(
              context,
              d.mapPartitionId(),
              d.servers(),
              producer.range.startSubpartition(),
              producer.range.endSubpartition(),
              this::signal);
    } catch (RuntimeException e) {
      throw lost(producer, new IOException(e.getMessage(), e));
    }
    reading.add(producer);
    LOG.debug(
        "{}: reading subpartitions [{}, {}] of {} from {}",
        owningTaskName,
        producer.range.startSubpartition(),
        producer.range.endSubpartition(),
        d.mapPartitionId(),
        d.serverList());
  }

  private void finished(Producer producer) {
    producer.reader.close();
    reading.remove(producer);
    producersDone++;
    for (int s = 0; s < producer.range.width(); s++) {
      endsToDeliver.add(channels[producer.firstChannel + s].getChannelInfo());
    }
  }

  private BufferOrEvent deliver(Producer producer, MapPartitionReader.Block block)
      throws IOException {
    int sub = block.subpartition();
    if (sub < producer.range.startSubpartition() || sub > producer.range.endSubpartition()) {
      throw new IOException(
          producer.descriptor.mapPartitionId()
              + " sent a block of subpartition "
              + sub
              + " to a reader of ["
              + producer.range.startSubpartition()
              + ", "
              + producer.range.endSubpartition()
              + "]");
    }
    InputChannelInfo channel =
        channels[producer.firstChannel + sub - producer.range.startSubpartition()].getChannelInfo();
    int length = block.length();
    if (block.isEvent()) {
      ByteBuffer serialized = ByteBuffer.allocate(length);
      block.readInto(serialized);
      serialized.flip();
      AbstractEvent event =
          EventSerializer.fromSerializedEvent(serialized, getClass().getClassLoader());
      if (event instanceof EndOfData) {
        endOfDataChannels.set(channel.getInputChannelIdx());
        drainOnEndOfData &= ((EndOfData) event).getStopMode() == StopMode.DRAIN;
      }
      return new BufferOrEvent(event, false, channel, true, length, false);
    }
    if (length > segmentSize) {
      throw new IOException(
          producer.descriptor.mapPartitionId() + " sent a block of " + length + " bytes");
    }
    MemorySegment segment = spare;
    spare = null;
    try {
      block.readInto(segment.wrap(0, length));
    } catch (IOException | RuntimeException e) {
      bufferPool.recycle(segment);
      throw e;
    }
    Buffer buffer = new NetworkBuffer(segment, bufferPool, Buffer.DataType.DATA_BUFFER, length);
    return new BufferOrEvent(buffer, channel, true, false);
  }

  private BufferOrEvent endOfPartition(InputChannelInfo channel) {
    endedChannels.set(channel.getInputChannelIdx());
    boolean more = !isFinishedLocked();
    if (!more) {
      signal(); // a finished gate must stay available
    }
    return new BufferOrEvent(EndOfPartitionEvent.INSTANCE, false, channel, more, 0, false);
  }

  private PartitionNotFoundException lost(Producer producer, IOException cause) {
    SluiceShuffleDescriptor d = producer.descriptor;
    LOG.warn(
        "{}: could not read subpartitions [{}, {}] of {} from {}; Flink reruns its producer: {}",
        owningTaskName,
        producer.range.startSubpartition(),
        producer.range.endSubpartition(),
        d.mapPartitionId(),
        d.serverList(),
        cause.toString());
    PartitionNotFoundException e = new PartitionNotFoundException(d.getResultPartitionID());
    e.addSuppressed(cause); // it has no constructor with a cause, and its cause is set (null)
    return e;
  }

  @Override
  public boolean isFinished() {
    synchronized (lock) {
      return isFinishedLocked();
    }
  }

  private boolean isFinishedLocked() {
    return producersDone == producers.size() && endsToDeliver.isEmpty();
  }

  @Override
  public EndOfDataStatus hasReceivedEndOfData() {
    synchronized (lock) {
      if (endOfDataChannels.cardinality() < channels.length) {
        return EndOfDataStatus.NOT_END_OF_DATA;
      }
      return drainOnEndOfData ? EndOfDataStatus.DRAINED : EndOfDataStatus.STOPPED;
    }
  }

  @Override
  public List<InputChannelInfo> getUnfinishedChannels() {
    synchronized (lock) {
      List<InputChannelInfo> unfinished = new ArrayList<>();
      for (int i = endedChannels.nextClearBit(0);
          i < channels.length;
          i = endedChannels.nextClearBit(i + 1)) {
        unfinished.add(channels[i].getChannelInfo());
      }
      return unfinished;
    }
  }

  @Override
  public int getGateIndex() {
    return gateIndex;
  }

  @Override
  public int getNumberOfInputChannels() {
    return channels.length;
  }

  @Override
  public InputChannel getChannel(int channelIndex) {
    return channels[channelIndex];
  }

  @Override
  public void triggerDebloating() {}

  @Override
  public void sendTaskEvent(TaskEvent event) {
    throw new UnsupportedOperationException(
        "Sluice input gates do not send task events upstream (iterations need Flink's default"
            + " shuffle service)");
  }

  @Override
  public void resumeConsumption(InputChannelInfo channelInfo) {}

  @Override
  public void acknowledgeAllRecordsProcessed(InputChannelInfo channelInfo) {}

  @Override
  public CompletableFuture<Void> getStateConsumedFuture() {
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public void finishReadRecoveredState() {}

  /**
   * Flink 2.x asks (1.20 has no such method): never, a Sluice input carries no recovered channel
   * state (batch exchanges are not checkpointed).
   */
  public boolean isCheckpointingDuringRecoveryEnabled() {
    return false;
  }

  /** Flink 2.x's setter for the above (1.20 has none): ignored, for the same reason. */
  public void setCheckpointingDuringRecoveryEnabled(boolean enabled) {}

  /** Flink 2.x asks (1.20 has no such method): the type of the exchange read, a blocking one. */
  public ResultPartitionType getConsumedPartitionType() {
    return consumedPartitionType;
  }

  /** Flink 2.x (1.20 has no such method): a Sluice gate never pauses consumption; nothing to do. */
  public void resumeGateConsumption() {}

  /** Flink 2.x (1.20 has no such method): no recovered buffers to filter, so already complete. */
  public CompletableFuture<Void> getBufferFilteringCompleteFuture() {
    return CompletableFuture.completedFuture(null);
  }

  /**
   * Closes every read stream and returns this gate's buffers; idempotent. Returns once the servers
   * have let the streams go (at most the request timeout, less for a silent server), so that a task
   * started next in this JVM, such as this one's next attempt, is not refused its own opens at
   * {@code sluice.app.maxOpenStreams} by streams still counted for this one.
   */
  @Override
  public void close() {
    List<CompletableFuture<Void>> closing = new ArrayList<>();
    synchronized (lock) {
      if (closed) {
        return;
      }
      closed = true;
      for (Producer producer : reading) {
        producer.reader.close();
        closing.add(producer.reader.closedOnServer());
      }
      reading.clear();
      if (spare != null) {
        bufferPool.recycle(spare);
        spare = null;
      }
      if (bufferPool != null) {
        bufferPool.lazyDestroy();
      }
    }
    signal();
    awaitClosed(closing);
  }

  /**
   * Waits, bounded, for streams closed to be gone from their servers; their failures are not ours.
   */
  private void awaitClosed(List<CompletableFuture<Void>> closing) {
    if (closing.isEmpty()) {
      return;
    }
    try {
      CompletableFuture.allOf(closing.toArray(new CompletableFuture<?>[0]))
          .get(context.networkConf().requestTimeoutMillis() + 1000, TimeUnit.MILLISECONDS);
    } catch (ExecutionException | TimeoutException e) {
      LOG.debug("{}: closing its read streams did not finish: {}", owningTaskName, e.toString());
    } catch (InterruptedException e) {
      // cancelled: Flink interrupts the task; it goes on without waiting
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public String toString() {
    return "SluiceInputGate "
        + owningTaskName
        + " #"
        + gateIndex
        + " ("
        + producers.size()
        + " producers, "
        + channels.length
        + " channels)";
  }
}
