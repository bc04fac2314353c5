package io.sluice.benchmarks;

import io.sluice.common.SluiceConf;
import io.sluice.network.NetworkConf;
import io.sluice.network.Transports;
import io.sluice.server.ShuffleServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * {@code shuffle-bench spark}: the same Spark jobs on Spark's built-in sort shuffle and on Sluice,
 * in one run, each timed after a warm-up run, in {@code local-cluster[2,1,M]} mode (two executor
 * JVMs, as a cluster has). This JVM holds the Sluice servers and measures their CPU and bytes; the
 * jobs run in a child JVM ({@link SparkBenchmarkDriver}) on the Spark line {@code --spark-line}
 * names (3.5 on Scala 2.12, or 4.2 on Scala 2.13), from that line's jars and the Sluice client's
 * shaded jar for it, as an application runs. Prints a table, one JSON line per workload and, last,
 * one JSON object with all of them.
 */
final class SparkBenchmark {
  static final String NAME = "spark";
  static final String DESCRIPTION =
      "Spark jobs (repartition, small-blocks, skew-join) on Sluice vs the built-in shuffle";

  private SparkBenchmark() {}

  static int run(String[] args, PrintStream out, PrintStream err) {
    SparkBenchmarkOptions options = new SparkBenchmarkOptions();
    Integer exit = BenchmarkCli.parse(NAME, options, () -> options.help, args, out, err);
    if (exit != null) {
      return exit;
    }
    String problem = options.problem();
    if (problem != null) {
      err.println("shuffle-bench " + NAME + ": " + problem);
      return 2;
    }
    try {
      return new SparkBenchmarkRun(options, out).run();
    } catch (IOException e) {
      err.println("shuffle-bench " + NAME + " failed: " + e.getMessage());
      return 1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      err.println("shuffle-bench " + NAME + " interrupted");
      return 1;
    }
  }

  /** A Spark line the jobs can run on: its Scala version and where its class path comes from. */
  static final class SparkLine {
    static final Map<String, SparkLine> KNOWN =
        new TreeMap<>(
            Map.of(
                "3.3", new SparkLine("2.12", "spark3.3_2.12"),
                "3.4", new SparkLine("2.12", "spark3.4_2.12"),
                "3.5", new SparkLine("2.12", "spark3.5_2.12"),
                "4.0", new SparkLine("2.13", "spark4.0_2.13"),
                "4.2", new SparkLine("2.13", "spark4.2_2.13")));

    final String scala;

    /** The module under benchmarks/ whose target/lib holds the line's jars. */
    final String module;

    private SparkLine(String scala, String module) {
      this.scala = scala;
      this.module = module;
    }

    /**
     * The child JVM's class path.
     *
     * @throws IOException naming the command that builds the line's jars when they are missing
     */
    String classpath() throws IOException {
      return BenchmarkCli.lineClasspath(module);
    }
  }

  /** One run of the benchmark: the servers here, the jobs in a child JVM. */
  static final class SparkBenchmarkRun {
    private static final int BUILTIN = 0;
    private static final int SLUICE = 1;
    // the second Sluice run: without checksums (--checksums both) or with factor 1 (--replication
    // both)
    private static final int OTHER = 2;
    // the servers' counters (BenchServers.counters)
    private static final int SHUFFLED = BenchServers.SHUFFLED;
    private static final int READ = BenchServers.READ;
    private static final int BATCHES = BenchServers.BATCHES;
    private static final double GIB = 1024.0 * 1024 * 1024;
    private final String[] modes = {"built-in", "sluice", "sluice"};

    /** Bytes and rounds of the kernel-floor probe run before the jobs. */
    private static final long FLOOR_BYTES = 512L << 20;

    private static final int FLOOR_ROUNDS = 3;

    /** What the kernel alone charges a server per GiB here; null where thread CPU is unknown. */
    private KernelFloor floor;

    /** The emulated disk (--disk hdd), or null. */
    private DiskEmulation disk;

    private final SparkBenchmarkOptions options;
    private final PrintStream out;

    SparkBenchmarkRun(SparkBenchmarkOptions options, PrintStream out) {
      this.options = options;
      this.out = out;
    }

    private List<SparkWorkloads.Workload> workloads() {
      Map<String, SparkWorkloads.Workload> all =
          SparkBenchmarkDriver.workloads(
              options.scale, options.smallBlocksMaps, options.smallBlocksReducers);
      List<SparkWorkloads.Workload> chosen = new ArrayList<>();
      for (String name : options.workloads.split(",")) {
        chosen.add(all.get(name.trim()));
      }
      return chosen;
    }

    int run() throws IOException, InterruptedException {
      List<SparkWorkloads.Workload> workloads = workloads();
      Path dir = Files.createDirectories(Path.of(options.dir));
      SparkResults results = new SparkResults(workloads);
      // columns: BUILTIN, SLUICE (as --checksums and --replication say; checksums on and factor
      // 2 for "both"), and for "both" also OTHER, run before SLUICE
      boolean checksumsBoth = options.checksums.equals("both");
      boolean replicationBoth = options.replication.equals("both");
      boolean both = checksumsBoth || replicationBoth;
      boolean checksums = !options.checksums.equals("off");
      int factor = options.replication.equals("1") ? 1 : 2;
      Map<String, String> settings = serverSettings(options.serverConf);
      BenchHdfs hdfs = options.hdfsTier ? BenchHdfs.start(dir.resolve("hdfs")) : null;
      if (hdfs != null) {
        settings.putAll(hdfs.serverSettings());
      }
      floor = KernelFloor.measure(dir, FLOOR_BYTES, FLOOR_ROUNDS);
      if (floor != null) {
        out.println("# kernel floor in " + dir + ": " + floor);
      }
      if (options.disk.equals("hdd")) {
        disk =
            DiskEmulation.start(
                dir,
                new DiskEmulation.Limits(
                    options.diskIops, options.diskMbps * 1_000_000L, options.diskDropCacheMillis));
        out.println(
            "# --disk hdd on device " + disk.device() + " under " + dir + ": " + disk.limits());
      }
      try (BenchServers servers = new BenchServers(settings)) {
        for (int i = 0; i < (factor > 1 ? 2 : 1); i++) {
          servers.start(dir.resolve("server" + i));
        }
        List<String> runs = new ArrayList<>();
        runs.add(BUILTIN + "/builtin");
        if (checksumsBoth) {
          runs.add(sluiceRun(servers, OTHER, false, 1));
        } else if (replicationBoth) {
          runs.add(sluiceRun(servers, OTHER, checksums, 1));
        }
        runs.add(sluiceRun(servers, SLUICE, checksums, factor));
        int exit = runJobs(runs, servers, results);
        if (exit != 0) {
          out.println("# the Spark JVM exited with " + exit);
          return 1;
        }
      } finally {
        if (disk != null) {
          disk.close();
        }
        if (hdfs != null) {
          hdfs.close();
        }
      }
      chart(workloads, results, both);
      report(workloads, results, both);
      for (SparkWorkloads.Workload w : workloads) {
        if (!resultsEqual(results, w, both)) {
          return 1;
        }
      }
      return 0;
    }

    /** The driver's run spec of a Sluice column, naming it in {@link #modes}. */
    private String sluiceRun(BenchServers servers, int column, boolean checksums, int factor) {
      modes[column] =
          "sluice"
              + (checksums ? "" : " without checksums")
              + (factor > 1 ? " with replicas" : "")
              + (options.hdfsTier ? " on hdfs" : "");
      List<String> addresses = new ArrayList<>();
      for (ShuffleServer server : servers.servers) {
        addresses.add("127.0.0.1:" + server.port());
      }
      return column
          + "/sluice/"
          + String.join(",", addresses)
          + "/"
          + factor
          + "/"
          + (checksums ? "on" : "off");
    }

    /**
     * Runs the jobs in the Spark JVM, passing its progress through and recording each timed run
     * with the servers' CPU and bytes over it.
     *
     * @return the Spark JVM's exit code
     */
    private int runJobs(List<String> runs, BenchServers servers, SparkResults results)
        throws IOException, InterruptedException {
      SparkLine line = SparkLine.KNOWN.get(options.sparkLine);
      List<String> args = new ArrayList<>();
      args.add("workloads=" + options.workloads);
      args.add("scale=" + options.scale);
      args.add("warmups=" + options.warmups);
      args.add("timedRuns=" + options.timedRuns);
      args.add("coldStart=" + options.coldStart);
      args.add("smallBlocks=" + options.smallBlocksMaps + "x" + options.smallBlocksReducers);
      args.add("executorMemory=" + options.executorMemory);
      args.add("executorJavaOptions=" + options.executorJavaOptions);
      args.add("scala=" + line.scala);
      for (String run : runs) {
        args.add("run=" + run);
      }
      Process process = SparkDriverJvm.start(line, args, Path.of(options.dir));
      CpuMeter.Snapshot cpuBefore = null;
      DiskEmulation.Counters diskBefore = null;
      long[] countersBefore = null;
      try (BufferedReader lines =
          new BufferedReader(
              new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
        String text;
        while ((text = lines.readLine()) != null) {
          String[] f = text.split(" ", -1);
          if (f[0].equals(SparkBenchmarkDriver.BEGIN)) {
            diskBefore = disk == null ? null : disk.counters();
            cpuBefore = servers.cpu();
            countersBefore = servers.counters();
          } else if (f[0].equals(SparkBenchmarkDriver.END)) {
            int column = Integer.parseInt(f[2]);
            DiskEmulation.Counters used = null;
            if (disk != null) {
              used = disk.counters().minus(diskBefore);
              out.println("#   " + modes[column] + ": " + used);
            }
            record(
                results,
                f[1],
                column,
                Double.parseDouble(f[3]),
                SparkBenchmarkDriver.decode(f[4]),
                SparkBenchmarkDriver.decode(f[5]),
                column == BUILTIN ? null : servers,
                cpuBefore,
                countersBefore,
                used);
          } else {
            out.println(text);
          }
        }
      }
      return process.waitFor();
    }

    /** One timed run of one workload; with {@code servers}, also their CPU and bytes over it. */
    private void record(
        SparkResults results,
        String workload,
        int column,
        double seconds,
        String signature,
        String note,
        BenchServers servers,
        CpuMeter.Snapshot cpuBefore,
        long[] countersBefore,
        DiskEmulation.Counters diskUsed) {
      String mode = modes[column];
      if (!note.isEmpty()
          && !results.notes.getOrDefault(workload, "").contains(mode + ": " + note)) {
        results.notes.merge(workload, mode + ": " + note, (a, b) -> a + ", " + b);
      }
      if (servers == null) {
        out.printf(Locale.ROOT, "#   %s: %.2f s, %s%n", mode, seconds, signature);
        results.add(
            workload,
            column,
            new SparkResults.TimedRun(seconds, signature, Double.NaN, 0, 0, 0, diskUsed));
        return;
      }
      CpuMeter.Snapshot cpuAfter = servers.cpu();
      double cpu =
          servers.cpuSupported()
              ? (cpuAfter.serverNanos - cpuBefore.serverNanos) / 1e9
              : Double.NaN;
      long[] counters = servers.counters();
      long bytes = counters[SHUFFLED] - countersBefore[SHUFFLED];
      long read = counters[READ] - countersBefore[READ];
      results.add(
          workload,
          column,
          new SparkResults.TimedRun(
              seconds,
              signature,
              cpu,
              bytes,
              read,
              counters[BATCHES] - countersBefore[BATCHES],
              diskUsed));
      out.printf(
          Locale.ROOT,
          "#   %s: %.2f s, %s; server CPU %.2f s for %.3f GiB shuffled, %.3f GiB read%n",
          mode,
          seconds,
          signature,
          cpu,
          bytes / GIB,
          read / GIB);
      if (servers.cpuSupported()) {
        out.println(
            "#   server CPU s by thread: "
                + cpuAfter.serverSecondsByGroupSince(cpuBefore)
                + (floor == null
                    ? ""
                    : String.format(
                        Locale.ROOT, "; kernel floor %.2f s", floor.seconds(bytes, read))));
      }
    }

    /** The --server-conf settings as a map; names the setting that is not key=value. */
    /** "epoll" or "nio": what the servers started with {@code settings} run on here. */
    static String serverTransport(List<String> settings) {
      return Transports.name(new NetworkConf(SluiceConf.of(serverSettings(settings))));
    }

    static Map<String, String> serverSettings(List<String> settings) {
      return BenchmarkCli.settings("--server-conf", settings);
    }

    private void report(
        List<SparkWorkloads.Workload> workloads, SparkResults results, boolean both) {
      boolean replicationBoth = options.replication.equals("both");
      out.println();
      out.printf(
          Locale.ROOT,
          "%-14s %12s %12s %8s %14s %10s %10s %12s %8s %8s  %s%n",
          "workload",
          "built-in s",
          "sluice s",
          "ratio",
          replicationBoth ? "factor-1 s" : "no-checksum s",
          replicationBoth ? "repl cost" : "cksum cost",
          "GiB",
          both ? "srv CPU s/GiB" : "srv s/GiB",
          "floor",
          "equal",
          "notes");
      List<String> json = new ArrayList<>();
      double totalOn = 0;
      double totalOff = 0;
      for (SparkWorkloads.Workload w : workloads) {
        double[] s = results.seconds(w.name());
        SparkResults.TimedRun sluice = results.median(w.name(), SLUICE);
        boolean equal = resultsEqual(results, w, both);
        double ratio = s[SLUICE] / s[BUILTIN];
        double cost = both ? s[SLUICE] / s[OTHER] : Double.NaN;
        double cpuPerGiB = results.serverCpuPerGiB(w.name(), SLUICE);
        double otherCpuPerGiB = both ? results.serverCpuPerGiB(w.name(), OTHER) : Double.NaN;
        long bytes = sluice.bytesShuffled;
        long read = sluice.bytesRead;
        long batches = sluice.batches;
        double microsPerBatch = batches > 0 ? sluice.serverCpuSeconds * 1e6 / batches : Double.NaN;
        double floorPerGiB =
            floor == null || bytes == 0 ? Double.NaN : floor.seconds(bytes, read) / (bytes / GIB);
        totalOn += s[SLUICE];
        totalOff += s[OTHER];
        String note = results.notes.getOrDefault(w.name(), "");
        out.printf(
            Locale.ROOT,
            "%-14s %12.2f %12.2f %8.3f %14s %10s %10.3f %12s %8.2f %8s  %s%n",
            w.name(),
            s[BUILTIN],
            s[SLUICE],
            ratio,
            both ? String.format(Locale.ROOT, "%.2f", s[OTHER]) : "-",
            both ? String.format(Locale.ROOT, "%.3f", cost) : "-",
            bytes / GIB,
            String.format(Locale.ROOT, "%.2f", cpuPerGiB)
                + (both ? String.format(Locale.ROOT, " / %.2f", otherCpuPerGiB) : ""),
            floorPerGiB,
            equal,
            note);
        json.add(
            "{\"workload\":"
                + Json.str(w.name())
                + ",\"sparkLine\":"
                + Json.str(options.sparkLine)
                + ",\"sluiceSeconds\":"
                + Json.num(s[SLUICE])
                + ",\"builtinSeconds\":"
                + Json.num(s[BUILTIN])
                + ",\"ratio\":"
                + Json.num(ratio)
                + ",\"sluiceRunsSeconds\":"
                + results.secondsJson(w.name(), SLUICE)
                + ",\"builtinRunsSeconds\":"
                + results.secondsJson(w.name(), BUILTIN)
                + ",\"shuffleBytes\":"
                + bytes
                + ",\"serverCpuSeconds\":"
                + Json.num(sluice.serverCpuSeconds)
                + ",\"serverCpuSecondsPerGiB\":"
                + Json.num(cpuPerGiB)
                + ",\"bytesRead\":"
                + read
                + ",\"batchesPushed\":"
                + batches
                + ",\"serverCpuMicrosPerBatch\":"
                + Json.num(microsPerBatch)
                + ",\"kernelFloorCpuSecondsPerGiB\":"
                + Json.num(floorPerGiB)
                + (both
                    ? ",\""
                        + otherName()
                        + "Seconds\":"
                        + Json.num(s[OTHER])
                        + ",\""
                        + ratioName()
                        + "\":"
                        + Json.num(cost)
                        + ",\""
                        + otherName()
                        + "ServerCpuSecondsPerGiB\":"
                        + Json.num(otherCpuPerGiB)
                    : "")
                + diskJson(results.median(w.name(), BUILTIN).disk, sluice.disk)
                + ",\"resultsEqual\":"
                + equal
                + ",\"description\":"
                + Json.str(w.describe())
                + ",\"notes\":"
                + Json.str(note)
                + "}");
      }
      out.println();
      out.println(
          (options.timedRuns > 1
                  ? "Each column is the timed run of median job time of "
                      + options.timedRuns
                      + " (every run's seconds are in the JSON). "
                  : "")
              + "GiB: bytes pushed to the Sluice server(s) in the timed run, replica copies not"
              + " counted;"
              + " srv s/GiB: CPU seconds of the server threads (event loops, flushers, sorters...)"
              + " per GiB"
              + (both ? ", " + modes[SLUICE] + " / " + modes[OTHER] : "")
              + "; floor: the CPU seconds per GiB the kernel alone charges for those bytes here"
              + " (written to a file and received over loopback, plus the bytes read sent with"
              + " sendfile), measured before the jobs"
              + (floor == null ? "" : " (" + floor + ")")
              + ".");
      for (String line : json) {
        out.println(line);
      }
      out.println(
          "{\"benchmark\":\"spark\",\"sparkLine\":"
              + Json.str(options.sparkLine)
              + ",\"master\":\"local-cluster[2,1,"
              + SparkBenchmarkDriver.megabytes(options.executorMemory)
              + "]\",\"cores\":"
              + Runtime.getRuntime().availableProcessors()
              + ",\"serverTransport\":"
              + Json.str(serverTransport(options.serverConf))
              + ",\"scale\":"
              + Json.num(options.scale)
              + ",\"warmups\":"
              + options.warmups
              + ",\"timedRuns\":"
              + options.timedRuns
              + ",\"coldStart\":"
              + options.coldStart
              + ",\"checksums\":"
              + Json.str(options.checksums)
              + ",\"replication\":"
              + Json.str(options.replication)
              + ",\"storage\":"
              + Json.str(options.hdfsTier ? "hdfs" : "local")
              + ",\"disk\":"
              + Json.str(options.disk)
              + (disk == null ? "" : ",\"diskLimits\":" + disk.limits().json())
              + (floor == null
                  ? ""
                  : ",\"kernelFloorCpuSecondsPerGiB\":{\"write\":"
                      + Json.num(floor.writeSecondsPerGiB)
                      + ",\"receive\":"
                      + Json.num(floor.receiveSecondsPerGiB)
                      + ",\"sendfile\":"
                      + Json.num(floor.sendfileSecondsPerGiB)
                      + "}")
              + (both ? ",\"" + ratioName() + "\":" + Json.num(totalOn / totalOff) : "")
              + ",\"workloads\":["
              + String.join(",", json)
              + "]}");
    }

    /** With --disk hdd, the disk limits and what each side asked of the disk, as JSON fields. */
    private String diskJson(DiskEmulation.Counters builtin, DiskEmulation.Counters sluice) {
      if (disk == null) {
        return ",\"disk\":" + Json.str(options.disk);
      }
      return ",\"disk\":\"hdd\",\"diskLimits\":"
          + disk.limits().json()
          + ",\"builtinDisk\":"
          + (builtin == null ? "null" : builtin.json())
          + ",\"sluiceDisk\":"
          + (sluice == null ? "null" : sluice.json());
    }

    /**
     * Writes the SVG chart of job seconds per workload: built-in, Sluice, the second Sluice run.
     */
    private void chart(
        List<SparkWorkloads.Workload> workloads, SparkResults results, boolean both) {
      List<String> series = new ArrayList<>(List.of(modes[BUILTIN], modes[SLUICE]));
      if (both) {
        series.add(modes[OTHER]);
      }
      Map<String, double[]> seconds = new LinkedHashMap<>();
      for (SparkWorkloads.Workload w : workloads) {
        seconds.put(w.name(), results.seconds(w.name()));
      }
      Path file =
          options.chart.isEmpty()
              ? Path.of(options.dir, "spark-bench.svg")
              : Path.of(options.chart);
      ChartOption.write(chart(options, series, seconds), file, out);
    }

    /**
     * The chart of job seconds per workload: one bar per series, from each workload's seconds in
     * column order (built-in, Sluice, the second Sluice run); columns past the series are left out.
     */
    static BarChart chart(
        SparkBenchmarkOptions options, List<String> series, Map<String, double[]> seconds) {
      BarChart chart =
          new BarChart(
              String.format(
                  Locale.ROOT,
                  "shuffle-bench spark: job seconds (Spark %s, scale %s, local-cluster[2,1,%d], %d"
                      + " cores)",
                  options.sparkLine,
                  Json.num(options.scale),
                  SparkBenchmarkDriver.megabytes(options.executorMemory),
                  Runtime.getRuntime().availableProcessors()),
              "job seconds",
              series);
      for (Map.Entry<String, double[]> workload : seconds.entrySet()) {
        chart.group(workload.getKey(), Arrays.copyOf(workload.getValue(), series.size()));
      }
      return chart;
    }

    /**
     * Whether a workload's result on Sluice (and the second Sluice run) equals the built-in one.
     */
    private static boolean resultsEqual(
        SparkResults results, SparkWorkloads.Workload w, boolean both) {
      return both
          ? results.resultsEqual(w.name(), BUILTIN, SLUICE, OTHER)
          : results.resultsEqual(w.name(), BUILTIN, SLUICE);
    }

    /** The JSON name of the second Sluice run's time. */
    private String otherName() {
      return options.replication.equals("both") ? "factor1" : "withoutChecksums";
    }

    /** The JSON name of the main run's time over the second one's. */
    private String ratioName() {
      return options.replication.equals("both") ? "replicationRatio" : "checksumJobTimeRatio";
    }
  }
}
