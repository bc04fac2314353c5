package io.sluice.e2e.flink;

import io.sluice.flink.SluiceShuffleEnvironment;
import io.sluice.flink.SluiceShuffleMaster;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.deployment.InputGateDeploymentDescriptor;
import org.apache.flink.runtime.deployment.ResultPartitionDeploymentDescriptor;
import org.apache.flink.runtime.executiongraph.ExecutionAttemptID;
import org.apache.flink.runtime.executiongraph.IndexRange;
import org.apache.flink.runtime.executiongraph.PartitionInfo;
import org.apache.flink.runtime.io.network.api.writer.ResultPartitionWriter;
import org.apache.flink.runtime.io.network.partition.PartitionProducerStateProvider;
import org.apache.flink.runtime.io.network.partition.ResultPartitionID;
import org.apache.flink.runtime.io.network.partition.consumer.IndexedInputGate;
import org.apache.flink.runtime.shuffle.ShuffleEnvironment;
import org.apache.flink.runtime.shuffle.ShuffleEnvironmentContext;
import org.apache.flink.runtime.shuffle.ShuffleIOOwnerContext;
import org.apache.flink.runtime.shuffle.ShuffleMaster;
import org.apache.flink.runtime.shuffle.ShuffleMasterContext;
import org.apache.flink.runtime.shuffle.ShuffleServiceFactory;

/**
 * Sluice, with what Flink 2.x asked each input gate to read recorded: per gate, the subpartition
 * range of every producer partition it consumes, in channel order ("producer:start-end").
 */
public final class RecordingShuffleServiceFactory
    implements ShuffleServiceFactory<
        io.sluice.flink.SluiceShuffleDescriptor, ResultPartitionWriter, IndexedInputGate> {
  private static final List<List<String>> GATES = new CopyOnWriteArrayList<>();

  static void reset() {
    GATES.clear();
  }

  /** Every gate created since {@link #reset}: the ranges it read, one entry per producer. */
  static List<List<String>> gates() {
    return new ArrayList<>(GATES);
  }

  @Override
  public ShuffleMaster<io.sluice.flink.SluiceShuffleDescriptor> createShuffleMaster(
      ShuffleMasterContext context) {
    return new SluiceShuffleMaster(context.getConfiguration());
  }

  @Override
  public ShuffleEnvironment<ResultPartitionWriter, IndexedInputGate> createShuffleEnvironment(
      ShuffleEnvironmentContext context) {
    return new Recording(new SluiceShuffleEnvironment(context));
  }

  private static final class Recording
      implements ShuffleEnvironment<ResultPartitionWriter, IndexedInputGate> {
    private final SluiceShuffleEnvironment environment;

    Recording(SluiceShuffleEnvironment environment) {
      this.environment = environment;
    }

    @Override
    public int start() throws IOException {
      return environment.start();
    }

    @Override
    public ShuffleIOOwnerContext createShuffleIOOwnerContext(
        String ownerName, ExecutionAttemptID executionAttemptID, MetricGroup parentGroup) {
      return environment.createShuffleIOOwnerContext(ownerName, executionAttemptID, parentGroup);
    }

    @Override
    public List<ResultPartitionWriter> createResultPartitionWriters(
        ShuffleIOOwnerContext owner, List<ResultPartitionDeploymentDescriptor> descriptors) {
      return environment.createResultPartitionWriters(owner, descriptors);
    }

    @Override
    public void releasePartitionsLocally(Collection<ResultPartitionID> partitionIds) {
      environment.releasePartitionsLocally(partitionIds);
    }

    @Override
    public Collection<ResultPartitionID> getPartitionsOccupyingLocalResources() {
      return environment.getPartitionsOccupyingLocalResources();
    }

    @Override
    public List<IndexedInputGate> createInputGates(
        ShuffleIOOwnerContext owner,
        PartitionProducerStateProvider producerStateProvider,
        List<InputGateDeploymentDescriptor> descriptors) {
      for (InputGateDeploymentDescriptor d : descriptors) {
        List<String> read = new ArrayList<>();
        for (IndexRange producers : d.getConsumedShuffleDescriptorRanges()) {
          for (int i = producers.getStartIndex(); i <= producers.getEndIndex(); i++) {
            IndexRange subpartitions = d.getConsumedSubpartitionRange(i);
            read.add(i + ":" + subpartitions.getStartIndex() + "-" + subpartitions.getEndIndex());
          }
        }
        GATES.add(read);
      }
      return environment.createInputGates(owner, producerStateProvider, descriptors);
    }

    @Override
    public boolean updatePartitionInfo(ExecutionAttemptID consumerID, PartitionInfo partitionInfo)
        throws IOException, InterruptedException {
      return environment.updatePartitionInfo(consumerID, partitionInfo);
    }

    @Override
    public void close() throws Exception {
      environment.close();
    }
  }
}
