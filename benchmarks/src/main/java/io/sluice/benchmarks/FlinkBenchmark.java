package io.sluice.benchmarks;

import com.beust.jcommander.Parameter;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * {@code shuffle-bench flink}: the same Flink batch jobs on Flink's built-in blocking (sort-merge)
 * shuffle and on Sluice, in one run: two MiniClusters of two TaskManagers with two slots each, one
 * per shuffle, side by side, and one Sluice server in the benchmark's JVM ({@link
 * FlinkBenchmarkHost}). The clusters run in a child JVM per Flink line ({@code --flink-line}, or
 * every line with {@code --all-lines}), on that line's jars and the plugin's shaded jar for it, as
 * operators install it. Each workload is warmed up on both, then timed in rounds that take turns;
 * the best time of each counts. Prints a table per line, one JSON line per workload and line (with
 * its {@code flinkVersion}) and, last, one JSON object with all of them.
 */
final class FlinkBenchmark {
  static final String NAME = "flink";
  static final String DESCRIPTION =
      "Flink batch jobs (keyby-sum, wide-keyby, skew-keyby) on Sluice vs the built-in blocking"
          + " shuffle, per Flink line";
  static final String CHILD = "sluice.bench.flink.child";

  /** The child's Sluice servers, host:port, from the host. */
  static final String SERVERS = "sluice.bench.flink.servers";

  /** Set in the children of {@code --all-lines}: each writes its chart to a file of its own. */
  static final String ALL_LINES = "sluice.bench.flink.allLines";

  /**
   * The Flink lines the jobs can run on, by the module under benchmarks/ with their jars: 1.20 with
   * its jar, 2.0 and 2.3 with the one 2.x jar.
   */
  static final Map<String, String> LINES =
      new TreeMap<>(Map.of("1.20", "flink1.20", "2.0", "flink2.0", "2.3", "flink2.3"));

  /** The two shuffles, in the order of each workload's seconds. */
  private static final List<String> MODES = List.of("built-in", "sluice");

  /** Command-line options. */
  static final class Options {
    @Parameter(
        names = "--scale",
        description =
            "Multiplies every workload's data size (1 = about 2 GiB shuffled by keyby-sum)")
    double scale = 1.0;

    @Parameter(
        names = "--workloads",
        description = "Comma-separated workloads to run: keyby-sum, wide-keyby, skew-keyby")
    String workloads = "keyby-sum,wide-keyby,skew-keyby";

    @Parameter(
        names = "--flink-line",
        description =
            "The Flink line the jobs run on, with its own jars and the plugin's shaded jar for it"
                + " (from benchmarks/flink<line>/target/lib): 1.20, 2.0 or 2.3")
    String flinkLine = "1.20";

    @Parameter(names = "--all-lines", description = "Runs the jobs on every Flink line in turn")
    boolean allLines;

    @Parameter(
        names = "--server-conf",
        splitter = SparkBenchmarkOptions.WholeValue.class,
        description =
            "A setting of the Sluice server, key=value (repeat for more; a value may hold commas)")
    List<String> serverConf = new ArrayList<>();

    @Parameter(
        names = "--client-conf",
        splitter = SparkBenchmarkOptions.WholeValue.class,
        description =
            "A Sluice setting of the Flink cluster (read by the plugin), key=value (repeat for"
                + " more), e.g. sluice.mapPartition.readCredits=8")
    List<String> clientConf = new ArrayList<>();

    @Parameter(
        names = "--rounds",
        description = "Timed runs per workload and shuffle, taking turns; the best counts")
    int rounds = 2;

    @Parameter(names = "--dir", description = "Data directory of the Sluice server")
    String dir = System.getProperty("java.io.tmpdir") + "/sluice-bench-flink";

    @Parameter(
        names = ChartOption.NAME,
        validateWith = ChartOption.class,
        description =
            "Also writes an SVG chart of the best job seconds per workload, built-in vs Sluice,"
                + " to this file (its directory must exist)")
    String chart;

    @Parameter(
        names = {"-h", "--help"},
        help = true,
        description = "Prints this help")
    boolean help;
  }

  private FlinkBenchmark() {}

  static int run(String[] args, PrintStream out, PrintStream err) {
    Options options = new Options();
    Integer exit = BenchmarkCli.parse(NAME, options, () -> options.help, args, out, err);
    if (exit != null) {
      return exit;
    }
    try {
      if (System.getProperty(CHILD) == null) {
        return new FlinkBenchmarkHost(options, out).run(args);
      }
      return new FlinkBenchmarkRun(options, out).run();
    } catch (IllegalArgumentException e) {
      err.println("shuffle-bench " + NAME + ": " + e.getMessage());
      return 2;
    } catch (Exception e) {
      err.println("shuffle-bench " + NAME + " failed: " + e);
      e.printStackTrace(err);
      return 1;
    }
  }

  /** One run of the benchmark, in the child JVM. */
  static final class FlinkBenchmarkRun {
    private final Options options;
    private final PrintStream out;

    FlinkBenchmarkRun(Options options, PrintStream out) {
      this.options = options;
      this.out = out;
    }

    private List<FlinkWorkloads.Workload> workloads() {
      double s = options.scale;
      Map<String, FlinkWorkloads.Workload> all = new LinkedHashMap<>();
      // ~110 bytes per record through the exchange: ~2 GiB at scale 1
      all.put(
          "keyby-sum",
          new FlinkWorkloads.Workload("keyby-sum", (long) (20_000_000 * s), 100_000, 4, 4));
      // many consumers of every map file: 4 producers, 16 consumers
      all.put(
          "wide-keyby",
          new FlinkWorkloads.Workload("wide-keyby", (long) (8_000_000 * s), 1_000_000, 4, 16));
      // half the records carry one key: one consumer reads half the data
      all.put(
          "skew-keyby",
          new FlinkWorkloads.Workload("skew-keyby", (long) (8_000_000 * s), 100_000, 4, 4)
              .withHotKeyShare(0.5));
      List<FlinkWorkloads.Workload> chosen = new ArrayList<>();
      for (String name : options.workloads.split(",")) {
        FlinkWorkloads.Workload w = all.get(name.trim());
        if (w == null) {
          throw new IllegalArgumentException(
              "unknown workload '" + name + "'; known: " + all.keySet());
        }
        chosen.add(w);
      }
      return chosen;
    }

    int run() throws Exception {
      List<FlinkWorkloads.Workload> workloads = workloads();
      Map<String, double[]> seconds = new LinkedHashMap<>();
      Map<String, String[]> signatures = new LinkedHashMap<>();
      String version = FlinkWorkloads.flinkVersion();
      out.println("# Flink " + version);
      // both clusters live side by side and take turns, so neither gains from running second in
      // a warmer JVM
      try (FlinkWorkloads.Cluster builtin = FlinkWorkloads.Cluster.builtin();
          FlinkWorkloads.Cluster sluice =
              FlinkWorkloads.Cluster.sluice(
                  System.getProperty(SERVERS),
                  BenchmarkCli.settings("--client-conf", options.clientConf))) {
        FlinkWorkloads.Cluster[] clusters = {builtin, sluice};
        for (FlinkWorkloads.Workload w : workloads) {
          double[] best = {Double.MAX_VALUE, Double.MAX_VALUE};
          String[] sig = new String[2];
          out.println("# " + w.name + " (" + w.describe() + "): warm-up on both");
          for (FlinkWorkloads.Cluster c : clusters) {
            c.run(w.scaled(0.25));
          }
          for (int round = 1; round <= options.rounds; round++) {
            for (int i = 0; i < 2; i++) {
              long start = System.nanoTime();
              String signature = clusters[i].run(w);
              double t = (System.nanoTime() - start) / 1e9;
              best[i] = Math.min(best[i], t);
              sig[i] = signature;
              out.printf(
                  Locale.ROOT, "#   round %d %s: %.2f s, %s%n", round, MODES.get(i), t, signature);
            }
          }
          seconds.put(w.name, best);
          signatures.put(w.name, sig);
        }
      }
      if (options.chart != null) {
        ChartOption.write(
            chart(options, seconds),
            Path.of(chartFile(options.chart, Boolean.getBoolean(ALL_LINES) ? version : null)),
            out);
      }
      report(workloads, seconds, signatures, version);
      for (String[] s : signatures.values()) {
        if (!s[0].equals(s[1])) {
          return 1;
        }
      }
      return 0;
    }

    /** {@code chart}, or with {@code version} before its extension (one chart per line). */
    static String chartFile(String chart, String version) {
      if (version == null) {
        return chart;
      }
      int dot = chart.lastIndexOf('.');
      return dot > chart.lastIndexOf('/')
          ? chart.substring(0, dot) + "-flink" + version + chart.substring(dot)
          : chart + "-flink" + version;
    }

    /** The chart of the best job seconds per workload: built-in, then Sluice. */
    static BarChart chart(Options options, Map<String, double[]> seconds) {
      BarChart chart =
          new BarChart(
              String.format(
                  Locale.ROOT,
                  "shuffle-bench flink: job seconds, best of %d rounds (scale %s, %d cores)",
                  options.rounds,
                  Json.num(options.scale),
                  Runtime.getRuntime().availableProcessors()),
              "job seconds",
              MODES);
      for (Map.Entry<String, double[]> workload : seconds.entrySet()) {
        chart.group(workload.getKey(), workload.getValue());
      }
      return chart;
    }

    private void report(
        List<FlinkWorkloads.Workload> workloads,
        Map<String, double[]> seconds,
        Map<String, String[]> signatures,
        String version) {
      out.println();
      out.println("Flink " + version + ", best of " + options.rounds + " rounds:");
      out.println("| workload | records | built-in s | sluice s | ratio | results equal |");
      out.println("| --- | --- | --- | --- | --- | --- |");
      List<String> lines = new ArrayList<>();
      for (FlinkWorkloads.Workload w : workloads) {
        double[] s = seconds.get(w.name);
        String[] sig = signatures.get(w.name);
        boolean equal = sig[0].equals(sig[1]);
        out.printf(
            Locale.ROOT,
            "| %s | %d | %.2f | %.2f | %.2f | %s |%n",
            w.name,
            w.records,
            s[0],
            s[1],
            s[1] / s[0],
            equal ? "yes" : "NO");
        lines.add(
            "{\"workload\":"
                + Json.str(w.name)
                + ",\"flinkVersion\":"
                + Json.str(version)
                + ",\"records\":"
                + w.records
                + ",\"producers\":"
                + w.producers
                + ",\"consumers\":"
                + w.consumers
                + ",\"sluiceSeconds\":"
                + Json.num(s[1])
                + ",\"builtinSeconds\":"
                + Json.num(s[0])
                + ",\"ratio\":"
                + Json.num(s[1] / s[0])
                + ",\"resultsEqual\":"
                + equal
                + "}");
      }
      out.println();
      for (String l : lines) {
        out.println(l);
      }
    }
  }
}
