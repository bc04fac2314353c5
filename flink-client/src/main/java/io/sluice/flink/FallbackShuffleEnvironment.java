package io.sluice.flink;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.function.Predicate;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.deployment.InputGateDeploymentDescriptor;
import org.apache.flink.runtime.deployment.ResultPartitionDeploymentDescriptor;
import org.apache.flink.runtime.executiongraph.ExecutionAttemptID;
import org.apache.flink.runtime.executiongraph.PartitionInfo;
import org.apache.flink.runtime.io.network.api.writer.ResultPartitionWriter;
import org.apache.flink.runtime.io.network.partition.PartitionProducerStateProvider;
import org.apache.flink.runtime.io.network.partition.ResultPartitionID;
import org.apache.flink.runtime.io.network.partition.consumer.IndexedInputGate;
import org.apache.flink.runtime.shuffle.ShuffleDescriptor;
import org.apache.flink.runtime.shuffle.ShuffleEnvironment;
import org.apache.flink.runtime.shuffle.ShuffleIOOwnerContext;

/**
 * The TaskManager side with {@code sluice.flink.fallback: auto}: Sluice's environment and Flink's
 * Netty one, each with its share of the network memory; a task's writers and gates go to the one
 * whose master placed their partitions (a Sluice shuffle descriptor or not). A task whose inputs,
 * or whose outputs, mix the two is refused: each environment numbers its gates and partitions from
 * 0, which a mix would break (Flink gives a job one kind of exchange per batch shuffle mode, so
 * this does not happen with its settings).
 */
final class FallbackShuffleEnvironment
    implements ShuffleEnvironment<ResultPartitionWriter, IndexedInputGate> {
  private final SluiceShuffleEnvironment sluice;
  private final ShuffleEnvironment<?, ?> netty;

  FallbackShuffleEnvironment(SluiceShuffleEnvironment sluice, ShuffleEnvironment<?, ?> netty) {
    this.sluice = sluice;
    this.netty = netty;
  }

  /** Netty's data port: Netty partitions are read from this TaskManager. */
  @Override
  public int start() throws IOException {
    sluice.start();
    return netty.start();
  }

  @Override
  public ShuffleIOOwnerContext createShuffleIOOwnerContext(
      String ownerName, ExecutionAttemptID executionAttemptID, MetricGroup parentGroup) {
    return netty.createShuffleIOOwnerContext(ownerName, executionAttemptID, parentGroup);
  }

  @Override
  @SuppressWarnings("unchecked")
  public List<ResultPartitionWriter> createResultPartitionWriters(
      ShuffleIOOwnerContext owner, List<ResultPartitionDeploymentDescriptor> descriptors) {
    if (oneKind(descriptors, d -> isSluice(d.getShuffleDescriptor()), owner, "outputs")) {
      return sluice.createResultPartitionWriters(owner, descriptors);
    }
    return new ArrayList<>(
        (List<ResultPartitionWriter>) netty.createResultPartitionWriters(owner, descriptors));
  }

  @Override
  @SuppressWarnings("unchecked")
  public List<IndexedInputGate> createInputGates(
      ShuffleIOOwnerContext owner,
      PartitionProducerStateProvider producerStateProvider,
      List<InputGateDeploymentDescriptor> descriptors) {
    if (oneKind(descriptors, FallbackShuffleEnvironment::readsSluice, owner, "inputs")) {
      return sluice.createInputGates(owner, producerStateProvider, descriptors);
    }
    return new ArrayList<>(
        (List<IndexedInputGate>) netty.createInputGates(owner, producerStateProvider, descriptors));
  }

  private static boolean isSluice(ShuffleDescriptor d) {
    return d instanceof SluiceShuffleDescriptor;
  }

  private static boolean readsSluice(InputGateDeploymentDescriptor d) {
    ShuffleDescriptor[] producers = d.getShuffleDescriptors();
    return producers.length > 0 && isSluice(producers[0]);
  }

  /**
   * True when every element is Sluice's, false when none is (or there are none).
   *
   * @throws IllegalStateException naming the task when they mix
   */
  private static <T> boolean oneKind(
      List<T> descriptors, Predicate<T> sluice, ShuffleIOOwnerContext owner, String what) {
    long count = descriptors.stream().filter(sluice).count();
    if (count == 0) {
      return false;
    }
    if (count == descriptors.size()) {
      return true;
    }
    throw new IllegalStateException(
        owner.getOwnerName()
            + ": its "
            + what
            + " mix blocking exchanges (Sluice) with pipelined or hybrid ones (Flink's Netty"
            + " shuffle), which one task cannot combine; give the job one kind of exchange"
            + " (execution.batch-shuffle-mode: ALL_EXCHANGES_BLOCKING for a batch job)");
  }

  @Override
  public void releasePartitionsLocally(Collection<ResultPartitionID> partitionIds) {
    sluice.releasePartitionsLocally(partitionIds);
    netty.releasePartitionsLocally(partitionIds);
  }

  @Override
  public Collection<ResultPartitionID> getPartitionsOccupyingLocalResources() {
    return netty.getPartitionsOccupyingLocalResources();
  }

  /** Only Netty's consumers learn producer locations late (pipelined exchanges). */
  @Override
  public boolean updatePartitionInfo(ExecutionAttemptID consumerId, PartitionInfo partitionInfo)
      throws IOException, InterruptedException {
    if (isSluice(partitionInfo.getShuffleDescriptor())) {
      return sluice.updatePartitionInfo(consumerId, partitionInfo);
    }
    return netty.updatePartitionInfo(consumerId, partitionInfo);
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
