package io.sluice.benchmarks;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the timed runs measured per workload, one column per shuffle (built-in, Sluice, the second
 * Sluice run): job seconds, the result's signature, and on Sluice the servers' CPU seconds and the
 * bytes shuffled through them. The report gives each column's run of median seconds.
 */
final class SparkResults {
  private static final double GIB = 1024.0 * 1024 * 1024;

  /** What one timed run of one workload on one shuffle measured. */
  static final class TimedRun {
    final double seconds;
    final String signature;
    final double serverCpuSeconds;
    final long bytesShuffled;
    final long bytesRead;
    final long batches;
    final DiskEmulation.Counters disk;

    TimedRun(
        double seconds,
        String signature,
        double serverCpuSeconds,
        long bytesShuffled,
        long bytesRead,
        long batches,
        DiskEmulation.Counters disk) {
      this.seconds = seconds;
      this.signature = signature;
      this.serverCpuSeconds = serverCpuSeconds;
      this.bytesShuffled = bytesShuffled;
      this.bytesRead = bytesRead;
      this.batches = batches;
      this.disk = disk;
    }
  }

  /** A column that was not run: no seconds, no signature, nothing measured. */
  private static final TimedRun NOT_RUN = new TimedRun(0, null, Double.NaN, 0, 0, 0, null);

  /** Every timed run, by workload and column, in run order. */
  private final Map<String, List<List<TimedRun>>> timed = new LinkedHashMap<>();

  /** Per workload, what a column's runs noted (a fallback, a skipped check), merged. */
  final Map<String, String> notes = new LinkedHashMap<>();

  SparkResults(List<SparkWorkloads.Workload> workloads) {
    for (SparkWorkloads.Workload w : workloads) {
      timed.put(w.name(), List.of(new ArrayList<>(), new ArrayList<>(), new ArrayList<>()));
    }
  }

  /** Records a timed run of a workload on a column. */
  void add(String workload, int column, TimedRun run) {
    timed.get(workload).get(column).add(run);
  }

  /**
   * The run of median seconds of a workload on a column (the faster middle one of an even count),
   * or a run that measured nothing when the column was not run.
   */
  TimedRun median(String workload, int column) {
    List<TimedRun> bySeconds = new ArrayList<>(timed.get(workload).get(column));
    if (bySeconds.isEmpty()) {
      return NOT_RUN;
    }
    bySeconds.sort(Comparator.comparingDouble(r -> r.seconds));
    return bySeconds.get((bySeconds.size() - 1) / 2);
  }

  /** The median run's seconds on every column, in column order; 0 where a column did not run. */
  double[] seconds(String workload) {
    double[] seconds = new double[3];
    for (int column = 0; column < seconds.length; column++) {
      seconds[column] = median(workload, column).seconds;
    }
    return seconds;
  }

  /**
   * The result's signature of a workload on a column: the median run's when every run's result was
   * the same, else one that names them all and equals no other.
   */
  String signature(String workload, int column) {
    List<TimedRun> runs = timed.get(workload).get(column);
    String median = median(workload, column).signature;
    boolean sameResults = runs.stream().allMatch(r -> r.signature.equals(median));
    return sameResults ? median : "timed runs differ: " + runSignatures(runs);
  }

  /** Whether a workload's result was the same on the built-in column and the given others. */
  boolean resultsEqual(String workload, int builtin, int... others) {
    String expected = signature(workload, builtin);
    for (int column : others) {
      if (expected == null || !expected.equals(signature(workload, column))) {
        return false;
      }
    }
    return true;
  }

  private static String runSignatures(List<TimedRun> runs) {
    List<String> all = new ArrayList<>();
    for (TimedRun r : runs) {
      all.add(r.signature);
    }
    return String.join(" | ", all);
  }

  /** The seconds of every timed run of a workload on one column, in run order, as JSON. */
  String secondsJson(String workload, int column) {
    List<String> all = new ArrayList<>();
    for (TimedRun r : timed.get(workload).get(column)) {
      all.add(Json.num(r.seconds));
    }
    return "[" + String.join(",", all) + "]";
  }

  /** Server CPU seconds per GiB shuffled in one run of one workload. */
  double serverCpuPerGiB(String workload, int column) {
    TimedRun median = median(workload, column);
    return median.bytesShuffled > 0
        ? median.serverCpuSeconds / (median.bytesShuffled / GIB)
        : Double.NaN;
  }
}
