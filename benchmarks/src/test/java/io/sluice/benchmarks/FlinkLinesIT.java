package io.sluice.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The one 2.x plugin jar, built against Flink 2.3, on the oldest 2.x release it serves: {@code
 * shuffle-bench flink --flink-line 2.0} runs a small keyBy job on Flink 2.0.1's own jars and the
 * shaded jar alone (a child JVM, as operators install it), on Sluice and on Flink's built-in
 * shuffle, with equal results. Times are printed, not checked.
 */
class FlinkLinesIT {
  @Test
  void theTwoXJarRunsAJobOnFlink20WithTheBuiltInResult(@TempDir Path dir) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();

    int exit =
        FlinkBenchmark.run(
            new String[] {
              "--flink-line", "2.0",
              "--workloads", "keyby-sum",
              "--scale", "0.005",
              "--rounds", "1",
              "--dir", dir.toString()
            },
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));

    String output = out.toString(StandardCharsets.UTF_8);
    assertThat(exit).as("exit code; output:\n%s\n%s", output, err).isZero();
    String[] lines = output.strip().split("\n");
    assertThat(lines[lines.length - 1])
        .startsWith("{\"benchmark\":\"flink\"")
        .contains("\"flinkVersion\":\"2.0.1\"")
        .contains("\"resultsEqual\":true")
        .doesNotContain("\"resultsEqual\":false");
  }
}
