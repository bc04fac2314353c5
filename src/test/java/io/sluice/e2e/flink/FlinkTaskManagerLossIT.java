package io.sluice.e2e.flink;

import static io.sluice.e2e.flink.FlinkJobs.CONSUMER;
import static io.sluice.e2e.flink.FlinkJobs.PRODUCER;
import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.e2e.flink.FlinkJobs.Runs;
import io.sluice.e2e.flink.FlinkJobs.Sum;
import io.sluice.testutil.TestCluster;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The promise Sluice makes Flink: a producer's output outlives the TaskManager that wrote it, so a
 * TaskManager can go once its producers finished. The job is {@link FlinkJobs#sumPerKey} with two
 * producers and three consumers, on a MiniCluster of three TaskManagers of two slots that spreads
 * slots evenly ({@code taskmanager.load-balance.mode: SLOTS}).
 *
 * <p>Deterministic timing: the first attempt of each consumer waits on open, before it reads
 * anything. Once one waits (so every producer finished), the test starts a fourth TaskManager and
 * terminates every TaskManager a producer ran on (each producer records its TaskManager's index,
 * read from its working directory), whichever Flink picked, then lets the consumers read: no
 * process that ran a producer is left. With slots spread evenly, the producers run on two
 * TaskManagers and the consumers take the producers' two freed slots plus one on the third
 * TaskManager, so both ways a consumer meets the loss are covered: the consumer on the third
 * TaskManager reads on, never restarted, and the two on terminated TaskManagers fail and run again
 * elsewhere. That is a consumer failover, and the producers' partitions are still tracked (their
 * descriptors hold no local resources), so no producer runs again.
 *
 * <p>The same procedure on Flink's built-in shuffle, whose partitions live on the producers'
 * TaskManagers, makes Flink rerun producers: that run is the control, and its result the expected
 * one.
 */
class FlinkTaskManagerLossIT {
  @TempDir static Path tmp;

  private static volatile CountDownLatch consumerWaiting = new CountDownLatch(1);
  private static volatile CountDownLatch consumersMayRead = new CountDownLatch(1);

  private static Configuration spreadSlots() {
    Configuration settings = new Configuration();
    settings.setString("taskmanager.load-balance.mode", "SLOTS");
    return settings;
  }

  @Test
  void producersOutputOutlivesTheTaskManagersThatRanThem() throws Exception {
    List<String> expected;
    SortedSet<String> builtinProducerAttempts;
    MiniCluster builtin = FlinkHarness.builtin(spreadSlots(), 3);
    try {
      expected = runLosingProducerTaskManagers(builtin, new TreeSet<>());
      builtinProducerAttempts = Runs.attempts(PRODUCER);
    } finally {
      builtin.close();
    }
    // the control: on the built-in shuffle the producers' output went with their TaskManagers
    assertThat(builtinProducerAttempts)
        .as("producer attempts on the built-in shuffle")
        .contains("0/0", "1/0")
        .hasSizeGreaterThan(2);

    try (TestCluster servers = TestCluster.start(tmp.resolve("sluice"), 2)) {
      Configuration settings = FlinkHarness.observing();
      settings.addAll(spreadSlots());
      MiniCluster flink = FlinkHarness.sluice(servers, settings, 3);
      try {
        ObservingShuffleServiceFactory.reset();
        SortedSet<Integer> terminated = new TreeSet<>();

        List<String> result = runLosingProducerTaskManagers(flink, terminated);

        assertThat(result).hasSize(31).isEqualTo(expected);
        // every producer ran once: its output was read from Sluice after its TaskManager ended
        assertThat(Runs.attempts(PRODUCER)).containsExactly("0/0", "1/0");
        assertThat(ObservingShuffleServiceFactory.placed())
            .filteredOn(d -> d.mapPartitionId().shuffleId() == 0)
            .extracting(d -> d.mapPartitionId().mapIndex() + "/" + d.mapPartitionId().attempt())
            .containsExactlyInAnyOrder("0/0", "1/0");
        assertThat(ObservingShuffleServiceFactory.reportedLost()).isEmpty();

        SortedMap<String, Integer> consumers = Runs.placement(CONSUMER);
        assertThat(terminated)
            .as("TaskManagers terminated; consumers ran %s", consumers)
            .hasSize(2);
        // a consumer on a TaskManager that stayed read on, never restarted ...
        List<String> survivors =
            consumers.entrySet().stream()
                .filter(e -> e.getKey().endsWith("/0") && !terminated.contains(e.getValue()))
                .map(Map.Entry::getKey)
                .collect(Collectors.toList());
        // (where Flink places the consumers is its choice: when none landed on a TaskManager that
        // stayed, there is nothing to check here; the producers' single run above is the point)
        for (String survivor : survivors) {
          assertThat(consumers).doesNotContainKey(survivor.replace("/0", "/1"));
        }
        // ... and those on terminated ones ran again, without their producers
        assertThat(consumers.keySet())
            .as("consumers ran %s", consumers)
            .anyMatch(attempt -> attempt.endsWith("/1"));
      } finally {
        flink.close();
      }
    }
  }

  /**
   * Runs the job on {@code cluster} (three TaskManagers): once a consumer waits on open, starts
   * TaskManager 3, terminates the TaskManagers the producers ran on (added to {@code terminated})
   * and lets the consumers read.
   */
  private static List<String> runLosingProducerTaskManagers(
      MiniCluster cluster, SortedSet<Integer> terminated) throws Exception {
    Runs.clear();
    consumerWaiting = new CountDownLatch(1);
    consumersMayRead = new CountDownLatch(1);
    CompletableFuture<List<String>> job =
        FlinkHarness.collectSortedAsync(
            FlinkJobs.sumPerKey(
                FlinkHarness.batch(cluster, 2), 2, 3, new ReadOnceProducerTaskManagersAreGone()));
    try {
      FlinkHarness.await(consumerWaiting, job, "a consumer opened");
      // consumers start once every producer finished: every producer has recorded its TaskManager
      SortedSet<Integer> producerTaskManagers = Runs.taskManagers(PRODUCER);
      cluster.startTaskManager();
      for (int tm : producerTaskManagers) {
        cluster.terminateTaskManager(tm).get(60, TimeUnit.SECONDS);
        terminated.add(tm);
      }
    } finally {
      consumersMayRead.countDown();
    }
    return job.get(120, TimeUnit.SECONDS);
  }

  /** A consumer whose first attempt waits on open until the test lets it read. */
  static final class ReadOnceProducerTaskManagersAreGone extends Sum {
    private static final long serialVersionUID = 1L;

    @Override
    public void open(OpenContext openContext) throws Exception {
      super.open(openContext);
      if (FlinkJobs.attempt(getRuntimeContext()) == 0) {
        consumerWaiting.countDown();
        if (!consumersMayRead.await(120, TimeUnit.SECONDS)) {
          throw new IllegalStateException("the test never let the consumers read");
        }
      }
    }
  }
}
