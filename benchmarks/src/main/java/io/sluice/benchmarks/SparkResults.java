package io.sluice.benchmarks;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the runs measured per workload, one column per run: job seconds, the result's signature, and
 * on Sluice the servers' CPU seconds and the bytes shuffled through them. With several timed runs,
 * the columns hold the run of median seconds (the lower one of an even count), and its signature
 * only when every run's result was the same.
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

  /** Every timed run, by workload and column. */
  final Map<String, List<List<TimedRun>>> timed = new LinkedHashMap<>();

  final Map<String, double[]> seconds = new LinkedHashMap<>();
  final Map<String, String[]> signatures = new LinkedHashMap<>();
  final Map<String, double[]> serverCpuSeconds = new LinkedHashMap<>();
  final Map<String, long[]> bytesShuffled = new LinkedHashMap<>();
  final Map<String, long[]> bytesRead = new LinkedHashMap<>();
  final Map<String, long[]> batches = new LinkedHashMap<>();
  final Map<String, String> notes = new LinkedHashMap<>();
  final Map<String, DiskEmulation.Counters[]> disk = new LinkedHashMap<>();

  SparkResults(List<SparkWorkloads.Workload> workloads) {
    for (SparkWorkloads.Workload w : workloads) {
      disk.put(w.name(), new DiskEmulation.Counters[3]);
      seconds.put(w.name(), new double[3]);
      signatures.put(w.name(), new String[3]);
      serverCpuSeconds.put(w.name(), new double[3]);
      bytesShuffled.put(w.name(), new long[3]);
      bytesRead.put(w.name(), new long[3]);
      batches.put(w.name(), new long[3]);
      timed.put(w.name(), List.of(new ArrayList<>(), new ArrayList<>(), new ArrayList<>()));
    }
  }

  /** Records a timed run, and makes the median of the column's runs so far its result. */
  void add(String workload, int column, TimedRun run) {
    List<TimedRun> runs = timed.get(workload).get(column);
    runs.add(run);
    List<TimedRun> bySeconds = new ArrayList<>(runs);
    bySeconds.sort(Comparator.comparingDouble(r -> r.seconds));
    TimedRun median = bySeconds.get((bySeconds.size() - 1) / 2);
    boolean sameResults = runs.stream().allMatch(r -> r.signature.equals(median.signature));
    seconds.get(workload)[column] = median.seconds;
    signatures.get(workload)[column] =
        sameResults ? median.signature : "timed runs differ: " + runSignatures(runs);
    serverCpuSeconds.get(workload)[column] = median.serverCpuSeconds;
    bytesShuffled.get(workload)[column] = median.bytesShuffled;
    bytesRead.get(workload)[column] = median.bytesRead;
    batches.get(workload)[column] = median.batches;
    disk.get(workload)[column] = median.disk;
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
    long bytes = bytesShuffled.get(workload)[column];
    return bytes > 0 ? serverCpuSeconds.get(workload)[column] / (bytes / GIB) : Double.NaN;
  }
}
