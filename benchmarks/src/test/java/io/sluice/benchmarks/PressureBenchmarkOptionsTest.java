package io.sluice.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.beust.jcommander.JCommander;
import com.beust.jcommander.ParameterException;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;

/**
 * {@code shuffle-bench pressure --chart}: the file it takes, the one it refuses before anything
 * runs, and the chart of a result table. No server starts here.
 */
class PressureBenchmarkOptionsTest {
  private static PressureBenchmark.Options parse(String... args) {
    PressureBenchmark.Options options = new PressureBenchmark.Options();
    JCommander.newBuilder().addObject(options).build().parse(args);
    return options;
  }

  private static int run(ByteArrayOutputStream out, ByteArrayOutputStream err, String... args) {
    return PressureBenchmark.run(
        args,
        new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
  }

  @Test
  void chartIsOffByDefaultAndNamesAFileInADirectoryThatExists(@TempDir Path dir) {
    assertThat(parse().chart).isNull();
    String file = dir.resolve("pressure.svg").toString();
    assertThat(parse("--chart", file).chart).isEqualTo(file);
    ByteArrayOutputStream help = new ByteArrayOutputStream();
    assertThat(run(help, new ByteArrayOutputStream(), "--help")).isZero();
    assertThat(help.toString(StandardCharsets.UTF_8)).contains("--chart");
  }

  @Test
  void aChartInADirectoryThatDoesNotExistIsRefusedBeforeTheRun(@TempDir Path dir) {
    String missing = dir.resolve("no-such-dir/pressure.svg").toString();
    assertThatThrownBy(() -> parse("--chart", missing))
        .isInstanceOf(ParameterException.class)
        .hasMessageContaining("--chart");
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();

    int exit = run(out, err, "--chart", missing, "--dir", dir.resolve("data").toString());

    assertThat(exit).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8))
        .contains("shuffle-bench pressure: --chart")
        .contains("does not exist");
    assertThat(out.toString(StandardCharsets.UTF_8)).isEmpty();
    assertThat(dir.resolve("data")).doesNotExist();
  }

  private static RoundResult round(long ingestMillis, long readMillis) {
    RoundResult.Builder b = new RoundResult.Builder(16);
    b.bytesWritten = 1L << 30;
    b.pushNanos = ingestMillis * 1_000_000;
    b.readNanos = readMillis * 1_000_000;
    return b.build();
  }

  @Test
  void theChartShowsIngestAndReadOfTheBaselineThenUnderPressure() throws Exception {
    PressureBenchmark.Options options = parse("--memory", "64m", "--unbounded-memory", "3g");
    // 1 GiB ingested in 4 s (256 MB/s) under pressure, in 2 s (512 MB/s) without
    RoundResult bounded = round(4000, 2000);
    RoundResult free = round(2000, 1000);

    Document doc = BarChartTest.parse(PressureBenchmark.chart(options, bounded, free).svg());

    assertThat(BarChartTest.texts(doc, "group"))
        .containsExactly("ingest (until committed)", "read");
    assertThat(BarChartTest.texts(doc, "legend"))
        .containsExactly("memory max 3g (baseline)", "memory max 64m");
    assertThat(BarChartTest.texts(doc, "value")).containsExactly("512", "256", "1024", "512");
    assertThat(BarChartTest.texts(doc, "unit")).containsExactly("MB/s (MB = 2^20 bytes)");
    assertThat(BarChartTest.texts(doc, "title").get(0)).startsWith("shuffle-bench pressure:");
  }
}
