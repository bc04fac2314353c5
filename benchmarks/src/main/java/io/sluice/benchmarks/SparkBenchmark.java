package io.sluice.benchmarks;

import com.beust.jcommander.Parameter;
import com.codahale.metrics.MetricRegistry;
import io.sluice.client.ChecksumBenchmarkSwitch;
import io.sluice.common.Clock;
import io.sluice.common.SluiceConf;
import io.sluice.network.NetworkConf;
import io.sluice.server.ServerConf;
import io.sluice.server.ServerMetrics;
import io.sluice.server.ShuffleServer;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.spark.sql.SparkSession;

/**
 * {@code shuffle-bench spark}: the same Spark jobs on Spark's built-in sort shuffle and on Sluice,
 * in one run, each timed after a warm-up run, in {@code local-cluster[2,1,M]} mode (two executor
 * JVMs, as a cluster has) with one Sluice server in the benchmark's JVM. Prints a table, one JSON
 * line per workload and, last, one JSON object with all of them.
 *
 * <p>Spark 3.5 needs JDK 17's {@code --add-opens} list, so the benchmark runs itself again in a
 * child JVM with those options; the executors get them from Spark's launcher.
 */
final class SparkBenchmark {
  static final String NAME = "spark";
  static final String DESCRIPTION =
      "Spark jobs (repartition, small-blocks, skew-join) on Sluice vs the built-in shuffle";
  private static final String CHILD = "sluice.bench.spark.child";
  private static final List<String> OPENS =
      List.of(
          "java.lang",
          "java.lang.invoke",
          "java.lang.reflect",
          "java.io",
          "java.net",
          "java.nio",
          "java.util",
          "java.util.concurrent",
          "java.util.concurrent.atomic",
          "jdk.internal.ref",
          "sun.nio.ch",
          "sun.nio.cs",
          "sun.security.action",
          "sun.util.calendar");

  /** Command-line options. */
  static final class Options {
    @Parameter(
        names = "--scale",
        description = "Multiplies every workload's data size (1 = the default sizes)")
    double scale = 1.0;

    @Parameter(
        names = "--workloads",
        description =
            "Comma-separated workloads to run: repartition, small-blocks, skew-join,"
                + " local-reader")
    String workloads = "repartition,small-blocks,skew-join";

    @Parameter(
        names = "--checksums",
        description =
            "Batch checksums on the Sluice run: on (every batch sealed and verified, as always"
                + " outside benchmarks), off (a switch only benchmarks use), or both: Sluice runs"
                + " once without and once with them, and the report adds their job-time ratio")
    String checksums = "on";

    @Parameter(
        names = "--replication",
        description =
            "sluice.replication.factor of the Sluice run: 1, 2 (a replica of every split on the"
                + " second server), or both: Sluice runs with 1, then with 2, and the report adds"
                + " their job-time ratio. With 2 or both the benchmark starts two servers")
    String replication = "1";

    @Parameter(
        names = "--server-conf",
        description =
            "A setting of the Sluice servers, key=value (repeat for more), e.g."
                + " sluice.read.sortMapRanges=true")
    List<String> serverConf = new ArrayList<>();

    @Parameter(names = "--executor-memory", description = "Heap of each of the two executors")
    String executorMemory = "2g";

    @Parameter(
        names = "--executor-java-options",
        description =
            "More JVM options for every executor of every run, e.g. to profile them:"
                + " -XX:StartFlightRecording=filename=/tmp/executor.jfr,settings=profile")
    String executorJavaOptions = "";

    @Parameter(names = "--dir", description = "Data directory of the Sluice server")
    String dir = System.getProperty("java.io.tmpdir") + "/sluice-bench-spark";

    @Parameter(
        names = "--chart",
        description =
            "Where to write the SVG chart of job seconds per workload (default: spark-bench.svg"
                + " in --dir)")
    String chart = "";

    @Parameter(
        names = {"-h", "--help"},
        help = true,
        description = "Prints this help")
    boolean help;
  }

  private SparkBenchmark() {}

  static int run(String[] args, PrintStream out, PrintStream err) {
    Options options = new Options();
    Integer exit = BenchmarkCli.parse(NAME, options, () -> options.help, args, out, err);
    if (exit != null) {
      return exit;
    }
    options.checksums = options.checksums.trim().toLowerCase(Locale.ROOT);
    if (!List.of("on", "off", "both").contains(options.checksums)) {
      err.println(
          "shuffle-bench "
              + NAME
              + ": --checksums must be on, off or both, not '"
              + options.checksums
              + "'");
      return 2;
    }
    options.replication = options.replication.trim().toLowerCase(Locale.ROOT);
    if (!List.of("1", "2", "both").contains(options.replication)) {
      err.println(
          "shuffle-bench "
              + NAME
              + ": --replication must be 1, 2 or both, not '"
              + options.replication
              + "'");
      return 2;
    }
    if (options.replication.equals("both") && options.checksums.equals("both")) {
      err.println(
          "shuffle-bench "
              + NAME
              + ": --replication both and --checksums both each add a run; use one at a time");
      return 2;
    }
    try {
      SparkBenchmarkRun.serverSettings(options.serverConf);
    } catch (IllegalArgumentException e) {
      err.println("shuffle-bench " + NAME + ": " + e.getMessage());
      return 2;
    }
    try {
      if (System.getProperty(CHILD) == null) {
        return relaunch(args, options);
      }
      return new SparkBenchmarkRun(options, out).run();
    } catch (IOException e) {
      err.println("shuffle-bench " + NAME + " failed: " + e);
      return 1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      err.println("shuffle-bench " + NAME + " interrupted");
      return 1;
    }
  }

  /** Runs the benchmark in a child JVM with the options Spark needs on JDK 17. */
  private static int relaunch(String[] args, Options options)
      throws IOException, InterruptedException {
    List<String> jvmOptions = new ArrayList<>();
    for (String open : OPENS) {
      jvmOptions.add("--add-opens=java.base/" + open + "=ALL-UNNAMED");
    }
    jvmOptions.add("-Djdk.reflect.useDirectMethodHandle=false");
    jvmOptions.add("-Dio.netty.tryReflectionSetAccessible=true");
    jvmOptions.add("-D" + CHILD + "=true");
    ProcessBuilder child =
        BenchmarkCli.childJvm(NAME, jvmOptions, System.getProperty("java.class.path"), args);
    // every Spark endpoint (driver, local-cluster workers, executors) on loopback
    child.environment().put("SPARK_LOCAL_IP", "127.0.0.1");
    // the local-cluster workers keep their work directories (executor logs) under SPARK_HOME
    Path sparkHome = Files.createDirectories(Path.of(options.dir, "spark-home"));
    child.environment().put("SPARK_HOME", sparkHome.toString());
    return child.start().waitFor();
  }

  /** One run of the benchmark, in the child JVM. */
  static final class SparkBenchmarkRun {
    private static final int BUILTIN = 0;
    private static final int SLUICE = 1;
    // the second Sluice run: without checksums (--checksums both) or with factor 1 (--replication
    // both)
    private static final int OTHER = 2;
    private static final double GIB = 1024.0 * 1024 * 1024;
    private final String[] modes = {"built-in", "sluice", "sluice"};

    private final Options options;
    private final PrintStream out;

    SparkBenchmarkRun(Options options, PrintStream out) {
      this.options = options;
      this.out = out;
    }

    private List<SparkWorkloads.Workload> workloads() {
      double s = options.scale;
      Map<String, SparkWorkloads.Workload> all = new LinkedHashMap<>();
      all.put("repartition", SparkWorkloads.repartition(8, (int) (1_250_000 * s), 16));
      all.put("small-blocks", SparkWorkloads.smallBlocks(400, 2000, (int) (4_000 * s)));
      all.put("skew-join", SparkWorkloads.skewJoin((long) (2_000_000 * s), 200_000, 80));
      all.put("local-reader", SparkWorkloads.localReader((long) (6_000_000 * s), 8));
      List<SparkWorkloads.Workload> chosen = new ArrayList<>();
      for (String name : options.workloads.split(",")) {
        SparkWorkloads.Workload w = all.get(name.trim());
        if (w == null) {
          throw new IllegalArgumentException(
              "unknown workload '" + name + "'; known: " + all.keySet());
        }
        chosen.add(w);
      }
      return chosen;
    }

    int run() throws IOException {
      List<SparkWorkloads.Workload> workloads = workloads();
      Path dir = Files.createDirectories(Path.of(options.dir));
      Results results = new Results(workloads);
      // columns: BUILTIN, SLUICE (as --checksums and --replication say; checksums on and factor
      // 2 for "both"), and for "both" also OTHER
      SparkSession builtin = session("shuffle-bench-builtin", Map.of());
      try {
        measure(builtin, null, workloads, BUILTIN, results);
      } finally {
        builtin.stop();
      }
      boolean checksumsBoth = options.checksums.equals("both");
      boolean replicationBoth = options.replication.equals("both");
      // the extra column: without checksums, or with factor 1 when the main run has factor 2
      boolean both = checksumsBoth || replicationBoth;
      boolean checksums = !options.checksums.equals("off");
      int factor = options.replication.equals("1") ? 1 : 2;
      Servers servers = new Servers(serverSettings(options.serverConf));
      try {
        for (int i = 0; i < (factor > 1 ? 2 : 1); i++) {
          servers.start(dir.resolve("server" + i));
        }
        if (checksumsBoth) {
          measureSluice(servers, false, 1, workloads, OTHER, results);
        } else if (replicationBoth) {
          measureSluice(servers, checksums, 1, workloads, OTHER, results);
        }
        measureSluice(servers, checksums, factor, workloads, SLUICE, results);
      } finally {
        servers.close();
      }
      chart(workloads, results, both);
      report(workloads, results, both);
      for (String[] s : results.signatures.values()) {
        if (!s[BUILTIN].equals(s[SLUICE]) || (both && !s[BUILTIN].equals(s[OTHER]))) {
          return 1;
        }
      }
      return 0;
    }

    private void measureSluice(
        Servers servers,
        boolean checksums,
        int replicationFactor,
        List<SparkWorkloads.Workload> workloads,
        int column,
        Results results) {
      Map<String, String> conf = new LinkedHashMap<>();
      conf.put("spark.shuffle.manager", "org.apache.spark.shuffle.sluice.SluiceShuffleManager");
      conf.put(
          "spark.shuffle.sort.io.plugin.class",
          "org.apache.spark.shuffle.sluice.SluiceShuffleDataIO");
      List<String> addresses = new ArrayList<>();
      for (ShuffleServer server : servers.servers) {
        addresses.add("127.0.0.1:" + server.port());
      }
      conf.put("spark.sluice.servers", String.join(",", addresses));
      conf.put("spark.sluice.replication.factor", "" + replicationFactor);
      modes[column] =
          "sluice"
              + (checksums ? "" : " without checksums")
              + (replicationFactor > 1 ? " with replicas" : "");
      if (!checksums) {
        // the executors push and read; the switch is a system property of their JVMs
        conf.put(
            "spark.executor.extraJavaOptions", "-D" + ChecksumBenchmarkSwitch.PROPERTY + "=true");
      }
      SparkSession sluice = session("shuffle-bench-" + modes[column].replace(' ', '-'), conf);
      try {
        measure(sluice, servers, workloads, column, results);
      } finally {
        sluice.stop();
      }
    }

    /** Times each workload after a warm-up; with {@code servers}, also their CPU and bytes. */
    private void measure(
        SparkSession spark,
        Servers servers,
        List<SparkWorkloads.Workload> workloads,
        int column,
        Results results) {
      String mode = modes[column];
      for (SparkWorkloads.Workload w : workloads) {
        out.println("# " + w.name() + " (" + w.describe() + ") on " + mode + ": warm-up");
        w.run(spark);
        long cpuBefore = servers == null ? 0 : servers.cpuNanos();
        long bytesBefore = servers == null ? 0 : servers.bytesShuffled();
        long start = System.nanoTime();
        SparkWorkloads.Outcome outcome = w.run(spark);
        double s = (System.nanoTime() - start) / 1e9;
        results.seconds.get(w.name())[column] = s;
        results.signatures.get(w.name())[column] = outcome.signature;
        if (!outcome.note.isEmpty()) {
          results.notes.merge(w.name(), mode + ": " + outcome.note, (a, b) -> a + ", " + b);
        }
        if (servers == null) {
          out.printf(Locale.ROOT, "#   %.2f s, %s%n", s, outcome.signature);
          continue;
        }
        double cpu = servers.cpuSupported() ? (servers.cpuNanos() - cpuBefore) / 1e9 : Double.NaN;
        long bytes = servers.bytesShuffled() - bytesBefore;
        results.serverCpuSeconds.get(w.name())[column] = cpu;
        results.bytesShuffled.get(w.name())[column] = bytes;
        out.printf(
            Locale.ROOT,
            "#   %.2f s, %s; server CPU %.2f s for %.3f GiB shuffled%n",
            s,
            outcome.signature,
            cpu,
            bytes / GIB);
      }
    }

    /** The --server-conf settings as a map; names the setting that is not key=value. */
    static Map<String, String> serverSettings(List<String> settings) {
      Map<String, String> out = new LinkedHashMap<>();
      for (String setting : settings) {
        int eq = setting.indexOf('=');
        if (eq <= 0) {
          throw new IllegalArgumentException(
              "--server-conf takes key=value, e.g. sluice.read.sortMapRanges=true, not '"
                  + setting
                  + "'");
        }
        out.put(setting.substring(0, eq).trim(), setting.substring(eq + 1).trim());
      }
      return out;
    }

    private SparkSession session(String name, Map<String, String> extra) {
      String classpath = System.getProperty("java.class.path");
      SparkSession.Builder b =
          SparkSession.builder()
              .appName(name)
              .master("local-cluster[2,1," + megabytes(options.executorMemory) + "]")
              .config("spark.executor.memory", options.executorMemory)
              .config("spark.ui.enabled", "false")
              .config("spark.driver.host", "127.0.0.1")
              .config("spark.driver.bindAddress", "127.0.0.1")
              .config("spark.serializer", "org.apache.spark.serializer.KryoSerializer")
              .config("spark.sql.adaptive.enabled", "true")
              .config("spark.locality.wait", "0s")
              // executors are started by Spark's launcher from this classpath (no distribution)
              .config("spark.executorEnv.SPARK_DIST_CLASSPATH", classpath)
              .config("spark.executorEnv.SPARK_SCALA_VERSION", "2.12")
              .config("spark.executorEnv.SPARK_TESTING", "1");
      for (Map.Entry<String, String> e : extra.entrySet()) {
        b = b.config(e.getKey(), e.getValue());
      }
      String javaOptions =
          (extra.getOrDefault("spark.executor.extraJavaOptions", "")
                  + " "
                  + options.executorJavaOptions)
              .trim();
      if (!javaOptions.isEmpty()) {
        b = b.config("spark.executor.extraJavaOptions", javaOptions);
      }
      return b.getOrCreate();
    }

    private static int megabytes(String size) {
      String s = size.trim().toLowerCase(Locale.ROOT);
      long n = Long.parseLong(s.replaceAll("[a-z]+$", ""));
      if (s.endsWith("g")) {
        return (int) (n * 1024);
      }
      return (int) n;
    }

    /**
     * What the runs measured per workload, one column per run: job seconds, the result's signature,
     * and on Sluice the servers' CPU seconds and the bytes shuffled through them.
     */
    private static final class Results {
      final Map<String, double[]> seconds = new LinkedHashMap<>();
      final Map<String, String[]> signatures = new LinkedHashMap<>();
      final Map<String, double[]> serverCpuSeconds = new LinkedHashMap<>();
      final Map<String, long[]> bytesShuffled = new LinkedHashMap<>();
      final Map<String, String> notes = new LinkedHashMap<>();

      Results(List<SparkWorkloads.Workload> workloads) {
        for (SparkWorkloads.Workload w : workloads) {
          seconds.put(w.name(), new double[3]);
          signatures.put(w.name(), new String[3]);
          serverCpuSeconds.put(w.name(), new double[3]);
          bytesShuffled.put(w.name(), new long[3]);
        }
      }

      /** Server CPU seconds per GiB shuffled in one run of one workload. */
      double serverCpuPerGiB(String workload, int column) {
        long bytes = bytesShuffled.get(workload)[column];
        return bytes > 0 ? serverCpuSeconds.get(workload)[column] / (bytes / GIB) : Double.NaN;
      }
    }

    /**
     * The Sluice servers, in this JVM next to the Spark driver. Their CPU is that of their own
     * threads ({@link CpuMeter}; the driver's Sluice coordinator and clients run on threads of
     * other names, the executors in their own JVMs). The bytes shuffled are those pushed to them,
     * replica copies not counted.
     */
    private static final class Servers implements AutoCloseable {
      final List<ShuffleServer> servers = new ArrayList<>();
      private final List<MetricRegistry> registries = new ArrayList<>();
      private final CpuMeter cpu = new CpuMeter();
      private final Map<String, String> settings;

      /**
       * @param settings more server settings ({@code --server-conf})
       */
      Servers(Map<String, String> settings) {
        this.settings = settings;
      }

      void start(Path dir) throws IOException {
        Files.createDirectories(dir);
        Map<String, String> values = new LinkedHashMap<>();
        values.put("sluice.server.host", "127.0.0.1");
        values.put("sluice.server.port", "0");
        values.put("sluice.server.dirs", dir.toString());
        values.put("sluice.commit.fsync", "false");
        values.putAll(settings);
        SluiceConf conf = SluiceConf.of(values);
        MetricRegistry registry = new MetricRegistry();
        servers.add(
            new ShuffleServer(new ServerConf(conf), new NetworkConf(conf), registry, Clock.SYSTEM));
        registries.add(registry);
      }

      boolean cpuSupported() {
        return cpu.serverCpuSupported();
      }

      long cpuNanos() {
        return cpu.snapshot().serverNanos;
      }

      long bytesShuffled() {
        long bytes = 0;
        for (MetricRegistry registry : registries) {
          bytes += registry.meter(ServerMetrics.PREFIX + "bytesPushed").getCount();
          bytes -= registry.meter(ServerMetrics.PREFIX + "replicaBytesPushed").getCount();
        }
        return bytes;
      }

      @Override
      public void close() {
        for (ShuffleServer server : servers) {
          server.close();
        }
      }
    }

    private void report(List<SparkWorkloads.Workload> workloads, Results results, boolean both) {
      boolean replicationBoth = options.replication.equals("both");
      out.println();
      out.printf(
          Locale.ROOT,
          "%-14s %12s %12s %8s %14s %10s %10s %12s %8s  %s%n",
          "workload",
          "built-in s",
          "sluice s",
          "ratio",
          replicationBoth ? "factor-1 s" : "no-checksum s",
          replicationBoth ? "repl cost" : "cksum cost",
          "GiB",
          both ? "srv CPU s/GiB" : "srv s/GiB",
          "equal",
          "notes");
      List<String> json = new ArrayList<>();
      double totalOn = 0;
      double totalOff = 0;
      for (SparkWorkloads.Workload w : workloads) {
        double[] s = results.seconds.get(w.name());
        String[] sig = results.signatures.get(w.name());
        boolean equal =
            sig[BUILTIN].equals(sig[SLUICE]) && (!both || sig[BUILTIN].equals(sig[OTHER]));
        double ratio = s[SLUICE] / s[BUILTIN];
        double cost = both ? s[SLUICE] / s[OTHER] : Double.NaN;
        double cpuPerGiB = results.serverCpuPerGiB(w.name(), SLUICE);
        double otherCpuPerGiB = both ? results.serverCpuPerGiB(w.name(), OTHER) : Double.NaN;
        long bytes = results.bytesShuffled.get(w.name())[SLUICE];
        totalOn += s[SLUICE];
        totalOff += s[OTHER];
        String note = results.notes.getOrDefault(w.name(), "");
        out.printf(
            Locale.ROOT,
            "%-14s %12.2f %12.2f %8.3f %14s %10s %10.3f %12s %8s  %s%n",
            w.name(),
            s[BUILTIN],
            s[SLUICE],
            ratio,
            both ? String.format(Locale.ROOT, "%.2f", s[OTHER]) : "-",
            both ? String.format(Locale.ROOT, "%.3f", cost) : "-",
            bytes / GIB,
            String.format(Locale.ROOT, "%.2f", cpuPerGiB)
                + (both ? String.format(Locale.ROOT, " / %.2f", otherCpuPerGiB) : ""),
            equal,
            note);
        json.add(
            "{\"workload\":"
                + Json.str(w.name())
                + ",\"sluiceSeconds\":"
                + Json.num(s[SLUICE])
                + ",\"builtinSeconds\":"
                + Json.num(s[BUILTIN])
                + ",\"ratio\":"
                + Json.num(ratio)
                + ",\"shuffleBytes\":"
                + bytes
                + ",\"serverCpuSeconds\":"
                + Json.num(results.serverCpuSeconds.get(w.name())[SLUICE])
                + ",\"serverCpuSecondsPerGiB\":"
                + Json.num(cpuPerGiB)
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
          "GiB: bytes pushed to the Sluice server(s) in the timed run, replica copies not counted;"
              + " srv s/GiB: CPU seconds of the server threads (event loops, flushers, sorters...)"
              + " per GiB"
              + (both ? ", " + modes[SLUICE] + " / " + modes[OTHER] : "")
              + ".");
      for (String line : json) {
        out.println(line);
      }
      out.println(
          "{\"benchmark\":\"spark\",\"master\":\"local-cluster[2,1,"
              + megabytes(options.executorMemory)
              + "]\",\"cores\":"
              + Runtime.getRuntime().availableProcessors()
              + ",\"scale\":"
              + Json.num(options.scale)
              + ",\"checksums\":"
              + Json.str(options.checksums)
              + ",\"replication\":"
              + Json.str(options.replication)
              + (both ? ",\"" + ratioName() + "\":" + Json.num(totalOn / totalOff) : "")
              + ",\"workloads\":["
              + String.join(",", json)
              + "]}");
    }

    /**
     * Writes the SVG chart of job seconds per workload: built-in, Sluice, the second Sluice run.
     */
    private void chart(List<SparkWorkloads.Workload> workloads, Results results, boolean both) {
      List<String> series = new ArrayList<>(List.of(modes[BUILTIN], modes[SLUICE]));
      if (both) {
        series.add(modes[OTHER]);
      }
      BarChart chart =
          new BarChart(
              String.format(
                  Locale.ROOT,
                  "shuffle-bench spark: job seconds (scale %s, local-cluster[2,1,%d], %d cores)",
                  Json.num(options.scale),
                  megabytes(options.executorMemory),
                  Runtime.getRuntime().availableProcessors()),
              "job seconds",
              series);
      for (SparkWorkloads.Workload w : workloads) {
        double[] s = results.seconds.get(w.name());
        chart.group(w.name(), both ? s : new double[] {s[BUILTIN], s[SLUICE]});
      }
      Path file =
          options.chart.isEmpty()
              ? Path.of(options.dir, "spark-bench.svg")
              : Path.of(options.chart);
      try {
        chart.write(file);
        out.println("# chart: " + file.toAbsolutePath());
      } catch (IOException e) {
        out.println("# chart not written to " + file.toAbsolutePath() + ": " + e);
      }
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
