package io.sluice.flink;

import io.sluice.auth.AuthConf;
import io.sluice.client.ClientContext;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.deployment.InputGateDeploymentDescriptor;
import org.apache.flink.runtime.deployment.ResultPartitionDeploymentDescriptor;
import org.apache.flink.runtime.executiongraph.ExecutionAttemptID;
import org.apache.flink.runtime.executiongraph.PartitionInfo;
import org.apache.flink.runtime.io.network.TaskEventPublisher;
import org.apache.flink.runtime.io.network.api.writer.ResultPartitionWriter;
import org.apache.flink.runtime.io.network.buffer.BufferPool;
import org.apache.flink.runtime.io.network.buffer.NetworkBufferPool;
import org.apache.flink.runtime.io.network.partition.PartitionProducerStateProvider;
import org.apache.flink.runtime.io.network.partition.ResultPartitionID;
import org.apache.flink.runtime.io.network.partition.ResultPartitionManager;
import org.apache.flink.runtime.io.network.partition.consumer.IndexedInputGate;
import org.apache.flink.runtime.shuffle.ShuffleDescriptor;
import org.apache.flink.runtime.shuffle.ShuffleEnvironment;
import org.apache.flink.runtime.shuffle.ShuffleEnvironmentContext;
import org.apache.flink.runtime.shuffle.ShuffleIOOwnerContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The TaskManager side: one core client context (connections, settings) for the whole TaskManager,
 * and its own pool of network buffers, sized from the TaskManager's network memory, from which
 * every writer and input gate takes a fixed share. Data never passes through this TaskManager's own
 * network stack, so no partition occupies local resources.
 *
 * <p>Metrics: {@code Shuffle.Sluice.TotalMemorySegments}, {@code AvailableMemorySegments} and
 * {@code UsedMemory} (bytes) under the TaskManager's group; per task, {@code Shuffle.Sluice.Input}
 * and {@code Output} groups for Flink's I/O metrics.
 */
public final class SluiceShuffleEnvironment
    implements ShuffleEnvironment<ResultPartitionWriter, IndexedInputGate> {
  private static final Logger LOG = LoggerFactory.getLogger(SluiceShuffleEnvironment.class);
  static final String METRIC_GROUP_SHUFFLE = "Shuffle";
  static final String METRIC_GROUP_SLUICE = "Sluice";

  private final FlinkClientConf conf;
  private final NetworkBufferPool networkBufferPool;
  private final ResultPartitionManager partitionManager = new ResultPartitionManager();
  private final TaskEventPublisher taskEventPublisher;
  private final ClientContext context;
  private final Object lock = new Object();
  private boolean closed;

  public SluiceShuffleEnvironment(ShuffleEnvironmentContext environment) {
    int segmentSize = SluiceShuffleMaster.segmentSize(environment.getConfiguration());
    this.conf = new FlinkClientConf(environment.getConfiguration(), segmentSize);
    long segments = environment.getNetworkMemorySize().getBytes() / segmentSize;
    if (segments < conf.writerBuffers() + conf.gateBuffers()) {
      throw new IllegalArgumentException(
          "TaskManager network memory of "
              + environment.getNetworkMemorySize()
              + " is less than one writer ("
              + FlinkClientConf.REGION_SIZE
              + ") and one input gate ("
              + FlinkClientConf.INPUT_GATE_MEMORY
              + ") need: raise taskmanager.memory.network.min/max or lower those");
    }
    this.networkBufferPool = new NetworkBufferPool((int) segments, segmentSize);
    this.taskEventPublisher = environment.getEventPublisher();
    // a TaskManager never holds the cluster secret: only the JobManager registers applications
    this.context = new ClientContext(AuthConf.withoutClusterSecret(conf.sluiceConf()));
    registerMetrics(environment.getParentMetricGroup());
    LOG.info(
        "Sluice shuffle environment of TaskManager {} (plugin for Flink {}): {} network buffers"
            + " of {} bytes, {} per writer, {} per input gate",
        environment.getTaskExecutorResourceId(),
        FlinkLine.NAME,
        segments,
        segmentSize,
        conf.writerBuffers(),
        conf.gateBuffers());
  }

  private void registerMetrics(MetricGroup parent) {
    MetricGroup group = parent.addGroup(METRIC_GROUP_SHUFFLE).addGroup(METRIC_GROUP_SLUICE);
    group.gauge(
        "TotalMemorySegments", (Gauge<Integer>) networkBufferPool::getTotalNumberOfMemorySegments);
    group.gauge(
        "AvailableMemorySegments",
        (Gauge<Integer>) networkBufferPool::getNumberOfAvailableMemorySegments);
    group.gauge("UsedMemory", (Gauge<Long>) networkBufferPool::getUsedMemory);
    // reads of a map partition that went on from its replica (ClientMetrics)
    group.gauge("ReadFailovers", (Gauge<Long>) context.metrics()::readFailovers);
  }

  /** No data port: consumers read from Sluice servers. */
  @Override
  public int start() {
    return -1;
  }

  @Override
  public ShuffleIOOwnerContext createShuffleIOOwnerContext(
      String ownerName, ExecutionAttemptID executionAttemptID, MetricGroup parentGroup) {
    MetricGroup group = parentGroup.addGroup(METRIC_GROUP_SHUFFLE).addGroup(METRIC_GROUP_SLUICE);
    return new ShuffleIOOwnerContext(
        ownerName,
        executionAttemptID,
        parentGroup,
        group.addGroup("Output"),
        group.addGroup("Input"));
  }

  @Override
  public List<ResultPartitionWriter> createResultPartitionWriters(
      ShuffleIOOwnerContext owner, List<ResultPartitionDeploymentDescriptor> descriptors) {
    synchronized (lock) {
      checkOpen();
      List<ResultPartitionWriter> writers = new ArrayList<>(descriptors.size());
      int buffers = conf.writerBuffers();
      for (int i = 0; i < descriptors.size(); i++) {
        ResultPartitionDeploymentDescriptor d = descriptors.get(i);
        SluiceResultPartition partition =
            new SluiceResultPartition(
                owner.getOwnerName(),
                i,
                sluiceDescriptor(d.getShuffleDescriptor(), owner),
                d.getPartitionType(),
                d.getNumberOfSubpartitions(),
                d.getMaxParallelism(),
                partitionManager,
                () -> createBufferPool(buffers, owner, FlinkClientConf.REGION_SIZE.name()),
                context,
                conf.segmentSize());
        partition.isNumberOfPartitionConsumerUndefined(d.isNumberOfPartitionConsumerUndefined());
        writers.add(partition);
      }
      return writers;
    }
  }

  @Override
  public List<IndexedInputGate> createInputGates(
      ShuffleIOOwnerContext owner,
      PartitionProducerStateProvider producerStateProvider,
      List<InputGateDeploymentDescriptor> descriptors) {
    synchronized (lock) {
      checkOpen();
      List<IndexedInputGate> gates = new ArrayList<>(descriptors.size());
      int buffers = conf.gateBuffers();
      for (int i = 0; i < descriptors.size(); i++) {
        InputGateDeploymentDescriptor d = descriptors.get(i);
        ShuffleDescriptor[] shuffleDescriptors = d.getShuffleDescriptors();
        List<SluiceShuffleDescriptor> producers = new ArrayList<>(shuffleDescriptors.length);
        for (ShuffleDescriptor sd : shuffleDescriptors) {
          producers.add(sluiceDescriptor(sd, owner));
        }
        List<ConsumedPartition> consumed = FlinkLine.consumed(d, producers);
        int numChannels = ConsumedPartition.channels(consumed);
        FlinkChannelShim channels =
            new FlinkChannelShim(
                owner.getOwnerName(),
                i,
                d.getConsumedResultId(),
                d.getConsumedPartitionType(),
                numChannels,
                producerStateProvider,
                networkBufferPool,
                partitionManager,
                taskEventPublisher);
        gates.add(
            new SluiceInputGate(
                owner.getOwnerName(),
                i,
                consumed,
                channels,
                () -> createBufferPool(buffers, owner, FlinkClientConf.INPUT_GATE_MEMORY.name()),
                context,
                conf.readConcurrency(),
                conf.segmentSize()));
      }
      return gates;
    }
  }

  private BufferPool createBufferPool(int buffers, ShuffleIOOwnerContext owner, String key)
      throws IOException {
    try {
      return networkBufferPool.createBufferPool(buffers, buffers);
    } catch (IOException e) {
      throw new IOException(
          owner.getOwnerName()
              + ": not enough network memory for "
              + buffers
              + " buffers ("
              + key
              + "): raise taskmanager.memory.network.min/max, lower "
              + key
              + ", or run fewer tasks per TaskManager. "
              + e.getMessage(),
          e);
    }
  }

  private static SluiceShuffleDescriptor sluiceDescriptor(
      ShuffleDescriptor descriptor, ShuffleIOOwnerContext owner) {
    if (descriptor instanceof SluiceShuffleDescriptor) {
      return (SluiceShuffleDescriptor) descriptor;
    }
    if (descriptor.isUnknown()) {
      throw new IllegalStateException(
          owner.getOwnerName()
              + ": the producer of partition "
              + descriptor.getResultPartitionID()
              + " is not placed yet; Sluice serves blocking exchanges only, whose consumers start"
              + " after their producers (execution.batch-shuffle-mode: ALL_EXCHANGES_BLOCKING)");
    }
    throw new IllegalStateException(
        owner.getOwnerName()
            + ": partition "
            + descriptor.getResultPartitionID()
            + " has a "
            + descriptor.getClass().getName()
            + ", not a Sluice shuffle descriptor: the JobManager and the TaskManagers must all"
            + " set shuffle-service-factory.class: io.sluice.flink.SluiceShuffleServiceFactory");
  }

  private void checkOpen() {
    if (closed) {
      throw new IllegalStateException("The Sluice shuffle environment is closed");
    }
  }

  @Override
  public void releasePartitionsLocally(Collection<ResultPartitionID> partitionIds) {
    for (ResultPartitionID id : partitionIds) {
      partitionManager.releasePartition(id, null);
    }
  }

  @Override
  public Collection<ResultPartitionID> getPartitionsOccupyingLocalResources() {
    return Collections.emptyList();
  }

  /**
   * Never needed: Sluice descriptors are complete when the consumer is deployed (blocking exchanges
   * only, producers placed before they run).
   */
  @Override
  public boolean updatePartitionInfo(ExecutionAttemptID consumerId, PartitionInfo partitionInfo) {
    throw new UnsupportedOperationException(
        "Sluice shuffle descriptors are always known when a consumer is deployed, so partition"
            + " info updates (for pipelined or unknown producers) are not supported; consumer "
            + consumerId
            + ", partition "
            + partitionInfo.getShuffleDescriptor().getResultPartitionID());
  }

  @Override
  public void close() {
    synchronized (lock) {
      if (closed) {
        return;
      }
      closed = true;
    }
    try {
      partitionManager.shutdown();
      context.close();
    } finally {
      networkBufferPool.destroyAllBufferPools();
      networkBufferPool.destroy();
    }
    LOG.info("Sluice shuffle environment closed");
  }
}
