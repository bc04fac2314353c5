package io.sluice.e2e.flink;

import static io.sluice.e2e.flink.FlinkJobs.CONSUMER;
import static io.sluice.e2e.flink.FlinkJobs.PRODUCER;
import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.e2e.flink.FlinkJobs.Runs;
import io.sluice.e2e.flink.FlinkJobs.Sum;
import io.sluice.flink.SluiceShuffleDescriptor;
import io.sluice.testutil.TestCluster;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
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
 * {@code sluice.replication.factor} 2 for a Flink batch job: every result partition is written to a
 * primary and a replica server, so a server lost after the producers finished costs no producer
 * rerun. The job is {@link FlinkJobs#sumPerKey} with four producers and two consumers on three
 * servers; the first attempt of a consumer stops server 0 from its operator's {@code open()} (the
 * MiniCluster runs in this JVM), and every first attempt then waits long enough for the shuffle
 * master's heartbeat (every 100 ms here) to find server 0 down before it reads. With two copies the
 * master reports no partition lost and the consumers read the partitions whose primary was server 0
 * from their replicas; with one copy the same loss reruns the producers (today's behaviour). Both
 * give the result of Flink's built-in shuffle.
 */
class FlinkReplicationIT {
  @TempDir Path tmp;

  private static volatile TestCluster servers;
  private static final AtomicBoolean serverStopped = new AtomicBoolean();
  private static volatile CountDownLatch lossNoticed = new CountDownLatch(1);
  // with one copy the consumers read once the master has reported server 0's partitions lost
  private static volatile boolean awaitLossReport;
  private static List<String> expected;
  private MiniCluster flink;

  @BeforeAll
  static void reference() throws Exception {
    MiniCluster builtin = FlinkHarness.builtin();
    try {
      expected = FlinkHarness.collectSorted(job(FlinkHarness.batch(builtin, 2)));
    } finally {
      builtin.close();
    }
  }

  private void start(int factor) throws Exception {
    serverStopped.set(false);
    lossNoticed = new CountDownLatch(1);
    awaitLossReport = factor == 1;
    Runs.clear();
    ObservingShuffleServiceFactory.reset();
    servers = TestCluster.start(tmp.resolve("sluice"), 3);
    Configuration settings = FlinkHarness.observing();
    settings.setString("sluice.replication.factor", Integer.toString(factor));
    settings.setString("sluice.coordinator.heartbeatInterval", "100ms");
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

  private static DataStream<String> job(StreamExecutionEnvironment env) {
    return FlinkJobs.sumPerKey(env, 4, 2, new StopServerZeroOnOpen());
  }

  @Test
  void withTwoCopiesALostServerRerunsNoProducer() throws Exception {
    start(2);
    int port0 = servers.server(0).port();

    List<String> result = FlinkHarness.collectSorted(job(FlinkHarness.batch(flink, 2)));

    assertThat(result).hasSize(31).isEqualTo(expected);
    assertThat(serverStopped).as("server 0 was stopped during the job").isTrue();
    List<SluiceShuffleDescriptor> producerOutputs = producerOutputs();
    assertThat(producerOutputs)
        .as("every producer output has a replica on another server")
        .allSatisfy(
            d -> {
              assertThat(d.replicaHost()).isNotNull();
              assertThat(d.replicaPort()).isNotEqualTo(d.port());
            });
    assertThat(producerOutputs)
        .as("producer outputs whose primary was server 0 (read from their replicas)")
        .anySatisfy(d -> assertThat(d.port()).isEqualTo(port0));
    assertThat(ObservingShuffleServiceFactory.reportedLost())
        .as("partitions the shuffle master reported lost")
        .isEmpty();
    assertThat(Runs.attempts(PRODUCER)).containsExactly("0/0", "1/0", "2/0", "3/0");
    assertThat(Runs.attempts(CONSUMER)).containsExactly("0/0", "1/0");
    assertThat(servers.server(1).metrics().replicaBytesPushed().getCount()).isPositive();
  }

  @Test
  void withOneCopyTheSameLossRerunsTheProducersOfItsPartitions() throws Exception {
    start(1);
    int port0 = servers.server(0).port();

    List<String> result = FlinkHarness.collectSorted(job(FlinkHarness.batch(flink, 2)));

    assertThat(result).hasSize(31).isEqualTo(expected);
    List<SluiceShuffleDescriptor> lostOutputs =
        producerOutputs().stream()
            .filter(d -> d.mapPartitionId().attempt() == 0 && d.port() == port0)
            .collect(Collectors.toList());
    assertThat(lostOutputs).as("producer outputs on server 0").isNotEmpty();
    assertThat(producerOutputs()).allSatisfy(d -> assertThat(d.replicaHost()).isNull());
    assertThat(ObservingShuffleServiceFactory.reportedLost())
        .containsAll(
            lostOutputs.stream()
                .map(SluiceShuffleDescriptor::getResultPartitionID)
                .collect(Collectors.toList()));
    for (SluiceShuffleDescriptor d : lostOutputs) {
      assertThat(Runs.attempts(PRODUCER)).contains(d.mapPartitionId().mapIndex() + "/1");
    }
  }

  /** The producers' data set is the first the job places (shuffle 0). */
  private static List<SluiceShuffleDescriptor> producerOutputs() {
    return ObservingShuffleServiceFactory.placed().stream()
        .filter(d -> d.mapPartitionId().shuffleId() == 0)
        .collect(Collectors.toList());
  }

  /**
   * The first attempt of each consumer: the first to open stops server 0; each then waits before it
   * reads: with one copy until the master has reported the partitions on server 0 lost (after
   * {@code sluice.client.serverRestartWait}, as for any server that stopped taking connections),
   * otherwise a second (ten heartbeats of the shuffle master). Without that wait the consumers
   * could fail first and Flink would release and rerun a producer before the master reports it.
   */
  static final class StopServerZeroOnOpen extends Sum {
    private static final long serialVersionUID = 1L;

    @Override
    public void open(OpenContext openContext) throws Exception {
      super.open(openContext);
      if (FlinkJobs.attempt(getRuntimeContext()) != 0) {
        return;
      }
      if (serverStopped.compareAndSet(false, true)) {
        servers.server(0).close();
        if (awaitLossReport) {
          ObservingShuffleServiceFactory.lossReported().get(30, TimeUnit.SECONDS);
        } else {
          Thread.sleep(1000);
        }
        lossNoticed.countDown();
      }
      lossNoticed.await(30, TimeUnit.SECONDS);
    }
  }
}
