package io.sluice.benchmarks;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * What {@code shuffle-bench stopstart} prints: a table of the timed stops and starts next to the
 * empty server's, how they grow from the first size to the last (against how the size grew: linear
 * growth gives the same ratio), and, last, one JSON object.
 */
final class StopStartReport {
  private static final double GIB = 1L << 30;

  private final StopStartBenchmark.Options options;
  private final StopStartBenchmark.Stop emptyStop;
  private final StopStartBenchmark.Start emptyStart;
  private final List<StopStartBenchmark.Stop> stops;
  private final List<StopStartBenchmark.Start> starts;

  StopStartReport(
      StopStartBenchmark.Options options,
      StopStartBenchmark.Stop emptyStop,
      StopStartBenchmark.Start emptyStart,
      List<StopStartBenchmark.Stop> stops,
      List<StopStartBenchmark.Start> starts) {
    this.options = options;
    this.emptyStop = emptyStop;
    this.emptyStart = emptyStart;
    this.stops = List.copyOf(stops);
    this.starts = List.copyOf(starts);
  }

  private StopStartBenchmark.Stop firstStop() {
    return stops.get(0);
  }

  private StopStartBenchmark.Stop lastStop() {
    return stops.get(stops.size() - 1);
  }

  private StopStartBenchmark.Start firstStart() {
    return starts.get(0);
  }

  private StopStartBenchmark.Start lastStart() {
    return starts.get(starts.size() - 1);
  }

  /** The last stop's seconds over the first's. */
  double stopGrowth() {
    return lastStop().seconds / firstStop().seconds;
  }

  /** The last stop's bytes over the first's: what linear growth would give. */
  double stopSizeRatio() {
    return (double) lastStop().bytes / firstStop().bytes;
  }

  double startGrowth() {
    return lastStart().seconds / firstStart().seconds;
  }

  double startSizeRatio() {
    return (double) lastStart().splits / firstStart().splits;
  }

  /**
   * Why the run failed (a stop that did not commit every byte, a start that did not restore every
   * split), or null.
   */
  String problem() {
    for (StopStartBenchmark.Stop s : stops) {
      if (s.restoredSplits == 0 || s.restoredBytes < s.bytes) {
        return String.format(
            Locale.ROOT,
            "after the stop with %d bytes a new server restored %d split(s) of %d bytes",
            s.bytes,
            s.restoredSplits,
            s.restoredBytes);
      }
    }
    for (StopStartBenchmark.Start s : starts) {
      if (s.restoredSplits != s.splits) {
        return "the start with " + s.splits + " splits restored " + s.restoredSplits;
      }
    }
    return null;
  }

  void print(PrintStream out) {
    out.println();
    String row = "%-6s %-24s %8s %9s %14s %13s %9s%n";
    out.printf(
        Locale.ROOT, row, "", "size", "best s", "median s", "rate", "first read s", "x empty");
    out.printf(
        Locale.ROOT,
        row,
        "stop",
        "empty server",
        seconds(emptyStop.seconds),
        seconds(emptyStop.median),
        "",
        "",
        "1");
    for (StopStartBenchmark.Stop s : stops) {
      out.printf(
          Locale.ROOT,
          row,
          "stop",
          String.format(Locale.ROOT, "%.2f GiB uncommitted", s.bytes / GIB),
          seconds(s.seconds),
          seconds(s.median),
          String.format(Locale.ROOT, "%.3f s/GiB", s.seconds * GIB / s.bytes),
          "",
          String.format(Locale.ROOT, "%.1f", s.seconds / emptyStop.seconds));
    }
    out.printf(
        Locale.ROOT,
        row,
        "start",
        "empty state",
        seconds(emptyStart.seconds),
        seconds(emptyStart.median),
        "",
        "",
        "1");
    for (StopStartBenchmark.Start s : starts) {
      out.printf(
          Locale.ROOT,
          row,
          "start",
          String.format(Locale.ROOT, "%,d committed splits", s.splits),
          seconds(s.seconds),
          seconds(s.median),
          String.format(Locale.ROOT, "%.3f s/1000", s.seconds * 1000 / s.splits),
          seconds(s.firstReadSeconds),
          String.format(Locale.ROOT, "%.1f", s.seconds / emptyStart.seconds));
    }
    if (stops.size() > 1) {
      out.printf(
          Locale.ROOT,
          "stop growth: %.3f s / %.3f s = %.2f for %.2f x the bytes (linear: %.2f)%n",
          lastStop().seconds,
          firstStop().seconds,
          stopGrowth(),
          stopSizeRatio(),
          stopSizeRatio());
    }
    if (starts.size() > 1) {
      out.printf(
          Locale.ROOT,
          "start growth: %.3f s / %.3f s = %.2f for %.2f x the splits (linear: %.2f)%n",
          lastStart().seconds,
          firstStart().seconds,
          startGrowth(),
          startSizeRatio(),
          startSizeRatio());
    }
    out.println(json());
    out.flush();
  }

  private static String seconds(double v) {
    return String.format(Locale.ROOT, "%.3f", v);
  }

  String json() {
    StringBuilder s = new StringBuilder("{\"benchmark\":\"stopstart\"");
    s.append(",\"cpus\":").append(Runtime.getRuntime().availableProcessors());
    s.append(",\"pushers\":").append(options.pushers);
    s.append(",\"partitions\":").append(options.partitions);
    s.append(",\"splitsPerShuffle\":").append(options.splitsPerShuffle);
    s.append(",\"repeats\":").append(options.repeats);
    s.append(",\"emptyStopSeconds\":").append(Json.num(emptyStop.seconds));
    s.append(",\"emptyStartSeconds\":").append(Json.num(emptyStart.seconds));
    List<String> items = new ArrayList<>();
    for (StopStartBenchmark.Stop stop : stops) {
      items.add(
          "{\"bytes\":"
              + stop.bytes
              + ",\"seconds\":"
              + Json.num(stop.seconds)
              + ",\"medianSeconds\":"
              + Json.num(stop.median)
              + ",\"secondsPerGiB\":"
              + Json.num(stop.seconds * GIB / stop.bytes)
              + ",\"overEmpty\":"
              + Json.num(stop.seconds / emptyStop.seconds)
              + ",\"heldBytes\":"
              + Arrays.toString(stop.heldBytes).replace(" ", "")
              + ",\"restoredSplits\":"
              + stop.restoredSplits
              + ",\"restoredBytes\":"
              + stop.restoredBytes
              + "}");
    }
    s.append(",\"stops\":[").append(String.join(",", items)).append(']');
    items.clear();
    for (StopStartBenchmark.Start start : starts) {
      items.add(
          "{\"splits\":"
              + start.splits
              + ",\"seconds\":"
              + Json.num(start.seconds)
              + ",\"medianSeconds\":"
              + Json.num(start.median)
              + ",\"secondsPer1000Splits\":"
              + Json.num(start.seconds * 1000 / start.splits)
              + ",\"firstReadSeconds\":"
              + Json.num(start.firstReadSeconds)
              + ",\"overEmpty\":"
              + Json.num(start.seconds / emptyStart.seconds)
              + ",\"restoredSplits\":"
              + start.restoredSplits
              + "}");
    }
    s.append(",\"starts\":[").append(String.join(",", items)).append(']');
    s.append(",\"stopGrowth\":").append(Json.num(stopGrowth()));
    s.append(",\"stopSizeRatio\":").append(Json.num(stopSizeRatio()));
    s.append(",\"startGrowth\":").append(Json.num(startGrowth()));
    s.append(",\"startSizeRatio\":").append(Json.num(startSizeRatio()));
    s.append(",\"verified\":").append(problem() == null);
    return s.append('}').toString();
  }

  /** Stop and start seconds: the empty server (the baseline), then each size in turn. */
  BarChart chart() {
    int n = Math.max(stops.size(), starts.size());
    List<String> series = new ArrayList<>();
    series.add("empty (baseline)");
    double[] stop = new double[n + 1];
    double[] start = new double[n + 1];
    stop[0] = emptyStop.seconds;
    start[0] = emptyStart.seconds;
    for (int i = 0; i < n; i++) {
      String name = "size " + (i + 1);
      if (i < stops.size()) {
        stop[i + 1] = stops.get(i).seconds;
        name += String.format(Locale.ROOT, ": %.2f GiB", stops.get(i).bytes / GIB);
      }
      if (i < starts.size()) {
        start[i + 1] = starts.get(i).seconds;
        name += String.format(Locale.ROOT, " / %,d splits", starts.get(i).splits);
      }
      series.add(name);
    }
    return new BarChart(
            String.format(
                Locale.ROOT,
                "shuffle-bench stopstart: seconds of a graceful stop (GiB uncommitted) and of a"
                    + " start (committed splits) (%d CPUs)",
                Runtime.getRuntime().availableProcessors()),
            "seconds",
            series)
        .group("stop", stop)
        .group("start (until serving)", start);
  }
}
