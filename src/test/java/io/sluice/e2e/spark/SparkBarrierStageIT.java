package io.sluice.e2e.spark;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A barrier map stage whose first attempt fails after every task passed the barrier: Spark drops
 * that attempt's map outputs (one task may already have pushed and reported all of its output) and
 * reruns the whole stage; only the rerun may count, and the job returns the built-in shuffle's
 * result. The run is bounded: a hang fails with the stacks of the waiting threads.
 */
class SparkBarrierStageIT {
  private static final Duration BOUND = Duration.ofMinutes(2);

  @TempDir Path tmp;

  @Test
  @Disabled(
      "the same barrier-stage retry hangs now and then on Spark's built-in shuffle too: in a CI run"
          + " of 2026-11-24 the built-in local[2,4] reference collect waited over 5 minutes, and"
          + " once on Sluice in local-cluster mode; a Spark barrier-mode retry problem to isolate"
          + " before this comparison can run in the build")
  void aFailedBarrierStageAttemptCountsOnlyTheRerun() throws Exception {
    SparkSession builtin = SparkSessions.builtin("SparkBarrierStageIT");
    List<String> expected;
    try {
      expected = Jobs.barrierStageRetry(builtin);
    } finally {
      builtin.stop();
    }
    try (SluiceServers servers = new SluiceServers(tmp, 2)) {
      SparkSession spark = SparkSessions.sluice("SparkBarrierStageIT", servers.list(), Map.of());
      TaskFailureCounter failures = new TaskFailureCounter();
      spark.sparkContext().addSparkListener(failures);
      try {
        assertThat(BoundedQuery.run(spark, () -> Jobs.barrierStageRetry(spark), BOUND))
            .isEqualTo(expected);
        spark.sparkContext().listenerBus().waitUntilEmpty();
        assertThat(failures.failedTasks.get()).as("the injected barrier task failure").isPositive();
      } finally {
        spark.stop();
      }
    }
  }
}
