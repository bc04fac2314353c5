package io.sluice.flink;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.flink.api.common.JobID;
import org.apache.flink.metrics.SimpleCounter;
import org.apache.flink.runtime.checkpoint.channel.ChannelStateWriter;
import org.apache.flink.runtime.deployment.InputGateDeploymentDescriptor;
import org.apache.flink.runtime.executiongraph.IndexRange;
import org.apache.flink.runtime.io.network.TaskEventPublisher;
import org.apache.flink.runtime.io.network.partition.ResultPartitionID;
import org.apache.flink.runtime.io.network.partition.ResultPartitionManager;
import org.apache.flink.runtime.io.network.partition.ResultSubpartitionIndexSet;
import org.apache.flink.runtime.io.network.partition.consumer.InputChannel;
import org.apache.flink.runtime.io.network.partition.consumer.LocalInputChannel;
import org.apache.flink.runtime.io.network.partition.consumer.SingleInputGate;
import org.apache.flink.runtime.shuffle.ShuffleMaster;
import org.apache.flink.runtime.shuffle.ShuffleMasterSnapshot;
import org.apache.flink.runtime.shuffle.ShuffleMasterSnapshotContext;

/**
 * What differs between the Flink lines the plugin is built for, Flink 1.20 here (src/flink-2 holds
 * the 2.x one): how a gate's deployment descriptor names what it reads, the constructor of the
 * placeholder channels ({@link FlinkChannelShim}), and the form of a shuffle master's snapshot
 * and restore.
 */
final class FlinkLine {
  /** The Flink line these sources build. */
  static final String NAME = "1.20";

  /** Whether the jar built from these sources runs on Flink {@code version}: 1.20. */
  static boolean runsOn(String version) {
    return version.startsWith("1.20.");
  }

  private FlinkLine() {}

  /**
   * The producer partitions a gate reads, in Flink's channel order: on 1.20 every producer, each
   * with the gate's one subpartition range.
   *
   * @param producers the descriptors of {@code gate}, in its order
   */
  static List<ConsumedPartition> consumed(
      InputGateDeploymentDescriptor gate, List<SluiceShuffleDescriptor> producers) {
    IndexRange range = gate.getConsumedSubpartitionIndexRange();
    List<ConsumedPartition> consumed = new ArrayList<>(producers.size());
    for (SluiceShuffleDescriptor p : producers) {
      consumed.add(new ConsumedPartition(p, range.getStartIndex(), range.getEndIndex()));
    }
    return consumed;
  }

  static InputChannel placeholderChannel(
      SingleInputGate gate,
      int index,
      ResultPartitionID partition,
      int subpartition,
      ResultPartitionManager partitionManager,
      TaskEventPublisher taskEventPublisher) {
    return new LocalInputChannel(
        gate,
        index,
        partition,
        new ResultSubpartitionIndexSet(subpartition),
        partitionManager,
        taskEventPublisher,
        0,
        0,
        new SimpleCounter(),
        new SimpleCounter(),
        ChannelStateWriter.NO_OP);
  }

  /**
   * Has {@code master} snapshot its state, in this line's form.
   *
   * @param jobId ignored on 1.20, whose snapshots name no job
   */
  static void snapshot(
      ShuffleMaster<?> master,
      CompletableFuture<ShuffleMasterSnapshot> snapshot,
      ShuffleMasterSnapshotContext context,
      JobID jobId) {
    master.snapshotState(snapshot, context);
  }

  /**
   * Has {@code master} restore its state, in this line's form.
   *
   * @param jobId ignored on 1.20, whose snapshots name no job
   */
  static void restore(ShuffleMaster<?> master, List<ShuffleMasterSnapshot> snapshots, JobID jobId) {
    master.restoreState(snapshots);
  }
}
