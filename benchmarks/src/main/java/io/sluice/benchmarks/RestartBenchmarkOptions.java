package io.sluice.benchmarks;

import com.beust.jcommander.Parameter;
import com.beust.jcommander.ParameterException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/** Command-line options of {@code shuffle-bench restart}, and their checks. */
final class RestartBenchmarkOptions {
  @Parameter(
      names = "--workload",
      description =
          "The Spark job: repartition, small-blocks, skew-join, local-reader or small-shuffles"
              + " (as shuffle-bench spark runs them)")
  String workload = "repartition";

  @Parameter(
      names = "--scale",
      description =
          "Multiplies the workload's data size (1 = shuffle-bench spark's default size; with 0.5,"
              + " the default, the whole benchmark takes about two minutes on two cores)")
  double scale = 0.5;

  @Parameter(
      names = "--restart-in",
      description =
          "The stage the restart lands in: map (it begins when the first map task ended, while"
              + " the others push) or reduce (when the first reduce task ended, while the others"
              + " read)")
  String restartIn = "reduce";

  @Parameter(
      names = "--servers",
      description =
          "Sluice servers (in this JVM); server 0 is restarted, the others keep running, as in a"
              + " rolling restart of a fleet")
  int servers = 3;

  @Parameter(
      names = "--down-seconds",
      description =
          "How long the restarted server's port stays closed between its stop and its start (a"
              + " shuffle-daemon restart takes 5 to 9 seconds)")
  double downSeconds = 5;

  @Parameter(
      names = "--warmups",
      description =
          "Untimed runs of the job before each timed run, on the same executors and servers")
  int warmups = 1;

  @Parameter(
      names = "--spark-line",
      description = "The Spark line the jobs run on: 3.3, 3.4, 3.5 (Scala 2.12), 4.0 or 4.2")
  String sparkLine = "3.5";

  @Parameter(names = "--executor-memory", description = "Heap of each of the two executors")
  String executorMemory = "2g";

  @Parameter(
      names = "--server-conf",
      splitter = SparkBenchmarkOptions.WholeValue.class,
      description = "A setting of the Sluice servers, key=value (repeat for more)")
  List<String> serverConf = new ArrayList<>();

  @Parameter(
      names = "--dir",
      description =
          "Data directory of the Sluice servers and of the built-in shuffle's files"
              + " (spark-local in it)")
  String dir = System.getProperty("java.io.tmpdir") + "/sluice-bench-restart";

  @Parameter(
      names = ChartOption.NAME,
      validateWith = ChartOption.class,
      description =
          "Where to write an SVG chart of job seconds: built-in, Sluice, Sluice with a restart;"
              + " its directory must exist")
  String chart = "";

  @Parameter(
      names = {"-h", "--help"},
      help = true,
      description = "Prints this help")
  boolean help;

  /** The Spark task type whose first end starts the restart. */
  String taskType() {
    return restartIn.equals("map") ? "ShuffleMapTask" : "ResultTask";
  }

  /**
   * Normalizes the options and says what is wrong with them, before anything starts; null when
   * nothing is.
   */
  String problem() {
    restartIn = restartIn.trim().toLowerCase(Locale.ROOT);
    if (!List.of("map", "reduce").contains(restartIn)) {
      return "--restart-in must be map or reduce, not '" + restartIn + "'";
    }
    if (servers < 1 || servers > 16) {
      return "--servers must be between 1 and 16, not " + servers;
    }
    if (!(downSeconds >= 0 && downSeconds <= 50)) {
      // below sluice.client.serverRestartWait (60 s): longer, and clients give the server up
      return "--down-seconds must be between 0 and 50, not " + downSeconds;
    }
    if (warmups < 0 || warmups > 10) {
      return "--warmups must be between 0 and 10, not " + warmups;
    }
    if (!(scale > 0)) {
      return "--scale must be positive, not " + scale;
    }
    sparkLine = sparkLine.trim();
    if (!SparkBenchmark.SparkLine.KNOWN.containsKey(sparkLine)) {
      return "--spark-line must be one of "
          + SparkBenchmark.SparkLine.KNOWN.keySet()
          + ", not '"
          + sparkLine
          + "'";
    }
    workload = workload.trim();
    Set<String> known = SparkBenchmarkDriver.workloads(1, 1, 1).keySet();
    if (!known.contains(workload)) {
      return "unknown workload '" + workload + "'; known: " + known;
    }
    try {
      BenchmarkCli.settings("--server-conf", serverConf);
    } catch (IllegalArgumentException | ParameterException e) {
      return e.getMessage();
    }
    return null;
  }
}
