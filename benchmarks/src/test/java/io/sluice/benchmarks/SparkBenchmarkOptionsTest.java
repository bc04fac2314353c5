package io.sluice.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code shuffle-bench spark --server-conf}: settings it passes on and those it refuses. */
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
}
