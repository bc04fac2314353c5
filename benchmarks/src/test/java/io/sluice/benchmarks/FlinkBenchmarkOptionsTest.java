package io.sluice.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;

/**
 * {@code shuffle-bench flink --chart}: the file it takes, the one it refuses before the child JVM
 * starts, and the chart of a result table. No Flink job runs here.
 */
class FlinkBenchmarkOptionsTest {
  private static FlinkBenchmark.Options parse(String... args) {
    FlinkBenchmark.Options options = new FlinkBenchmark.Options();
    PrintStream out = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
    assertThat(BenchmarkCli.parse(FlinkBenchmark.NAME, options, () -> options.help, args, out, out))
        .isNull();
    return options;
  }

  @Test
  void chartIsOffByDefaultAndNamesAFileInADirectoryThatExists(@TempDir Path dir) {
    assertThat(parse().chart).isNull();
    String file = dir.resolve("flink.svg").toString();
    assertThat(parse("--chart", file).chart).isEqualTo(file);
    ByteArrayOutputStream help = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(help, true, StandardCharsets.UTF_8);
    assertThat(FlinkBenchmark.run(new String[] {"--help"}, out, out)).isZero();
    assertThat(help.toString(StandardCharsets.UTF_8)).contains("--chart");
  }

  @Test
  void aChartInADirectoryThatDoesNotExistIsRefusedBeforeTheChildJvmStarts(@TempDir Path dir) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();

    int exit =
        FlinkBenchmark.run(
            new String[] {
              "--chart",
              dir.resolve("no-such-dir/flink.svg").toString(),
              "--dir",
              dir.resolve("data").toString()
            },
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));

    assertThat(exit).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8))
        .contains("shuffle-bench flink: --chart")
        .contains("does not exist");
    assertThat(out.toString(StandardCharsets.UTF_8)).isEmpty();
    assertThat(dir.resolve("data")).doesNotExist();
  }

  @Test
  void anUnknownFlinkLineIsRefusedNamingTheLinesBeforeAnythingStarts(@TempDir Path dir) {
    assertThat(parse().flinkLine).isEqualTo("1.20");
    assertThat(parse("--all-lines").allLines).isTrue();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();

    int exit =
        FlinkBenchmark.run(
            new String[] {"--flink-line", "1.17", "--dir", dir.resolve("data").toString()},
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));

    assertThat(exit).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8))
        .contains("--flink-line must be one of [1.20, 2.0, 2.3], not 1.17");
    assertThat(dir.resolve("data")).doesNotExist();
  }

  @Test
  void aSettingThatIsNotKeyValueIsRefusedNamingItsOption(@TempDir Path dir) {
    assertThat(parse("--client-conf", "sluice.mapPartition.readCredits=8").clientConf)
        .containsExactly("sluice.mapPartition.readCredits=8");
    assertThat(parse("--server-conf", "sluice.storage.policy=memory,local").serverConf)
        .containsExactly("sluice.storage.policy=memory,local");
    ByteArrayOutputStream err = new ByteArrayOutputStream();

    int exit =
        FlinkBenchmark.run(
            new String[] {"--client-conf", "readCredits", "--dir", dir.resolve("data").toString()},
            new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));

    assertThat(exit).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8))
        .contains("--client-conf takes key=value")
        .contains("'readCredits'");
    assertThat(dir.resolve("data")).doesNotExist();
  }

  @Test
  void withAllLinesEachLineWritesAChartOfItsOwn() {
    assertThat(FlinkBenchmark.FlinkBenchmarkRun.chartFile("/tmp/flink.svg", null))
        .isEqualTo("/tmp/flink.svg");
    assertThat(FlinkBenchmark.FlinkBenchmarkRun.chartFile("/tmp/flink.svg", "2.3.0"))
        .isEqualTo("/tmp/flink-flink2.3.0.svg");
    assertThat(FlinkBenchmark.FlinkBenchmarkRun.chartFile("/tmp/charts.d/flink", "1.20.5"))
        .isEqualTo("/tmp/charts.d/flink-flink1.20.5");
  }

  @Test
  void theChartShowsTheBestSecondsPerWorkloadBuiltInThenSluice() throws Exception {
    Map<String, double[]> seconds = new LinkedHashMap<>();
    seconds.put("keyby-sum", new double[] {41.5, 27.25});
    seconds.put("wide-keyby", new double[] {30.0, 18.0});

    Document doc =
        BarChartTest.parse(
            FlinkBenchmark.FlinkBenchmarkRun.chart(parse("--rounds", "3"), seconds).svg());

    assertThat(BarChartTest.texts(doc, "group")).containsExactly("keyby-sum", "wide-keyby");
    assertThat(BarChartTest.texts(doc, "legend")).containsExactly("built-in", "sluice");
    assertThat(BarChartTest.texts(doc, "value")).containsExactly("41.5", "27.3", "30.0", "18.0");
    assertThat(BarChartTest.texts(doc, "unit")).containsExactly("job seconds");
    assertThat(BarChartTest.texts(doc, "title").get(0))
        .startsWith("shuffle-bench flink:")
        .contains("best of 3 rounds");
  }
}
