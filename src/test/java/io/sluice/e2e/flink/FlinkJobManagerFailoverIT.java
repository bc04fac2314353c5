package io.sluice.e2e.flink;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.e2e.flink.FlinkJobs.Runs;
import io.sluice.e2e.flink.FlinkJobs.Sum;
import io.sluice.server.ShuffleServer;
import io.sluice.testutil.TestCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.configuration.BatchExecutionOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.HighAvailabilityOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.highavailability.nonha.embedded.EmbeddedHaServicesWithLeadershipControl;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.TestingMiniCluster;
import org.apache.flink.runtime.minicluster.TestingMiniClusterConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * JobManager failover of a batch job ({@code execution.batch.job-recovery.enabled}) whose exchanges
 * go through Sluice: the JobManager loses leadership once every producer finished and the consumers
 * started, and a new one takes the job over. The producers do not run again (the new JobManager's
 * shuffle master restores the placement from Flink's snapshot and finds the producers' partitions
 * on the servers), the consumers do, and the result equals Flink's own shuffle's. As Flink's own
 * JobManager-failover tests, on a MiniCluster whose leadership the test controls.
 */
class FlinkJobManagerFailoverIT {
  @TempDir Path tmp;

  private static final ConcurrentLinkedQueue<String> RESULTS = new ConcurrentLinkedQueue<>();

  /** Consumers of the first JobManager wait here until it lost leadership. */
  static final class HoldUntilFailover extends Sum {
    private static final long serialVersionUID = 1L;
    static volatile CountDownLatch started = new CountDownLatch(1);
    static final AtomicBoolean FAILED_OVER = new AtomicBoolean();

    @Override
    public void open(OpenContext openContext) throws Exception {
      super.open(openContext);
      started.countDown();
      while (!FAILED_OVER.get()) {
        Thread.sleep(10);
      }
    }
  }

  /** Keeps what the job's last operator emits. */
  static final class Keep extends RichMapFunction<String, String> {
    private static final long serialVersionUID = 1L;

    @Override
    public String map(String s) {
      RESULTS.add(s);
      return s;
    }
  }

  /** What the interrupted job computes, on Flink's own shuffle. */
  private static List<String> builtin() throws Exception {
    MiniCluster flink = FlinkHarness.builtin();
    try {
      return FlinkHarness.collectSorted(
          FlinkJobs.sumPerKey(FlinkHarness.batch(flink, 2), 2, 2, new Sum()));
    } finally {
      flink.close();
    }
  }

  /** Something done to the servers while the job has no JobManager. */
  private interface WhileLeaderless {
    void act(TestCluster servers) throws Exception;
  }

  private static final WhileLeaderless NOTHING = servers -> {};

  /**
   * Runs the job on Sluice servers ({@code servers}), fails its JobManager over once every producer
   * finished, does {@code meanwhile} before the new JobManager takes over, and returns the job's
   * result, sorted.
   */
  private List<String> runWithFailover(int servers, WhileLeaderless meanwhile) throws Exception {
    Runs.clear();
    RESULTS.clear();
    HoldUntilFailover.started = new CountDownLatch(1);
    HoldUntilFailover.FAILED_OVER.set(false);
    ExecutorService haExecutor = Executors.newSingleThreadExecutor();
    try (TestCluster cluster = TestCluster.start(tmp.resolve("servers"), servers)) {
      Configuration conf = FlinkHarness.sluiceConf(cluster);
      conf.set(BatchExecutionOptions.JOB_RECOVERY_ENABLED, true);
      conf.set(BatchExecutionOptions.JOB_RECOVERY_SNAPSHOT_MIN_PAUSE, Duration.ZERO);
      conf.set(HighAvailabilityOptions.HA_STORAGE_PATH, tmp.resolve("ha").toUri().toString());
      EmbeddedHaServicesWithLeadershipControl ha =
          new EmbeddedHaServicesWithLeadershipControl(haExecutor);
      TestingMiniCluster flink =
          TestingMiniCluster.newBuilder(
                  TestingMiniClusterConfiguration.newBuilder()
                      .setConfiguration(conf)
                      .setNumTaskManagers(2)
                      .setNumSlotsPerTaskManager(2)
                      .build())
              .setHighAvailabilityServicesSupplier(() -> ha)
              .build();
      flink.start();
      try {
        StreamExecutionEnvironment env = FlinkHarness.batch(flink, 2);
        FlinkJobs.sumPerKey(env, 2, 2, new HoldUntilFailover())
            .map(new Keep())
            .sinkTo(new DiscardingSink<>());
        JobClient job = env.executeAsync();
        JobID jobId = job.getJobID();
        // the consumers start once every producer finished (blocking exchanges)
        assertThat(HoldUntilFailover.started.await(60, TimeUnit.SECONDS))
            .as("a consumer started")
            .isTrue();
        assertThat(Runs.starts(FlinkJobs.PRODUCER)).isEqualTo(2);

        ha.revokeJobMasterLeadership(jobId).get(60, TimeUnit.SECONDS);
        meanwhile.act(cluster);
        HoldUntilFailover.FAILED_OVER.set(true);
        ha.grantJobMasterLeadership(jobId).get(60, TimeUnit.SECONDS);

        assertThat(job.getJobExecutionResult().get(120, TimeUnit.SECONDS)).isNotNull();
        assertThat(job.getJobStatus().get(10, TimeUnit.SECONDS)).isEqualTo(JobStatus.FINISHED);
        if (meanwhile == NOTHING) {
          // every server is up to be asked
          assertEnded(cluster);
        }
      } finally {
        flink.close();
      }
    } finally {
      haExecutor.shutdownNow();
    }
    List<String> results = new ArrayList<>(RESULTS);
    Collections.sort(results);
    return results;
  }

  /**
   * The job's end drops its application at once, job recovery or not: Flink released every
   * partition, so the JobManager that stops is not one that lost leadership mid-job.
   */
  private static void assertEnded(TestCluster cluster) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (applications(cluster) > 0 && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    assertThat(applications(cluster)).as("applications left on the servers").isZero();
  }

  private static int applications(TestCluster cluster) {
    int n = 0;
    for (ShuffleServer s : cluster.servers()) {
      n += s.registry().applicationCount();
    }
    return n;
  }

  @Test
  void finishedProducersDoNotRunAgainAfterAJobManagerFailover() throws Exception {
    List<String> builtin = builtin();
    assertThat(runWithFailover(2, NOTHING)).as("the result after the failover").isEqualTo(builtin);
    assertThat(Runs.starts(FlinkJobs.PRODUCER))
        .as("producer attempts started: the two of the first JobManager only")
        .isEqualTo(2);
    assertThat(Runs.starts(FlinkJobs.CONSUMER))
        .as("consumer attempts started: before and after the failover")
        .isGreaterThan(2);
  }

  /**
   * A server lost while no JobManager leads takes one producer's partition with it: the new
   * JobManager finds the other on its server and reruns only the producer whose partition is gone.
   */
  @Test
  void onlyTheProducerWhosePartitionIsGoneRunsAgain() throws Exception {
    List<String> builtin = builtin();
    // two producers placed round robin on two servers: one partition on each
    assertThat(runWithFailover(2, servers -> servers.server(0).close()))
        .as("the result after the failover")
        .isEqualTo(builtin);
    assertThat(Runs.starts(FlinkJobs.PRODUCER))
        .as("producer attempts started: two, then one again for the partition lost")
        .isEqualTo(3);
  }
}
