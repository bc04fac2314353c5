package io.sluice.benchmarks;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What {@code shuffle-bench restart} measured: the job's timed run on the built-in shuffle, on
 * Sluice and on Sluice with a server restarted mid-stage; the restart itself; and the report (a
 * table, the restart's timeline and, last, one JSON object).
 */
final class RestartReport {
  static final int BUILTIN = 0;
  static final int SLUICE = 1;
  static final int RESTART = 2;
  private static final double MIB = 1024.0 * 1024;

  /** What one timed run measured. */
  static final class TimedRun {
    final double seconds;
    final String signature;
    final String note;

    /** What the driver counted: taskFailures, fetchFailures, stageReruns, restart*... */
    final Map<String, String> incidents;

    /** Bytes pushed to the servers (replica copies not counted) and served by them. */
    final long bytesShuffled;

    final long bytesRead;

    /** Wall clock (epoch milliseconds) at the run's start and end, as this JVM saw them. */
    final long beganMillis;

    final long endedMillis;

    TimedRun(
        double seconds,
        String signature,
        String note,
        Map<String, String> incidents,
        long[] counters,
        long beganMillis,
        long endedMillis) {
      this.seconds = seconds;
      this.signature = signature;
      this.note = note;
      this.incidents = incidents;
      this.bytesShuffled = counters[BenchServers.SHUFFLED];
      this.bytesRead = counters[BenchServers.READ];
      this.beganMillis = beganMillis;
      this.endedMillis = endedMillis;
    }

    int count(String incident) {
      return Integer.parseInt(incidents.getOrDefault(incident, "-1"));
    }

    long millis(String incident) {
      return Long.parseLong(incidents.getOrDefault(incident, "0"));
    }

    String incidentsJson() {
      return "{\"stageReruns\":"
          + count("stageReruns")
          + ",\"fetchFailures\":"
          + count("fetchFailures")
          + ",\"taskFailures\":"
          + count("taskFailures")
          + ",\"firstFailure\":"
          + Json.str(incidents.getOrDefault("firstFailure", ""))
          + "}";
    }
  }

  final TimedRun[] runs = new TimedRun[3];

  /** The restart, or null when none happened. */
  ServerRestart restart;

  /** Bytes pushed to and served by the restarted server from its start to the run's end. */
  long[] restartedServerCounters = new long[3];

  private final RestartBenchmarkOptions options;

  RestartReport(RestartBenchmarkOptions options) {
    this.options = options;
  }

  boolean complete() {
    return runs[BUILTIN] != null && runs[SLUICE] != null && runs[RESTART] != null;
  }

  boolean resultsEqual() {
    return complete()
        && runs[BUILTIN].signature.equals(runs[SLUICE].signature)
        && runs[BUILTIN].signature.equals(runs[RESTART].signature);
  }

  double slowdown() {
    return runs[RESTART].seconds / runs[SLUICE].seconds;
  }

  /** Seconds from the restarted run's start to a wall-clock time; NaN for an unknown time. */
  private double afterStart(long millis) {
    return millis <= 0 ? Double.NaN : (millis - runs[RESTART].beganMillis) / 1000.0;
  }

  /** Whether the stage the restart was asked in still ran when the stop began. */
  boolean midStage() {
    long stageEnd = runs[RESTART].millis("restartStageEndMillis");
    return restart != null && stageEnd > restart.stopBeganMillis;
  }

  void print(PrintStream out) {
    TimedRun r = runs[RESTART];
    String stage = options.restartIn + " stage";
    out.println();
    out.printf(
        Locale.ROOT,
        "# timeline of the run with the restart (s after the job's start): first %s task ended"
            + " %.2f, stop began %.2f, server back %.2f, %s ended %.2f, job ended %.2f%n",
        options.restartIn,
        afterStart(r.millis("restartRequestedMillis")),
        afterStart(restart == null ? 0 : restart.stopBeganMillis),
        afterStart(restart == null ? 0 : restart.backMillis()),
        stage,
        afterStart(r.millis("restartStageEndMillis")),
        afterStart(r.endedMillis));
    if (restart != null) {
      out.printf(
          Locale.ROOT,
          "# %s; %s tasks that ended after it was asked: %s; the restarted server took %.1f MiB"
              + " and served %.1f MiB after its start%n",
          restart,
          stage,
          r.incidents.getOrDefault("restartStageTasksAfter", "?"),
          restartedServerCounters[BenchServers.SHUFFLED] / MIB,
          restartedServerCounters[BenchServers.READ] / MIB);
    }
    if (!midStage()) {
      out.println("# the " + stage + " did not run when the stop began: not a mid-stage restart");
    }
    out.println();
    out.printf(
        Locale.ROOT,
        "%-14s %10s %10s %16s %9s %12s %14s %13s %17s %6s%n",
        "workload",
        "built-in s",
        "sluice s",
        "sluice+restart s",
        "slowdown",
        "stage reruns",
        "fetch failures",
        "task failures",
        "server restart s",
        "equal");
    out.printf(
        Locale.ROOT,
        "%-14s %10.2f %10.2f %16.2f %9.3f %12d %14d %13d %17s %6s%n",
        options.workload,
        runs[BUILTIN].seconds,
        runs[SLUICE].seconds,
        r.seconds,
        slowdown(),
        r.count("stageReruns"),
        r.count("fetchFailures"),
        r.count("taskFailures"),
        restart == null ? "-" : String.format(Locale.ROOT, "%.2f", restart.totalSeconds),
        resultsEqual());
    out.println();
    out.println(
        "slowdown: the run with the restart over the run without (both on Sluice, same servers);"
            + " reruns and failures: in the run with the restart (Spark's listener events);"
            + " server restart: from the start of the stop until the new server accepted a"
            + " connection, "
            + Json.num(options.downSeconds)
            + " s of it with the port closed.");
    for (int column : new int[] {BUILTIN, SLUICE}) {
      if (runs[column].count("taskFailures") != 0 || runs[column].count("stageReruns") != 0) {
        out.println("# " + name(column) + " run: " + runs[column].incidentsJson());
      }
    }
    if (!r.incidents.getOrDefault("firstFailure", "").isEmpty()) {
      out.println(
          "# first failure in the run with the restart: " + r.incidents.get("firstFailure"));
    }
    if (!options.chart.isEmpty()) {
      BarChart chart =
          new BarChart(
              String.format(
                  Locale.ROOT,
                  "shuffle-bench restart: job seconds (Spark %s, %s, scale %s, restart in the %s,"
                      + " %d cores)",
                  options.sparkLine,
                  options.workload,
                  Json.num(options.scale),
                  stage,
                  Runtime.getRuntime().availableProcessors()),
              "job seconds",
              List.of(name(BUILTIN), name(SLUICE), name(RESTART)));
      chart.group(options.workload, runs[BUILTIN].seconds, runs[SLUICE].seconds, r.seconds);
      ChartOption.write(chart, Path.of(options.chart), out);
    }
    out.println(json());
  }

  private static String name(int column) {
    return column == BUILTIN ? "built-in" : column == SLUICE ? "sluice" : "sluice with a restart";
  }

  private String json() {
    TimedRun r = runs[RESTART];
    return "{\"benchmark\":\"restart\",\"sparkLine\":"
        + Json.str(options.sparkLine)
        + ",\"workload\":"
        + Json.str(options.workload)
        + ",\"scale\":"
        + Json.num(options.scale)
        + ",\"warmups\":"
        + options.warmups
        + ",\"cores\":"
        + Runtime.getRuntime().availableProcessors()
        + ",\"servers\":"
        + options.servers
        + ",\"restartIn\":"
        + Json.str(options.restartIn)
        + ",\"downSeconds\":"
        + Json.num(options.downSeconds)
        + ",\"builtinSeconds\":"
        + Json.num(runs[BUILTIN].seconds)
        + ",\"sluiceSeconds\":"
        + Json.num(runs[SLUICE].seconds)
        + ",\"restartRunSeconds\":"
        + Json.num(r.seconds)
        + ",\"slowdown\":"
        + Json.num(slowdown())
        + ",\"stageReruns\":"
        + r.count("stageReruns")
        + ",\"fetchFailures\":"
        + r.count("fetchFailures")
        + ",\"taskFailures\":"
        + r.count("taskFailures")
        + ",\"restartSeconds\":"
        + (restart == null ? "null" : Json.num(restart.totalSeconds))
        + ",\"restart\":"
        + (restart == null ? "null" : restart.json())
        + ",\"midStage\":"
        + midStage()
        + ",\"timeline\":{\"restartAskedSeconds\":"
        + Json.num(afterStart(r.millis("restartRequestedMillis")))
        + ",\"stopBeganSeconds\":"
        + Json.num(afterStart(restart == null ? 0 : restart.stopBeganMillis))
        + ",\"serverBackSeconds\":"
        + Json.num(afterStart(restart == null ? 0 : restart.backMillis()))
        + ",\"stageEndedSeconds\":"
        + Json.num(afterStart(r.millis("restartStageEndMillis")))
        + ",\"stageTasksAfterAsked\":"
        + r.count("restartStageTasksAfter")
        + "}"
        + ",\"restartedServerBytesPushedAfter\":"
        + restartedServerCounters[BenchServers.SHUFFLED]
        + ",\"restartedServerBytesReadAfter\":"
        + restartedServerCounters[BenchServers.READ]
        + ",\"shuffleBytes\":"
        + runs[SLUICE].bytesShuffled
        + ",\"sluiceIncidents\":"
        + runs[SLUICE].incidentsJson()
        + ",\"builtinIncidents\":"
        + runs[BUILTIN].incidentsJson()
        + ",\"resultsEqual\":"
        + resultsEqual()
        + ",\"signature\":"
        + Json.str(r.signature)
        + "}";
  }
}
