package io.sluice.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code shuffle-bench stopstart}: its defaults, the options it refuses before anything runs, and
 * its place in {@code shuffle-bench --help}. No server starts here.
 */
class StopStartBenchmarkOptionsTest {
  private static int run(ByteArrayOutputStream out, ByteArrayOutputStream err, String... args) {
    return StopStartBenchmark.run(
        args,
        new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
  }

  @Test
  void theDefaultsAreHalfAndOneGibAndFiveAndTenThousandSplits() {
    StopStartBenchmark.Options options = new StopStartBenchmark.Options();
    options.check();
    assertThat(options.stopBytes()).containsExactly(512L << 20, 1L << 30);
    assertThat(options.startSplitCounts()).containsExactly(5_000, 10_000);
    assertThat(options.repeats).isEqualTo(3);
  }

  @Test
  void badSizesAreRefusedBeforeTheRun(@TempDir Path dir) {
    for (String[] args :
        new String[][] {
          {"--stop-sizes", "1g,lots"},
          {"--stop-sizes", "0"},
          {"--start-splits", "5000,-1"},
          {"--repeats", "0"},
          {"--server-conf", "sluice.commit.fsync"},
          {"--chart", dir.resolve("no-such-dir/stopstart.svg").toString()}
        }) {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      ByteArrayOutputStream err = new ByteArrayOutputStream();
      String[] all = new String[args.length + 2];
      System.arraycopy(args, 0, all, 0, args.length);
      all[args.length] = "--dir";
      all[args.length + 1] = dir.resolve("data").toString();

      assertThat(run(out, err, all)).as(String.join(" ", args)).isEqualTo(2);
      assertThat(err.toString(StandardCharsets.UTF_8)).startsWith("shuffle-bench stopstart: ");
      assertThat(out.toString(StandardCharsets.UTF_8)).isEmpty();
      assertThat(dir.resolve("data")).doesNotExist();
    }
  }

  @Test
  void helpListsTheOptionsAndShuffleBenchListsTheBenchmark() {
    ByteArrayOutputStream help = new ByteArrayOutputStream();
    assertThat(run(help, new ByteArrayOutputStream(), "--help")).isZero();
    assertThat(help.toString(StandardCharsets.UTF_8))
        .contains("--stop-sizes", "--start-splits", "--repeats", "--chart");
    ByteArrayOutputStream list = new ByteArrayOutputStream();
    BenchMain.run(
        new String[] {"--help"},
        new PrintStream(list, true, StandardCharsets.UTF_8),
        new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
    assertThat(list.toString(StandardCharsets.UTF_8)).contains("stopstart");
  }

  @Test
  void theMedianOfAnEvenCountIsTheMeanOfTheMiddleTwo() {
    assertThat(StopStartBenchmark.median(new double[] {3, 1, 2})).isEqualTo(2);
    assertThat(StopStartBenchmark.median(new double[] {4, 1, 2, 3})).isEqualTo(2.5);
  }
}
