package io.sluice.flink;

import java.io.IOException;
import org.apache.flink.runtime.io.network.TaskEventPublisher;
import org.apache.flink.runtime.io.network.buffer.BufferPool;
import org.apache.flink.runtime.io.network.buffer.NetworkBufferPool;
import org.apache.flink.runtime.io.network.partition.PartitionProducerStateProvider;
import org.apache.flink.runtime.io.network.partition.ResultPartitionID;
import org.apache.flink.runtime.io.network.partition.ResultPartitionManager;
import org.apache.flink.runtime.io.network.partition.ResultPartitionType;
import org.apache.flink.runtime.io.network.partition.consumer.InputChannel;
import org.apache.flink.runtime.io.network.partition.consumer.SingleInputGate;
import org.apache.flink.runtime.jobgraph.IntermediateDataSetID;
import org.apache.flink.runtime.throughput.ThroughputCalculator;
import org.apache.flink.util.clock.SystemClock;
import org.apache.flink.util.function.SupplierWithException;

/**
 * The one place that builds Flink-internal objects whose constructors change between Flink releases
 * (the constructors that differ are in {@link FlinkLine}): {@link SluiceInputGate#getChannel} must
 * return real {@link InputChannel}s, because Flink's task code walks a gate's channels (to inject
 * the channel state writer, on checkpoint start and stop, for channel infos). {@link
 * InputChannel}'s abstract methods are package-private, so the channels are {@code
 * LocalInputChannel}s on a placeholder {@link SingleInputGate} that is never set up: they carry the
 * channel's index, partition and subpartition, and no data ever passes through them.
 */
final class FlinkChannelShim {
  private final SingleInputGate placeholderGate;
  private final ResultPartitionType consumedPartitionType;
  private final ResultPartitionManager partitionManager;
  private final TaskEventPublisher taskEventPublisher;

  FlinkChannelShim(
      String owningTaskName,
      int gateIndex,
      IntermediateDataSetID consumedResultId,
      ResultPartitionType consumedPartitionType,
      int numChannels,
      PartitionProducerStateProvider producerStateProvider,
      NetworkBufferPool networkBufferPool,
      ResultPartitionManager partitionManager,
      TaskEventPublisher taskEventPublisher) {
    SupplierWithException<BufferPool, IOException> noPool =
        () -> {
          throw new IOException("the placeholder gate of a Sluice input gate has no buffers");
        };
    this.placeholderGate =
        new SingleInputGate(
            owningTaskName,
            gateIndex,
            consumedResultId,
            consumedPartitionType,
            numChannels,
            producerStateProvider,
            noPool,
            null,
            networkBufferPool,
            // the placeholder allocates one unpooled segment of this size; keep it small
            64,
            new ThroughputCalculator(SystemClock.getInstance()),
            null);
    this.consumedPartitionType = consumedPartitionType;
    this.partitionManager = partitionManager;
    this.taskEventPublisher = taskEventPublisher;
  }

  ResultPartitionType consumedPartitionType() {
    return consumedPartitionType;
  }

  /** A channel that stands for {@code subpartition} of {@code partition} at {@code index}. */
  InputChannel channel(int index, ResultPartitionID partition, int subpartition) {
    return FlinkLine.placeholderChannel(
        placeholderGate, index, partition, subpartition, partitionManager, taskEventPublisher);
  }
}
