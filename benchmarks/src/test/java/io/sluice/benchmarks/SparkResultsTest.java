package io.sluice.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code shuffle-bench spark --timed-runs}: which of a workload's timed runs the report gives. */
class SparkResultsTest {
  private static final int BUILTIN = 0;
  private static final int SLUICE = 1;

  private static SparkResults results() {
    return new SparkResults(List.of(SparkBenchmarkDriver.workloads(1, 10, 10).get("repartition")));
  }

  private static SparkResults.TimedRun run(double seconds, String signature, double cpu) {
    return new SparkResults.TimedRun(seconds, signature, cpu, 1 << 30, 1 << 30, 100, null);
  }

  @Test
  void theRunOfMedianTimeIsReportedWithItsOwnServerCpu() {
    SparkResults results = results();
    results.add("repartition", SLUICE, run(5.0, "count=7", 1.5));
    results.add("repartition", SLUICE, run(3.0, "count=7", 1.0));
    results.add("repartition", SLUICE, run(9.0, "count=7", 4.0));

    assertThat(results.median("repartition", SLUICE).seconds).isEqualTo(5.0);
    assertThat(results.median("repartition", SLUICE).serverCpuSeconds).isEqualTo(1.5);
    assertThat(results.signature("repartition", SLUICE)).isEqualTo("count=7");
    assertThat(results.secondsJson("repartition", SLUICE)).isEqualTo("[5,3,9]");
  }

  @Test
  void ofAnEvenCountTheFasterMiddleRunIsReported() {
    SparkResults results = results();
    results.add("repartition", SLUICE, run(4.0, "count=7", 2.0));
    results.add("repartition", SLUICE, run(6.0, "count=7", 3.0));

    assertThat(results.seconds("repartition")).containsExactly(0.0, 4.0, 0.0);
  }

  @Test
  void aColumnThatDidNotRunEqualsNothing() {
    SparkResults results = results();
    results.add("repartition", BUILTIN, run(4.0, "count=7", Double.NaN));
    results.add("repartition", SLUICE, run(5.0, "count=7", 2.0));

    assertThat(results.resultsEqual("repartition", BUILTIN, SLUICE)).isTrue();
    assertThat(results.resultsEqual("repartition", BUILTIN, SLUICE, 2)).isFalse();
  }

  @Test
  void runsWithDifferentResultsAreNotEqualToAnything() {
    SparkResults results = results();
    results.add("repartition", SLUICE, run(4.0, "count=7", 2.0));
    results.add("repartition", SLUICE, run(5.0, "count=8", 2.0));

    results.add("repartition", BUILTIN, run(4.0, "count=7", Double.NaN));

    assertThat(results.signature("repartition", SLUICE))
        .isEqualTo("timed runs differ: count=7 | count=8");
    assertThat(results.resultsEqual("repartition", BUILTIN, SLUICE)).isFalse();
  }
}
