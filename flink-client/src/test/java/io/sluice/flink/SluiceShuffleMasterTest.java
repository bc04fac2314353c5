package io.sluice.flink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.testutil.TestCluster;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.net.InetAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.runtime.clusterframework.types.ResourceID;
import org.apache.flink.runtime.execution.SuppressRestartsException;
import org.apache.flink.runtime.executiongraph.ExecutionAttemptID;
import org.apache.flink.runtime.executiongraph.ExecutionGraphID;
import org.apache.flink.runtime.io.network.partition.ResultPartitionID;
import org.apache.flink.runtime.io.network.partition.ResultPartitionType;
import org.apache.flink.runtime.jobgraph.IntermediateDataSetID;
import org.apache.flink.runtime.jobgraph.IntermediateResultPartitionID;
import org.apache.flink.runtime.jobgraph.JobVertexID;
import org.apache.flink.runtime.scheduler.strategy.ExecutionVertexID;
import org.apache.flink.runtime.shuffle.JobShuffleContext;
import org.apache.flink.runtime.shuffle.PartitionDescriptor;
import org.apache.flink.runtime.shuffle.PartitionWithMetrics;
import org.apache.flink.runtime.shuffle.ProducerDescriptor;
import org.apache.flink.runtime.shuffle.ShuffleMasterSnapshot;
import org.apache.flink.runtime.shuffle.ShuffleMasterSnapshotContext;
import org.apache.flink.runtime.shuffle.TaskInputsOutputsDescriptor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The JobManager side against real servers, called as Flink's scheduler calls it. */
class SluiceShuffleMasterTest {
  @TempDir Path tmp;
  private TestCluster cluster;
  private SluiceShuffleMaster master;

  @AfterEach
  void tearDown() {
    if (master != null) {
      master.close();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  /** The job's side of Flink's JobMaster: records which partitions it was told are lost. */
  private static final class JobContext implements JobShuffleContext {
    final JobID jobId = new JobID();
    final List<ResultPartitionID> lost = new CopyOnWriteArrayList<>();

    @Override
    public JobID getJobId() {
      return jobId;
    }

    @Override
    public synchronized CompletableFuture<?> stopTrackingAndReleasePartitions(
        Collection<ResultPartitionID> partitionIds) {
      lost.addAll(partitionIds);
      return CompletableFuture.completedFuture(null);
    }

    @Override
    public CompletableFuture<Collection<PartitionWithMetrics>> getPartitionWithMetrics(
        Duration timeout, Set<ResultPartitionID> expectedPartitions) {
      return CompletableFuture.completedFuture(List.of());
    }

    @Override
    public void notifyPartitionRecoveryStarted() {}
  }

  private SluiceShuffleMaster start(int servers) throws Exception {
    cluster = TestCluster.start(tmp, servers);
    Configuration conf = new Configuration();
    conf.setString("sluice.servers", FlinkClientConfTest.serverList(cluster));
    conf.setString("sluice.flink.regionSize", "1m");
    conf.setString("sluice.flink.inputGateMemory", "256k");
    // a stopped server counts as lost once it has not come back for this long
    conf.setString("sluice.client.serverRestartWait", "1s");
    master = new SluiceShuffleMaster(conf);
    master.start();
    return master;
  }

  private static PartitionDescriptor partition(
      IntermediateDataSetID dataSet, int number, ResultPartitionType type) {
    return new PartitionDescriptor(
        dataSet,
        4,
        new IntermediateResultPartitionID(dataSet, number),
        type,
        3,
        0,
        false,
        true,
        false);
  }

  private static ProducerDescriptor producer(int attempt) throws Exception {
    ExecutionAttemptID id =
        new ExecutionAttemptID(
            new ExecutionGraphID(), new ExecutionVertexID(new JobVertexID(), 0), attempt);
    return new ProducerDescriptor(ResourceID.generate(), id, InetAddress.getLoopbackAddress(), -1);
  }

  private SluiceShuffleDescriptor register(
      JobContext job, PartitionDescriptor partition, int attempt) throws Exception {
    return master
        .registerPartitionWithProducer(job.getJobId(), partition, producer(attempt))
        .get(10, TimeUnit.SECONDS);
  }

  @Test
  void warnsOfMisspelledKeysByNameBeforeItReadsTheServersAndWithoutTheirValues() {
    Configuration conf = new Configuration();
    conf.setString("sluice.server", "a.example:9099");
    conf.setString("sluice.auth.clusterSecert", "hunter2-the-secret");
    conf.setString("sluice.flink.regionSize", "1m");
    List<String> warnings = new ArrayList<>();

    assertThatThrownBy(() -> new SluiceShuffleMaster(conf, warnings::add).start())
        .hasMessageContaining("sluice.servers lists no server");
    assertThat(warnings)
        .containsExactly(
            "Flink configuration: unknown configuration key sluice.auth.clusterSecert"
                + " (ignored); did you mean sluice.auth.clusterSecret?",
            "Flink configuration: unknown configuration key sluice.server (ignored);"
                + " did you mean sluice.servers?");
    assertThat(String.join("\n", warnings)).doesNotContain("hunter2", "a.example");
  }

  @Test
  void placesEachPartitionAsAMapPartitionOfItsJobsApplication() throws Exception {
    start(2);
    JobContext job = new JobContext();
    master.registerJob(job);
    IntermediateDataSetID first = new IntermediateDataSetID();
    IntermediateDataSetID second = new IntermediateDataSetID();

    SluiceShuffleDescriptor a = register(job, partition(first, 2, ResultPartitionType.BLOCKING), 0);
    SluiceShuffleDescriptor b = register(job, partition(first, 3, ResultPartitionType.BLOCKING), 1);
    SluiceShuffleDescriptor c =
        register(job, partition(second, 0, ResultPartitionType.BLOCKING), 0);

    assertThat(a.mapPartitionId().appId()).isEqualTo("flink-" + job.getJobId().toHexString());
    assertThat(a.mapPartitionId().shuffleId()).isZero();
    assertThat(a.mapPartitionId().mapIndex()).isEqualTo(2);
    assertThat(b.mapPartitionId().mapIndex()).isEqualTo(3);
    assertThat(b.mapPartitionId().attempt()).isEqualTo(1);
    assertThat(c.mapPartitionId().shuffleId()).isEqualTo(1);
    assertThat(a.numSubpartitions()).isEqualTo(3);
    assertThat(a.storesLocalResourcesOn()).isEmpty();
    assertThat(a.port()).as("round robin over the servers").isNotEqualTo(b.port());

    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(a);
    }
    try (ObjectInputStream in =
        new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
      SluiceShuffleDescriptor copy = (SluiceShuffleDescriptor) in.readObject();
      assertThat(copy.mapPartitionId()).isEqualTo(a.mapPartitionId());
      assertThat(copy.getResultPartitionID()).isEqualTo(a.getResultPartitionID());
      assertThat(copy.port()).isEqualTo(a.port());
    }

    master.releasePartitionExternally(a);
    master.unregisterJob(job.getJobId());
    assertThat(job.lost).isEmpty();
  }

  /**
   * JobManager failover: a snapshot, serialized as Flink stores it, restored by another master's
   * job keeps the shuffle ids and partitions; the new JobManager's attempts go to the next epoch,
   * and a partition no server holds committed is not reported available.
   */
  @Test
  void anotherMasterTakesOverAJobFromItsSnapshot() throws Exception {
    start(1);
    JobContext job = new JobContext();
    master.registerJob(job);
    IntermediateDataSetID first = new IntermediateDataSetID();
    IntermediateDataSetID second = new IntermediateDataSetID();
    SluiceShuffleDescriptor a = register(job, partition(first, 0, ResultPartitionType.BLOCKING), 0);
    register(job, partition(second, 0, ResultPartitionType.BLOCKING), 0);
    assertThat(master.supportsBatchSnapshot()).isTrue();
    CompletableFuture<ShuffleMasterSnapshot> taken = new CompletableFuture<>();
    master.snapshotState(taken, new ShuffleMasterSnapshotContext() {});
    ShuffleMasterSnapshot snapshot = taken.get(10, TimeUnit.SECONDS);
    assertThat(snapshot.isIncremental()).isFalse();

    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(snapshot);
    }
    ShuffleMasterSnapshot stored;
    try (ObjectInputStream in =
        new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
      stored = (ShuffleMasterSnapshot) in.readObject();
    }

    Configuration conf = new Configuration();
    conf.setString("sluice.servers", FlinkClientConfTest.serverList(cluster));
    SluiceShuffleMaster next = new SluiceShuffleMaster(conf);
    try {
      next.start();
      next.registerJob(job);
      next.restoreState(List.of(stored));
      assertThat(next.tracks(job.getJobId(), a.getResultPartitionID())).isTrue();

      SluiceShuffleDescriptor rerun =
          next.registerPartitionWithProducer(
                  job.getJobId(), partition(first, 1, ResultPartitionType.BLOCKING), producer(0))
              .get(10, TimeUnit.SECONDS);
      assertThat(rerun.mapPartitionId().shuffleId()).as("the data set's shuffle id").isZero();
      assertThat(rerun.mapPartitionId().attempt())
          .as("attempt 0 of the next JobManager")
          .isEqualTo(JobShuffle.ATTEMPTS_PER_EPOCH);
      SluiceShuffleDescriptor third =
          next.registerPartitionWithProducer(
                  job.getJobId(),
                  partition(new IntermediateDataSetID(), 0, ResultPartitionType.BLOCKING),
                  producer(0))
              .get(10, TimeUnit.SECONDS);
      assertThat(third.mapPartitionId().shuffleId()).as("a new data set's").isEqualTo(2);

      // a was placed but never written, so no server holds it committed
      assertThat(
              next.getPartitionWithMetrics(
                      job.getJobId(), Duration.ofSeconds(10), Set.of(a.getResultPartitionID()))
                  .get(20, TimeUnit.SECONDS))
          .isEmpty();
      assertThat(next.tracks(job.getJobId(), a.getResultPartitionID()))
          .as("a restored partition Flink did not keep is forgotten (and its files deleted)")
          .isFalse();
      assertThat(next.tracks(job.getJobId(), rerun.getResultPartitionID())).isTrue();
    } finally {
      next.close();
    }
  }

  @Test
  void aServerThatStopsAnsweringMakesFlinkForgetThePartitionsOnIt() throws Exception {
    start(2);
    JobContext job = new JobContext();
    master.registerJob(job);
    IntermediateDataSetID dataSet = new IntermediateDataSetID();
    SluiceShuffleDescriptor a =
        register(job, partition(dataSet, 0, ResultPartitionType.BLOCKING), 0);
    SluiceShuffleDescriptor b =
        register(job, partition(dataSet, 1, ResultPartitionType.BLOCKING), 0);
    int lostServer = cluster.server(0).port() == a.port() ? 0 : 1;
    SluiceShuffleDescriptor onLost = lostServer == 0 ? a : b;
    SluiceShuffleDescriptor onLive = lostServer == 0 ? b : a;
    cluster.server(lostServer).close();

    // the next placements notice; none of them lands on the stopped server
    for (int i = 2; i < 5; i++) {
      SluiceShuffleDescriptor next =
          register(job, partition(dataSet, i, ResultPartitionType.BLOCKING), 0);
      assertThat(next.port()).isEqualTo(onLive.port());
    }
    // and once it has not come back within sluice.client.serverRestartWait, its partitions go
    for (int look = 0; look < 600 && job.lost.isEmpty(); look++) {
      Thread.sleep(50);
    }
    assertThat(job.lost).containsExactly(onLost.getResultPartitionID());
  }

  @Test
  void refusesNonBlockingExchangesNamingTheSetting() throws Exception {
    start(1);
    JobContext job = new JobContext();
    master.registerJob(job);
    for (ResultPartitionType type :
        List.of(
            ResultPartitionType.PIPELINED,
            ResultPartitionType.PIPELINED_BOUNDED,
            ResultPartitionType.HYBRID_FULL,
            ResultPartitionType.HYBRID_SELECTIVE)) {
      assertThatThrownBy(() -> register(job, partition(new IntermediateDataSetID(), 0, type), 0))
          .isInstanceOf(ExecutionException.class)
          .cause()
          .isInstanceOf(SuppressRestartsException.class)
          .cause()
          .hasMessageContaining(type.toString())
          .hasMessageContaining("execution.batch-shuffle-mode: ALL_EXCHANGES_BLOCKING")
          .hasMessageContaining("streaming jobs need Flink's default shuffle service");

      IntermediateDataSetID input = new IntermediateDataSetID();
      TaskInputsOutputsDescriptor task =
          TaskInputsOutputsDescriptor.from(
              1, Map.of(input, 4), Map.of(), Map.of(), Map.of(input, type), Map.of());
      assertThatThrownBy(() -> master.computeShuffleMemorySizeForTask(task))
          .hasMessageContaining("execution.batch-shuffle-mode: ALL_EXCHANGES_BLOCKING");
    }
  }

  @Test
  void announcesARegionPerOutputAndTheGateMemoryPerInput() throws Exception {
    start(1);
    IntermediateDataSetID in1 = new IntermediateDataSetID();
    IntermediateDataSetID in2 = new IntermediateDataSetID();
    IntermediateDataSetID out = new IntermediateDataSetID();
    TaskInputsOutputsDescriptor task =
        TaskInputsOutputsDescriptor.from(
            2,
            Map.of(in1, 4, in2, 4),
            Map.of(),
            Map.of(out, 8),
            Map.of(in1, ResultPartitionType.BLOCKING, in2, ResultPartitionType.BLOCKING),
            Map.of(out, ResultPartitionType.BLOCKING));
    assertThat(master.computeShuffleMemorySizeForTask(task))
        .isEqualTo(MemorySize.parse("1m").add(MemorySize.parse("512k")));
  }
}
