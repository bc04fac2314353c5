package io.sluice.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;

/**
 * {@code shuffle-bench spark}: options it passes on and those it refuses before anything runs, and
 * the chart of a result table.
 */
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
  void aServerSettingKeepsTheCommasOfItsValue() {
    SparkBenchmarkOptions options = new SparkBenchmarkOptions();
    com.beust.jcommander.JCommander.newBuilder()
        .addObject(options)
        .build()
        .parse("--server-conf", "sluice.storage.policy=memory,local", "--server-conf", "a=b");
    assertThat(options.serverConf).containsExactly("sluice.storage.policy=memory,local", "a=b");
    assertThat(SparkBenchmark.SparkBenchmarkRun.serverSettings(options.serverConf))
        .containsEntry("sluice.storage.policy", "memory,local");
  }

  /** Runs {@code shuffle-bench spark args}, which must refuse them (exit 2); what it printed. */
  private static String refusal(String... args) {
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
    int exit = SparkBenchmark.run(args, out, new PrintStream(err, true, StandardCharsets.UTF_8));
    assertThat(exit).isEqualTo(2);
    return err.toString(StandardCharsets.UTF_8);
  }

  @Test
  void aSettingWithoutValueIsRefusedBeforeAnythingStarts() {
    assertThat(refusal("--server-conf", "sluice.read.sortMapRanges"))
        .contains("--server-conf takes key=value")
        .contains("'sluice.read.sortMapRanges'");
  }

  @Test
  void diskOptionsAreCheckedBeforeAnythingStarts() {
    assertThat(refusal("--disk", "ssd")).contains("--disk must be as-is or hdd, not 'ssd'");
    assertThat(refusal("--disk", "hdd", "--disk-iops", "0"))
        .contains("--disk-iops, --disk-mbps and --disk-drop-cache-ms must be positive");
    assertThat(refusal("--disk", "hdd", "--disk-drop-cache-ms", "-5"))
        .contains("--disk-drop-cache-ms must be positive");
  }

  @Test
  void aSmallBlocksShapeThatIsNotMapsByReducersIsRefused() {
    assertThat(refusal("--small-blocks-shape", "100"))
        .contains("--small-blocks-shape must be MAPSxREDUCERS")
        .contains("not '100'");
    assertThat(refusal("--small-blocks-shape", "0x400")).contains("not '0x400'");
  }

  @Test
  void aSmallBlocksShapeSetsTheWorkloadsMapsAndReducers() {
    SparkBenchmarkOptions options = new SparkBenchmarkOptions();
    com.beust.jcommander.JCommander.newBuilder()
        .addObject(options)
        .build()
        .parse("--small-blocks-shape", "100x400");
    assertThat(options.problem()).isNull();
    assertThat(
            SparkBenchmarkDriver.workloads(1, options.smallBlocksMaps, options.smallBlocksReducers)
                .get("small-blocks")
                .describe())
        .startsWith("100 maps x 400 reducers");
  }

  @Test
  void timedRunsOutsideTheirRangeAreRefusedBeforeAnythingStarts() {
    assertThat(refusal("--timed-runs", "0"))
        .contains("--timed-runs must be between 1 and 20, not 0");
    assertThat(refusal("--timed-runs", "21")).contains("not 21");
  }

  @Test
  void warmupsOutsideTheirRangeAreRefusedBeforeAnythingStarts() {
    assertThat(refusal("--warmups", "-1")).contains("--warmups must be between 0 and 10, not -1");
    assertThat(refusal("--warmups", "11")).contains("not 11");
  }

  @Test
  void anUnknownSparkLineOrWorkloadIsRefusedNamingWhatIsKnown() {
    assertThat(refusal("--spark-line", "3.2"))
        .contains("--spark-line must be one of")
        .contains("4.2")
        .contains("'3.2'");
    assertThat(refusal("--workloads", "sort"))
        .contains("unknown workload 'sort'")
        .contains("small-blocks");
  }

  @Test
  void chartNamesAFileInADirectoryThatExists(@TempDir Path dir) {
    SparkBenchmarkOptions options = new SparkBenchmarkOptions();
    PrintStream out = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
    String file = dir.resolve("spark.svg").toString();

    Integer exit =
        BenchmarkCli.parse(
            SparkBenchmark.NAME,
            options,
            () -> options.help,
            new String[] {"--chart", file},
            out,
            out);

    assertThat(exit).isNull();
    assertThat(options.chart).isEqualTo(file);
    // without --chart the chart goes to spark-bench.svg in --dir, as before
    assertThat(new SparkBenchmarkOptions().chart).isEmpty();
  }

  @Test
  void aChartInADirectoryThatDoesNotExistIsRefusedBeforeAnythingStarts(@TempDir Path dir) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int exit =
        SparkBenchmark.run(
            new String[] {
              "--chart",
              dir.resolve("no-such-dir/spark.svg").toString(),
              "--dir",
              dir.resolve("data").toString()
            },
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
    assertThat(exit).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8))
        .contains("shuffle-bench spark: --chart")
        .contains("does not exist");
    assertThat(out.toString(StandardCharsets.UTF_8)).isEmpty();
    assertThat(dir.resolve("data")).doesNotExist();
  }

  @Test
  void theChartShowsJobSecondsPerWorkloadAndRun() throws Exception {
    Map<String, double[]> seconds = new LinkedHashMap<>();
    seconds.put("repartition", new double[] {10.2, 12.7, 0});
    seconds.put("skew-join", new double[] {9.0, 3.9, 0});

    Document doc =
        BarChartTest.parse(
            SparkBenchmark.SparkBenchmarkRun.chart(
                    new SparkBenchmarkOptions(), List.of("built-in", "sluice"), seconds)
                .svg());

    assertThat(BarChartTest.texts(doc, "group")).containsExactly("repartition", "skew-join");
    assertThat(BarChartTest.texts(doc, "legend")).containsExactly("built-in", "sluice");
    assertThat(BarChartTest.texts(doc, "value")).containsExactly("10.2", "12.7", "9.00", "3.90");
    assertThat(BarChartTest.texts(doc, "unit")).containsExactly("job seconds");
    assertThat(BarChartTest.texts(doc, "title").get(0)).startsWith("shuffle-bench spark:");
  }
}
