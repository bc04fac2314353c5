package io.sluice.e2e.flink;

import static io.sluice.e2e.flink.FlinkJobs.CONSUMER;
import static io.sluice.e2e.flink.FlinkJobs.PRODUCER;
import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.e2e.flink.FlinkJobs.Runs;
import io.sluice.e2e.flink.FlinkJobs.Sum;
import io.sluice.flink.SluiceShuffleDescriptor;
import io.sluice.protocol.MapPartitionId;
import io.sluice.testutil.TestCluster;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A producer's data is lost after it finished: a consumer's first attempt stops the server it was
 * written to (from its operator's {@code open()}, through a static handle to the test's servers;
 * the MiniCluster runs in this JVM), and the job still completes with the result of Flink's
 * built-in shuffle. The job is {@link FlinkJobs#sumPerKey} with four producers, placed round robin
 * on two servers (two on each), and two consumers. Flink learns of the loss in one of two ways, one
 * test each: from the consumer whose read fails, or from the shuffle master, whose heartbeat finds
 * the server down and reports every partition on it lost before a consumer reads. Each test starts
 * its own servers and Sluice MiniCluster.
 */
class FlinkServerLossIT {
  @TempDir Path tmp;

  /** The servers the running job uses, for its operators. */
  private static volatile TestCluster servers;

  private static final AtomicBoolean serverStopped = new AtomicBoolean();
  private static List<String> expected;
  private MiniCluster flink;

  @BeforeAll
  static void reference() throws Exception {
    MiniCluster builtin = FlinkHarness.builtin();
    try {
      expected = FlinkHarness.collectSorted(job(FlinkHarness.batch(builtin, 2), new Sum()));
    } finally {
      builtin.close();
    }
  }

  private void start(Configuration settings) throws Exception {
    serverStopped.set(false);
    Runs.clear();
    ObservingShuffleServiceFactory.reset();
    servers = TestCluster.start(tmp.resolve("sluice"), 2);
    flink = FlinkHarness.sluice(servers, settings);
  }

  @AfterEach
  void stop() throws Exception {
    if (flink != null) {
      flink.close();
      flink = null;
    }
    if (servers != null) {
      servers.close();
      servers = null;
    }
  }

  private static DataStream<String> job(StreamExecutionEnvironment env, Sum sum) {
    return FlinkJobs.sumPerKey(env, 4, 2, sum);
  }

  /**
   * The read path: consumer 0 stops server 0 and reads at once. Its read fails with a {@code
   * PartitionNotFoundException} naming a producer's partition, so Flink reruns that producer; the
   * placement leaves the dead server out of the rerun. (The heartbeat runs every 10 s here, the
   * default, so it plays no part; a rerun placed round robin may still find server 0 down and
   * report the rest of its partitions.)
   */
  @Test
  void aConsumerWhoseReadFailsMakesFlinkRerunTheProducer() throws Exception {
    start(new Configuration());
    long pushedToServer1 = servers.server(1).metrics().bytesPushed().getCount();

    List<String> result =
        FlinkHarness.collectSorted(job(FlinkHarness.batch(flink, 2), new StopServerZeroOnOpen()));

    assertThat(result).hasSize(31).isEqualTo(expected);
    assertThat(serverStopped).as("server 0 was stopped during the job").isTrue();
    // a producer ran a second time, its data now on the server that answers
    assertThat(Runs.attempts(PRODUCER)).contains("0/0", "1/0", "2/0", "3/0").hasSizeGreaterThan(4);
    assertThat(servers.server(1).metrics().bytesPushed().getCount()).isGreaterThan(pushedToServer1);
    assertThat(servers.server(1).metrics().mapReads().getCount()).isPositive();
  }

  /** Stops server 0 in the first attempt of consumer 0, before it reads anything. */
  static final class StopServerZeroOnOpen extends Sum {
    private static final long serialVersionUID = 1L;

    @Override
    public void open(OpenContext openContext) throws Exception {
      super.open(openContext);
      if (FlinkJobs.subtask(getRuntimeContext()) == 0
          && FlinkJobs.attempt(getRuntimeContext()) == 0
          && serverStopped.compareAndSet(false, true)) {
        servers.server(0).close();
      }
    }
  }

  /**
   * The report path, {@code SluiceShuffleMaster.serverLost}: the first attempt of each consumer
   * waits on open, before it reads, until the shuffle master has reported server 0's partitions
   * lost and the JobMaster has processed the report (the first to open stops server 0; the
   * placement's heartbeat, every 100 ms here, finds it down). So the report always comes first, and
   * when a consumer's read then fails, Flink's failover finds every partition of server 0 untracked
   * and reruns all their producers in one round. Without the report it would rerun only the
   * producer of the partition the failed read named, and the consumers would fail again on the
   * other one: so consumers running exactly two attempts proves the report took effect.
   */
  @Test
  void aServerTheHeartbeatFindsDownIsReportedAndAllItsProducersRerunInOneRound() throws Exception {
    Configuration settings = FlinkHarness.observing();
    settings.setString("sluice.coordinator.heartbeatInterval", "100ms");
    start(settings);
    int port0 = servers.server(0).port();
    int port1 = servers.server(1).port();

    List<String> result =
        FlinkHarness.collectSorted(
            job(FlinkHarness.batch(flink, 2), new StopServerZeroAndAwaitTheReport()));

    assertThat(result).hasSize(31).isEqualTo(expected);
    List<SluiceShuffleDescriptor> placed = ObservingShuffleServiceFactory.placed();
    // the producers' data set is the first the job places (shuffle 0), round robin
    List<SluiceShuffleDescriptor> lostOutputs =
        placed.stream()
            .filter(d -> d.mapPartitionId().shuffleId() == 0)
            .filter(d -> d.mapPartitionId().attempt() == 0 && d.port() == port0)
            .collect(Collectors.toList());
    assertThat(lostOutputs).as("producer outputs on server 0").hasSize(2);
    assertThat(ObservingShuffleServiceFactory.reportedLost())
        .as("partitions the shuffle master reported lost")
        .containsAll(
            lostOutputs.stream()
                .map(SluiceShuffleDescriptor::getResultPartitionID)
                .collect(Collectors.toList()));

    // exactly the producers whose output was on server 0 ran again, once, writing to server 1
    Set<Integer> rerun = mapIndexes(lostOutputs);
    Set<String> producerAttempts = new TreeSet<>();
    for (int p = 0; p < 4; p++) {
      producerAttempts.add(p + "/0");
      if (rerun.contains(p)) {
        producerAttempts.add(p + "/1");
      }
    }
    assertThat(Runs.attempts(PRODUCER)).isEqualTo(producerAttempts);
    assertThat(
            placed.stream()
                .filter(d -> d.mapPartitionId().shuffleId() == 0)
                .filter(d -> d.mapPartitionId().attempt() == 1))
        .extracting(d -> d.mapPartitionId().mapIndex() + "@" + d.port())
        .containsExactlyInAnyOrderElementsOf(
            rerun.stream().map(p -> p + "@" + port1).collect(Collectors.toList()));
    // one failover round: every consumer ran twice, none a third time
    assertThat(Runs.attempts(CONSUMER)).containsExactly("0/0", "0/1", "1/0", "1/1");
  }

  private static Set<Integer> mapIndexes(List<SluiceShuffleDescriptor> descriptors) {
    return descriptors.stream()
        .map(SluiceShuffleDescriptor::mapPartitionId)
        .map(MapPartitionId::mapIndex)
        .collect(Collectors.toCollection(TreeSet::new));
  }

  /**
   * The first attempt of each consumer: the first to open stops server 0; each then waits until the
   * shuffle master's report of the loss has been processed by the JobMaster.
   */
  static final class StopServerZeroAndAwaitTheReport extends Sum {
    private static final long serialVersionUID = 1L;

    @Override
    public void open(OpenContext openContext) throws Exception {
      super.open(openContext);
      if (FlinkJobs.attempt(getRuntimeContext()) != 0) {
        return;
      }
      if (serverStopped.compareAndSet(false, true)) {
        servers.server(0).close();
      }
      try {
        ObservingShuffleServiceFactory.lossReported().get(30, TimeUnit.SECONDS);
      } catch (TimeoutException e) {
        // no report: read anyway; the test's assertions on the report fail
      }
    }
  }
}
