package io.sluice.flink;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.flink.api.common.JobID;
import org.apache.flink.metrics.Counter;
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
 * What differs between the Flink lines the plugin is built for, Flink 2.x here (src/flink-1 holds
 * the 1.20 one): how a gate's deployment descriptor names what it reads, the constructor of the
 * placeholder channels ({@link FlinkChannelShim}), and the form of a shuffle master's snapshot
 * and restore.
 *
 * <p>One jar serves Flink 2.0 to 2.3. It is built against 2.3; of the Flink internals it uses, only
 * {@code LocalInputChannel}'s constructor differs between them (2.3 added the channel's recovered
 * buffers), so that one is looked up when the class loads. 2.3's additions to {@code
 * IndexedInputGate} are plain methods of the gate on the earlier releases.
 */
final class FlinkLine {
  /** The Flink releases these sources build a jar for. */
  static final String NAME = "2.0 to 2.3";

  /** Whether the jar built from these sources runs on Flink {@code version}. */
  static boolean runsOn(String version) {
    return version.matches("2\\.[0-3]\\..*");
  }

  /**
   * {@code LocalInputChannel}'s constructor: 2.3's, which also takes the recovered buffers, or the
   * one of 2.0 to 2.2. Looked up when first used, so the version check ({@link #runsOn}) comes
   * first on a Flink that has neither.
   */
  private static final class LocalChannelConstructor {
    static final MethodHandle HANDLE = find();

    private static MethodHandle find() {
      List<Class<?>> parameters =
          new ArrayList<>(
              List.of(
                  SingleInputGate.class,
                  int.class,
                  ResultPartitionID.class,
                  ResultSubpartitionIndexSet.class,
                  ResultPartitionManager.class,
                  TaskEventPublisher.class,
                  int.class,
                  int.class,
                  Counter.class,
                  Counter.class,
                  ChannelStateWriter.class));
      MethodHandles.Lookup lookup = MethodHandles.publicLookup();
      try {
        List<Class<?>> of23 = new ArrayList<>(parameters);
        of23.add(ArrayDeque.class);
        return lookup.findConstructor(
            LocalInputChannel.class, MethodType.methodType(void.class, of23));
      } catch (NoSuchMethodException | IllegalAccessException e) {
        try {
          return lookup.findConstructor(
              LocalInputChannel.class, MethodType.methodType(void.class, parameters));
        } catch (NoSuchMethodException | IllegalAccessException e2) {
          IllegalStateException error =
              new IllegalStateException(
                  "this Flink has neither LocalInputChannel constructor the Sluice plugin knows"
                      + " (of Flink 2.0 to 2.2, or of 2.3)",
                  e2);
          error.addSuppressed(e);
          throw error;
        }
      }
    }
  }

  private FlinkLine() {}

  /**
   * The producer partitions a gate reads, in Flink's channel order: on 2.x the gate consumes ranges
   * of its descriptors, each descriptor with a subpartition range of its own. The adaptive batch
   * scheduler gives a consumer of a skewed subpartition a few producers' share of it this way, and
   * a consumer of many small subpartitions several ranges.
   *
   * @param producers the descriptors of {@code gate}, all of them, in its order
   */
  static List<ConsumedPartition> consumed(
      InputGateDeploymentDescriptor gate, List<SluiceShuffleDescriptor> producers) {
    List<ConsumedPartition> consumed = new ArrayList<>(gate.getNumConsumedShuffleDescriptors());
    for (IndexRange descriptors : gate.getConsumedShuffleDescriptorRanges()) {
      for (int i = descriptors.getStartIndex(); i <= descriptors.getEndIndex(); i++) {
        IndexRange subpartitions = gate.getConsumedSubpartitionRange(i);
        consumed.add(
            new ConsumedPartition(
                producers.get(i), subpartitions.getStartIndex(), subpartitions.getEndIndex()));
      }
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
    List<Object> arguments =
        new ArrayList<>(
            List.of(
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
                ChannelStateWriter.NO_OP));
    if (LocalChannelConstructor.HANDLE.type().parameterCount() > arguments.size()) {
      arguments.add(new ArrayDeque<>());
    }
    try {
      return (InputChannel) LocalChannelConstructor.HANDLE.invokeWithArguments(arguments);
    } catch (RuntimeException | Error e) {
      throw e;
    } catch (Throwable e) {
      throw new IllegalStateException("creating a placeholder input channel failed", e);
    }
  }

  /**
   * Has {@code master} snapshot its state, in this line's form.
   *
   * @param jobId the job, which 2.x snapshots and restores one at a time
   */
  static void snapshot(
      ShuffleMaster<?> master,
      CompletableFuture<ShuffleMasterSnapshot> snapshot,
      ShuffleMasterSnapshotContext context,
      JobID jobId) {
    master.snapshotState(snapshot, context, jobId);
  }

  /**
   * Has {@code master} restore its state, in this line's form.
   *
   * @param jobId the job, which 2.x snapshots and restores one at a time
   */
  static void restore(ShuffleMaster<?> master, List<ShuffleMasterSnapshot> snapshots, JobID jobId) {
    master.restoreState(snapshots, jobId);
  }
}
