package io.sluice.benchmarks;

import com.beust.jcommander.Parameter;
import com.codahale.metrics.MetricRegistry;
import io.sluice.common.Clock;
import io.sluice.common.SluiceConf;
import io.sluice.network.NetworkConf;
import io.sluice.server.ServerConf;
import io.sluice.server.ShuffleServer;
import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * {@code shuffle-bench flink}: the same Flink batch jobs on Flink's built-in blocking (sort-merge)
 * shuffle and on Sluice, in one run: two MiniClusters of two TaskManagers with two slots each, one
 * per shuffle, side by side with one Sluice server in the benchmark's JVM. Each workload is warmed
 * up on both, then timed in rounds that take turns; the best time of each counts. Prints a table,
 * one JSON line per workload and, last, one JSON object with all of them.
 *
 * <p>Spark's Kryo and Flink's Kryo share a package, so the benchmark runs itself again in a child
 * JVM whose class path leaves Spark out.
 */
final class FlinkBenchmark {
  static final String NAME = "flink";
  static final String DESCRIPTION =
      "Flink batch jobs (keyby-sum, wide-keyby) on Sluice vs the built-in blocking shuffle";
  private static final String CHILD = "sluice.bench.flink.child";

  /** The two shuffles, in the order of each workload's seconds. */
  private static final List<String> MODES = List.of("built-in", "sluice");

  private static final Pattern NOT_FOR_FLINK =
      Pattern.compile("(spark-|scala-|kryo-shaded-|chill|json4s-|py4j-).*\\.jar");

  /** Command-line options. */
  static final class Options {
    @Parameter(
        names = "--scale",
        description =
            "Multiplies every workload's data size (1 = about 2 GiB shuffled by keyby-sum)")
    double scale = 1.0;

    @Parameter(
        names = "--workloads",
        description = "Comma-separated workloads to run: keyby-sum, wide-keyby")
    String workloads = "keyby-sum,wide-keyby";

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
        return relaunch(args);
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

  /** Runs the benchmark in a child JVM whose class path has no Spark. */
  private static int relaunch(String[] args) throws IOException, InterruptedException {
    String classpath =
        Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
            .filter(e -> !NOT_FOR_FLINK.matcher(Path.of(e).getFileName().toString()).matches())
            .collect(Collectors.joining(File.pathSeparator));
    // Flink logs its own noise at WARN (and log4j complains about its message patterns); the
    // benchmark's log file keeps everything
    List<String> jvmOptions =
        List.of(
            "-D" + CHILD + "=true",
            "-Dsluice.console.level=ERROR",
            "-Dlog4j2.StatusLogger.level=OFF");
    return BenchmarkCli.childJvm(NAME, jvmOptions, classpath, args).start().waitFor();
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
      Path dir = Files.createDirectories(Path.of(options.dir));
      Map<String, double[]> seconds = new LinkedHashMap<>();
      Map<String, String[]> signatures = new LinkedHashMap<>();
      // both clusters live side by side and take turns, so neither gains from running second in
      // a warmer JVM
      try (ShuffleServer server = startServer(dir);
          FlinkWorkloads.Cluster builtin = FlinkWorkloads.Cluster.builtin();
          FlinkWorkloads.Cluster sluice =
              FlinkWorkloads.Cluster.sluice("127.0.0.1:" + server.port())) {
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
        out.printf(
            Locale.ROOT,
            "# Sluice server: %d of %d map partition reads continued forward in their file%n",
            server.metrics().mapReadsInOrder().getCount(),
            server.metrics().mapReads().getCount());
      }
      if (options.chart != null) {
        ChartOption.write(chart(options, seconds), Path.of(options.chart), out);
      }
      report(workloads, seconds, signatures);
      for (String[] s : signatures.values()) {
        if (!s[0].equals(s[1])) {
          return 1;
        }
      }
      return 0;
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

    private static ShuffleServer startServer(Path dir) throws IOException {
      Path data = Files.createDirectories(dir.resolve("data"));
      SluiceConf conf =
          SluiceConf.of(
              Map.of(
                  "sluice.server.host", "127.0.0.1",
                  "sluice.server.port", "0",
                  "sluice.metrics.port", "-1",
                  "sluice.server.dirs", data.toString(),
                  "sluice.memory.max", "512m"));
      return new ShuffleServer(
          new ServerConf(conf), new NetworkConf(conf), new MetricRegistry(), Clock.SYSTEM);
    }

    private void report(
        List<FlinkWorkloads.Workload> workloads,
        Map<String, double[]> seconds,
        Map<String, String[]> signatures) {
      out.println();
      out.println("best of " + options.rounds + " rounds:");
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
      out.println("{\"benchmark\":\"flink\",\"workloads\":[" + String.join(",", lines) + "]}");
    }
  }
}
