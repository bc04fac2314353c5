package io.sluice.flink;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.runtime.io.network.partition.ResultPartitionID;
import org.apache.flink.runtime.io.network.partition.ResultPartitionType;
import org.apache.flink.runtime.jobgraph.IntermediateDataSetID;
import org.apache.flink.runtime.shuffle.JobShuffleContext;
import org.apache.flink.runtime.shuffle.NettyShuffleDescriptor;
import org.apache.flink.runtime.shuffle.PartitionDescriptor;
import org.apache.flink.runtime.shuffle.PartitionWithMetrics;
import org.apache.flink.runtime.shuffle.ProducerDescriptor;
import org.apache.flink.runtime.shuffle.ShuffleDescriptor;
import org.apache.flink.runtime.shuffle.ShuffleMaster;
import org.apache.flink.runtime.shuffle.ShuffleMasterSnapshot;
import org.apache.flink.runtime.shuffle.ShuffleMasterSnapshotContext;
import org.apache.flink.runtime.shuffle.TaskInputsOutputsDescriptor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The JobManager side with {@code sluice.flink.fallback: auto}: blocking exchanges go to Sluice,
 * every other one (a streaming job's pipelined exchanges, hybrid ones) to Flink's own Netty shuffle
 * master, decided per exchange by its type; a job's first exchange that falls back is logged. A
 * released partition goes back to the master that placed it.
 */
final class FallbackShuffleMaster implements ShuffleMaster<ShuffleDescriptor> {
  private static final Logger LOG = LoggerFactory.getLogger(FallbackShuffleMaster.class);

  private final SluiceShuffleMaster sluice;
  private final ShuffleMaster<NettyShuffleDescriptor> netty;
  private final Set<JobID> announced = ConcurrentHashMap.newKeySet();

  FallbackShuffleMaster(SluiceShuffleMaster sluice, ShuffleMaster<NettyShuffleDescriptor> netty) {
    this.sluice = sluice;
    this.netty = netty;
  }

  static boolean servedBySluice(ResultPartitionType type) {
    return type.isBlockingOrBlockingPersistentResultPartition();
  }

  @Override
  public void start() throws Exception {
    sluice.start();
    netty.start();
  }

  @Override
  public void registerJob(JobShuffleContext context) {
    sluice.registerJob(context);
    netty.registerJob(context);
  }

  @Override
  public void unregisterJob(JobID jobId) {
    try {
      sluice.unregisterJob(jobId);
    } finally {
      announced.remove(jobId);
      netty.unregisterJob(jobId);
    }
  }

  @Override
  public CompletableFuture<ShuffleDescriptor> registerPartitionWithProducer(
      JobID jobId, PartitionDescriptor partition, ProducerDescriptor producer) {
    ResultPartitionType type = partition.getPartitionType();
    if (servedBySluice(type)) {
      return sluice.registerPartitionWithProducer(jobId, partition, producer).thenApply(d -> d);
    }
    if (announced.add(jobId)) {
      LOG.info(
          "Flink job {}: its {} exchanges (intermediate data set {} and others of the kind) run on"
              + " Flink's Netty shuffle, not Sluice, which serves blocking exchanges only"
              + " (sluice.flink.fallback: auto)",
          jobId,
          type,
          partition.getResultId());
    }
    return netty.registerPartitionWithProducer(jobId, partition, producer).thenApply(d -> d);
  }

  @Override
  public void releasePartitionExternally(ShuffleDescriptor descriptor) {
    if (descriptor instanceof SluiceShuffleDescriptor) {
      sluice.releasePartitionExternally(descriptor);
    } else {
      netty.releasePartitionExternally(descriptor);
    }
  }

  /** Each master's share for the inputs and outputs it serves. */
  @Override
  public MemorySize computeShuffleMemorySizeForTask(TaskInputsOutputsDescriptor task) {
    TaskInputsOutputsDescriptor ofSluice = part(task, true);
    TaskInputsOutputsDescriptor ofNetty = part(task, false);
    MemorySize size = MemorySize.ZERO;
    if (ofSluice != null) {
      size = size.add(sluice.computeShuffleMemorySizeForTask(ofSluice));
    }
    if (ofNetty != null) {
      size = size.add(netty.computeShuffleMemorySizeForTask(ofNetty));
    }
    return size;
  }

  /** The inputs and outputs of {@code task} Sluice serves ({@code sluice}) or not; null if none. */
  private static TaskInputsOutputsDescriptor part(
      TaskInputsOutputsDescriptor task, boolean sluice) {
    Map<IntermediateDataSetID, ResultPartitionType> inputs = new HashMap<>();
    Map<IntermediateDataSetID, Integer> channels = new HashMap<>();
    task.getInputPartitionTypes()
        .forEach(
            (id, type) -> {
              if (servedBySluice(type) == sluice) {
                inputs.put(id, type);
                channels.put(id, task.getInputChannelNums().getOrDefault(id, 0));
              }
            });
    Map<IntermediateDataSetID, ResultPartitionType> outputs = new HashMap<>();
    Map<IntermediateDataSetID, Integer> subpartitions = new HashMap<>();
    Map<IntermediateDataSetID, Integer> reuse = new HashMap<>();
    task.getPartitionTypes()
        .forEach(
            (id, type) -> {
              if (servedBySluice(type) == sluice) {
                outputs.put(id, type);
                subpartitions.put(id, task.getSubpartitionNums().getOrDefault(id, 0));
                reuse.put(id, task.getPartitionReuseCount().getOrDefault(id, 1));
              }
            });
    if (inputs.isEmpty() && outputs.isEmpty()) {
      return null;
    }
    int gates =
        inputs.size() == task.getInputPartitionTypes().size()
            ? task.getInputGateNums()
            : inputs.size();
    return TaskInputsOutputsDescriptor.from(gates, channels, reuse, subpartitions, inputs, outputs);
  }

  /** When both masters support it (Flink's Netty shuffle master does). */
  @Override
  public boolean supportsBatchSnapshot() {
    return sluice.supportsBatchSnapshot() && netty.supportsBatchSnapshot();
  }

  /** Flink 1.20's snapshot: both masters', in one. */
  public void snapshotState(
      CompletableFuture<ShuffleMasterSnapshot> snapshot, ShuffleMasterSnapshotContext context) {
    snapshotState(snapshot, context, null);
  }

  /** Flink 2.x's snapshot: both masters' snapshots of job {@code jobId}, in one. */
  public void snapshotState(
      CompletableFuture<ShuffleMasterSnapshot> snapshot,
      ShuffleMasterSnapshotContext context,
      JobID jobId) {
    CompletableFuture<ShuffleMasterSnapshot> ofSluice = new CompletableFuture<>();
    CompletableFuture<ShuffleMasterSnapshot> ofNetty = new CompletableFuture<>();
    FlinkLine.snapshot(sluice, ofSluice, context, jobId);
    FlinkLine.snapshot(netty, ofNetty, context, jobId);
    ofSluice
        .thenCombine(ofNetty, Snapshot::new)
        .whenComplete(
            (both, error) -> {
              if (error != null) {
                snapshot.completeExceptionally(error);
              } else {
                snapshot.complete(both);
              }
            });
  }

  /** Flink 1.20's restore. */
  public void restoreState(List<ShuffleMasterSnapshot> snapshots) {
    restoreState(snapshots, null);
  }

  /** Flink 2.x's restore: each master gets its parts of the snapshots. */
  public void restoreState(List<ShuffleMasterSnapshot> snapshots, JobID jobId) {
    List<ShuffleMasterSnapshot> ofSluice = new ArrayList<>();
    List<ShuffleMasterSnapshot> ofNetty = new ArrayList<>();
    for (ShuffleMasterSnapshot s : snapshots) {
      if (s instanceof Snapshot) {
        ofSluice.add(((Snapshot) s).sluice);
        ofNetty.add(((Snapshot) s).netty);
      }
    }
    FlinkLine.restore(sluice, ofSluice, jobId);
    FlinkLine.restore(netty, ofNetty, jobId);
  }

  /**
   * The partitions either master still has, each asked for its own: Flink's Netty master waits for
   * TaskManagers to report every partition it is asked for, up to {@code timeout}, and none reports
   * a Sluice one.
   */
  @Override
  public CompletableFuture<Collection<PartitionWithMetrics>> getPartitionWithMetrics(
      JobID jobId, Duration timeout, Set<ResultPartitionID> expectedPartitions) {
    Set<ResultPartitionID> ofSluice = new HashSet<>();
    Set<ResultPartitionID> ofNetty = new HashSet<>();
    for (ResultPartitionID id : expectedPartitions) {
      (sluice.tracks(jobId, id) ? ofSluice : ofNetty).add(id);
    }
    CompletableFuture<Collection<PartitionWithMetrics>> fromNetty =
        ofNetty.isEmpty()
            ? CompletableFuture.completedFuture(List.of())
            : netty.getPartitionWithMetrics(jobId, timeout, ofNetty);
    return sluice
        .getPartitionWithMetrics(jobId, timeout, ofSluice)
        .thenCombine(
            fromNetty,
            (a, b) -> {
              List<PartitionWithMetrics> all = new ArrayList<>(a);
              all.addAll(b);
              return all;
            });
  }

  @Override
  public void notifyPartitionRecoveryStarted(JobID jobId) {
    sluice.notifyPartitionRecoveryStarted(jobId);
    netty.notifyPartitionRecoveryStarted(jobId);
  }

  /**
   * Both masters' snapshots; incremental when Netty's is (Sluice's are whole, and restoring takes
   * the last one of the job).
   */
  private static final class Snapshot implements ShuffleMasterSnapshot {
    private static final long serialVersionUID = 1L;
    final ShuffleMasterSnapshot sluice;
    final ShuffleMasterSnapshot netty;

    Snapshot(ShuffleMasterSnapshot sluice, ShuffleMasterSnapshot netty) {
      this.sluice = sluice;
      this.netty = netty;
    }

    @Override
    public boolean isIncremental() {
      return netty.isIncremental();
    }
  }

  @Override
  public void close() throws Exception {
    try {
      sluice.close();
    } finally {
      netty.close();
    }
  }
}
