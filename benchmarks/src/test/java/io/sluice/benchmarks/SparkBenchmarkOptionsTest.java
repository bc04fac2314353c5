package io.sluice.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code shuffle-bench spark}: options it passes on and those it refuses before anything runs. */
class SparkBenchmarkOptionsTest {
  @Test
  void serverSettingsAreKeyValuePairs() {
    assertThat(
            SparkBenchmark.SparkBenchmarkRun.serverSettings(
                List.of("sluice.read.sortMapRanges=true", " sluice.flush.size = 2m")))
        .containsEntry("sluice.read.sortMapRanges", "true")
        .containsEntry("sluice.flush.size", "2m");
  }

  @Test
  void aSettingWithoutValueIsRefusedBeforeAnythingStarts() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int exit =
        SparkBenchmark.run(
            new String[] {"--server-conf", "sluice.read.sortMapRanges"},
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
    assertThat(exit).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8))
        .contains("--server-conf takes key=value")
        .contains("'sluice.read.sortMapRanges'");
  }

  @Test
  void anUnknownSparkLineOrWorkloadIsRefusedNamingWhatIsKnown() {
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    PrintStream errors = new PrintStream(err, true, StandardCharsets.UTF_8);
    PrintStream out = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
    assertThat(SparkBenchmark.run(new String[] {"--spark-line", "3.4"}, out, errors)).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8))
        .contains("--spark-line must be one of")
        .contains("4.2")
        .contains("'3.4'");
    err.reset();
    assertThat(SparkBenchmark.run(new String[] {"--workloads", "sort"}, out, errors)).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8))
        .contains("unknown workload 'sort'")
        .contains("small-blocks");
  }
}
