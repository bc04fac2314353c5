package io.sluice.e2e.flink;

import io.sluice.flink.SluiceShuffleDescriptor;
import io.sluice.flink.SluiceShuffleEnvironment;
import io.sluice.flink.SluiceShuffleMaster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.runtime.io.network.api.writer.ResultPartitionWriter;
import org.apache.flink.runtime.io.network.partition.ResultPartitionID;
import org.apache.flink.runtime.io.network.partition.consumer.IndexedInputGate;
import org.apache.flink.runtime.shuffle.JobShuffleContext;
import org.apache.flink.runtime.shuffle.PartitionDescriptor;
import org.apache.flink.runtime.shuffle.PartitionWithMetrics;
import org.apache.flink.runtime.shuffle.ProducerDescriptor;
import org.apache.flink.runtime.shuffle.ShuffleDescriptor;
import org.apache.flink.runtime.shuffle.ShuffleEnvironment;
import org.apache.flink.runtime.shuffle.ShuffleEnvironmentContext;
import org.apache.flink.runtime.shuffle.ShuffleMaster;
import org.apache.flink.runtime.shuffle.ShuffleMasterContext;
import org.apache.flink.runtime.shuffle.ShuffleMasterSnapshot;
import org.apache.flink.runtime.shuffle.ShuffleMasterSnapshotContext;
import org.apache.flink.runtime.shuffle.ShuffleServiceFactory;
import org.apache.flink.runtime.shuffle.TaskInputsOutputsDescriptor;

/**
 * Sluice's shuffle service as {@code SluiceShuffleServiceFactory} makes it without the fallback to
 * Flink's Netty shuffle ({@code sluice.flink.fallback: never}), with the shuffle master's
 * conversation with Flink recorded so the failover suites can assert on it without reading logs:
 * every partition it placed (the descriptors producers write and consumers read) and every
 * partition it reported lost to the JobMaster ({@link
 * JobShuffleContext#stopTrackingAndReleasePartitions}). Every call goes to the real shuffle master
 * and environment and every answer is theirs. The MiniCluster runs in the test's JVM and loads this
 * factory by name, so the record is static: {@link #reset} it before a job.
 */
public final class ObservingShuffleServiceFactory
    implements ShuffleServiceFactory<
        SluiceShuffleDescriptor, ResultPartitionWriter, IndexedInputGate> {
  private static final List<SluiceShuffleDescriptor> PLACED = new CopyOnWriteArrayList<>();
  private static final List<ResultPartitionID> REPORTED_LOST = new CopyOnWriteArrayList<>();
  private static volatile CompletableFuture<Void> lossReported = new CompletableFuture<>();

  /** Forgets what was recorded. */
  static void reset() {
    PLACED.clear();
    REPORTED_LOST.clear();
    lossReported = new CompletableFuture<>();
  }

  /** The partitions the shuffle master placed, in the order it placed them. */
  static List<SluiceShuffleDescriptor> placed() {
    return new ArrayList<>(PLACED);
  }

  /** The partitions the shuffle master reported lost, in the order it reported them. */
  static List<ResultPartitionID> reportedLost() {
    return new ArrayList<>(REPORTED_LOST);
  }

  /** Completes once the JobMaster has processed the first report of lost partitions. */
  static CompletableFuture<Void> lossReported() {
    return lossReported;
  }

  @Override
  public ShuffleMaster<SluiceShuffleDescriptor> createShuffleMaster(ShuffleMasterContext context) {
    return new Master(new SluiceShuffleMaster(context.getConfiguration()));
  }

  @Override
  public ShuffleEnvironment<ResultPartitionWriter, IndexedInputGate> createShuffleEnvironment(
      ShuffleEnvironmentContext context) {
    return new SluiceShuffleEnvironment(context);
  }

  /** The real shuffle master, its placements recorded and its job contexts observed. */
  private static final class Master implements ShuffleMaster<SluiceShuffleDescriptor> {
    private final SluiceShuffleMaster master;

    Master(SluiceShuffleMaster master) {
      this.master = master;
    }

    @Override
    public void start() throws Exception {
      master.start();
    }

    @Override
    public void close() throws Exception {
      master.close();
    }

    @Override
    public void registerJob(JobShuffleContext context) {
      master.registerJob(new Context(context));
    }

    @Override
    public void unregisterJob(JobID jobId) {
      master.unregisterJob(jobId);
    }

    @Override
    public CompletableFuture<SluiceShuffleDescriptor> registerPartitionWithProducer(
        JobID jobId, PartitionDescriptor partition, ProducerDescriptor producer) {
      return master
          .registerPartitionWithProducer(jobId, partition, producer)
          .thenApply(
              descriptor -> {
                PLACED.add(descriptor);
                return descriptor;
              });
    }

    @Override
    public void releasePartitionExternally(ShuffleDescriptor descriptor) {
      master.releasePartitionExternally(descriptor);
    }

    @Override
    public MemorySize computeShuffleMemorySizeForTask(TaskInputsOutputsDescriptor task) {
      return master.computeShuffleMemorySizeForTask(task);
    }

    @Override
    public CompletableFuture<Collection<PartitionWithMetrics>> getPartitionWithMetrics(
        JobID jobId, Duration timeout, Set<ResultPartitionID> expectedPartitions) {
      return master.getPartitionWithMetrics(jobId, timeout, expectedPartitions);
    }

    @Override
    public boolean supportsBatchSnapshot() {
      return master.supportsBatchSnapshot();
    }

    // Flink 1.20's forms, then Flink 2.x's (as in SluiceShuffleMaster: each line calls its own)

    public void snapshotState(
        CompletableFuture<ShuffleMasterSnapshot> snapshotFuture,
        ShuffleMasterSnapshotContext context) {
      master.snapshotState(snapshotFuture, context);
    }

    public void restoreState(List<ShuffleMasterSnapshot> snapshots) {
      master.restoreState(snapshots);
    }

    public void snapshotState(
        CompletableFuture<ShuffleMasterSnapshot> snapshotFuture,
        ShuffleMasterSnapshotContext context,
        JobID jobId) {
      master.snapshotState(snapshotFuture, context, jobId);
    }

    public void restoreState(List<ShuffleMasterSnapshot> snapshots, JobID jobId) {
      master.restoreState(snapshots, jobId);
    }

    @Override
    public void notifyPartitionRecoveryStarted(JobID jobId) {
      master.notifyPartitionRecoveryStarted(jobId);
    }
  }

  /** The JobMaster's side of one job, its reports of lost partitions recorded. */
  private static final class Context implements JobShuffleContext {
    private final JobShuffleContext context;

    Context(JobShuffleContext context) {
      this.context = context;
    }

    @Override
    public JobID getJobId() {
      return context.getJobId();
    }

    @Override
    public CompletableFuture<?> stopTrackingAndReleasePartitions(
        Collection<ResultPartitionID> partitionIds) {
      REPORTED_LOST.addAll(partitionIds);
      CompletableFuture<Void> reported = lossReported;
      return context
          .stopTrackingAndReleasePartitions(partitionIds)
          .whenComplete(
              (ok, error) -> {
                if (error == null) {
                  reported.complete(null);
                } else {
                  reported.completeExceptionally(error);
                }
              });
    }

    @Override
    public CompletableFuture<Collection<PartitionWithMetrics>> getPartitionWithMetrics(
        Duration timeout, Set<ResultPartitionID> expectedPartitions) {
      return context.getPartitionWithMetrics(timeout, expectedPartitions);
    }

    @Override
    public void notifyPartitionRecoveryStarted() {
      context.notifyPartitionRecoveryStarted();
    }
  }
}
