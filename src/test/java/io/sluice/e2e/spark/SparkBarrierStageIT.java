package io.sluice.e2e.spark;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import scala.Tuple2;

/**
 * A barrier map stage whose first attempt fails after every task passed the barrier (one task
 * halfway through its output, the other after its whole output was pushed and reported): Spark
 * drops that attempt's map outputs and reruns the whole stage; only the rerun may count (the failed
 * attempt writes other numbers), and the job returns the built-in shuffle's result. Both runs are
 * bounded: a hang fails with the stacks of the waiting threads. See {@link Jobs#barrierStageRetry}
 * for why no task of the failed attempt succeeds (a Spark 3.5 scheduler race hung the job).
 */
class SparkBarrierStageIT {
  private static final Duration BOUND = Duration.ofMinutes(1);

  @TempDir Path tmp;

  /** The job's result when only the second attempt's numbers are read. */
  private static List<String> secondAttemptResult() {
    long[] sums = new long[71];
    for (int i = 0; i < 10_000; i++) {
      sums[i % 71] += i;
    }
    List<String> rows = new ArrayList<>();
    for (int k = 0; k < 71; k++) {
      rows.add(new Tuple2<>(k, sums[k]).toString());
    }
    return Jobs.sorted(rows);
  }

  @Test
  void aFailedBarrierStageAttemptCountsOnlyTheRerun() throws Exception {
    List<String> expected = secondAttemptResult();
    SparkSession builtin = SparkSessions.builtin("SparkBarrierStageIT");
    try {
      TaskFailureCounter failures = new TaskFailureCounter();
      builtin.sparkContext().addSparkListener(failures);
      assertThat(BoundedQuery.run(builtin, () -> Jobs.barrierStageRetry(builtin), BOUND))
          .isEqualTo(expected);
      builtin.sparkContext().listenerBus().waitUntilEmpty();
      assertThat(failures.failedTasks.get())
          .as("the failed barrier attempt's tasks: %s", failures.failures)
          .isEqualTo(2);
    } finally {
      builtin.stop();
    }
    try (SluiceServers servers = new SluiceServers(tmp, 2)) {
      // a barrier job waits until there are slots for all of its stage's tasks: the executors
      // register after the session starts, and Spark checks again after this interval (15s)
      SparkSession spark =
          SparkSessions.sluice(
              "SparkBarrierStageIT",
              servers.list(),
              Map.of("spark.scheduler.barrier.maxConcurrentTasksCheck.interval", "1s"));
      TaskFailureCounter failures = new TaskFailureCounter();
      spark.sparkContext().addSparkListener(failures);
      try {
        assertThat(BoundedQuery.run(spark, () -> Jobs.barrierStageRetry(spark), BOUND))
            .isEqualTo(expected);
        spark.sparkContext().listenerBus().waitUntilEmpty();
        // Known Sluice issue, to tighten to exactly the two failures of stage attempt 0 once the
        // coordinator no longer counts them: the end that the failed attempt's task 1 reported
        // counts toward the generation's commit, so the commit can start as soon as the rerun's
        // task 0 ends, while the rerun's task 1 still pushes: that push is answered STAGE_ENDED,
        // the barrier stage fails once more, and its next attempt writes to a new generation.
        // In about one run of six here; the result is right either way.
        List<String> rerunFailures =
            failures.failures.stream()
                .filter(f -> !f.startsWith("stage 0.0 "))
                .collect(java.util.stream.Collectors.toList());
        assertThat(failures.failures)
            .as("failed tasks")
            .filteredOn(f -> f.startsWith("stage 0.0 "))
            .hasSize(2);
        assertThat(rerunFailures)
            .as("failed tasks of the barrier stage's reruns")
            .allMatch(f -> f.contains("STAGE_ENDED") && f.contains("is committed; no more pushes"))
            .hasSizeLessThanOrEqualTo(1);
        assertThat(failures.retriedStages.get()).as("the barrier stage's rerun").isPositive();
      } finally {
        spark.stop();
      }
    }
  }
}
