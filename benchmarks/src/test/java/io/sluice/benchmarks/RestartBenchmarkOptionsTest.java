package io.sluice.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code shuffle-bench restart}: the options it refuses before anything starts, and the incidents
 * the Spark JVM reports with a timed run's end.
 */
class RestartBenchmarkOptionsTest {
  /** Runs {@code shuffle-bench restart args}, which must refuse them (exit 2); what it printed. */
  private static String refusal(String... args) {
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
    int exit = RestartBenchmark.run(args, out, new PrintStream(err, true, StandardCharsets.UTF_8));
    assertThat(exit).isEqualTo(2);
    return err.toString(StandardCharsets.UTF_8);
  }

  @Test
  void badOptionsAreRefusedBeforeAnythingStarts() {
    assertThat(refusal("--restart-in", "shuffle"))
        .contains("--restart-in must be map or reduce, not 'shuffle'");
    assertThat(refusal("--servers", "0")).contains("--servers must be between 1 and 16");
    assertThat(refusal("--down-seconds", "90")).contains("--down-seconds must be between 0 and 50");
    assertThat(refusal("--workload", "sort")).contains("unknown workload 'sort'");
    assertThat(refusal("--spark-line", "2.4")).contains("--spark-line must be one of");
  }

  @Test
  void theStageNamesTheTaskTypeThatStartsTheRestart() {
    RestartBenchmarkOptions options = new RestartBenchmarkOptions();
    assertThat(options.problem()).isNull();
    assertThat(options.taskType()).isEqualTo("ResultTask");
    options.restartIn = " MAP ";
    assertThat(options.problem()).isNull();
    assertThat(options.taskType()).isEqualTo("ShuffleMapTask");
  }

  @Test
  void anEndLineCarriesIncidentsAfterItsNoteAndAnOlderOneNone() {
    String incidents =
        Base64.getEncoder()
            .encodeToString(
                "taskFailures=0\nfetchFailures=1\nfirstFailure=stage 2.0: a=b\n"
                    .getBytes(StandardCharsets.UTF_8));
    Map<String, String> values =
        SparkBenchmarkDriver.incidents(
            new String[] {"@@end", "repartition", "2", "1.5", "c2ln", "", incidents});
    assertThat(values)
        .containsEntry("taskFailures", "0")
        .containsEntry("fetchFailures", "1")
        .containsEntry("firstFailure", "stage 2.0: a=b");
    assertThat(
            SparkBenchmarkDriver.incidents(
                new String[] {"@@end", "repartition", "2", "1.5", "c2ln", ""}))
        .isEmpty();
  }
}
