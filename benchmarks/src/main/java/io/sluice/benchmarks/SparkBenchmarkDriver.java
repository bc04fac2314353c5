package io.sluice.benchmarks;

import io.sluice.client.ChecksumBenchmarkSwitch;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.spark.sql.SparkSession;

/**
 * The Spark side of {@code shuffle-bench spark}, in a JVM of its own whose class path is one Spark
 * line's jars and the Sluice client's shaded jar for it: it runs the workloads on each shuffle it
 * is told to and reports to {@link SparkBenchmark}, which holds the Sluice servers, on its standard
 * output. Only Spark and the JDK are used here, so the same classes run on every Spark line.
 *
 * <p>Protocol, one line each: {@code @@begin WORKLOAD COLUMN} right before a timed run (the parent
 * reads the servers' CPU and bytes), {@code @@end WORKLOAD COLUMN SECONDS SIGNATURE NOTE INCIDENTS}
 * after it (signature, note and incidents Base64 of UTF-8; incidents are {@code key=value} lines:
 * failed tasks, fetch failures and stage reruns in the timed run, see {@link SparkJobIncidents},
 * and for a run with a restart what {@link SparkRestartTrigger} saw), and in a run with a restart
 * {@code @@restart WORKLOAD COLUMN} once the first task of the chosen type in the timed run ended
 * (the parent restarts a server). Other lines are progress for people.
 *
 * <p>Arguments, {@code key=value}: {@code workloads} (names, comma-separated), {@code scale},
 * {@code warmups}, {@code timedRuns}, {@code coldStart} (each timed run on fresh executors), {@code
 * smallBlocks} (MAPSxREDUCERS), {@code executorMemory}, {@code executorJavaOptions}, {@code scala}
 * (the line's Scala version) and one {@code run} per shuffle, in order: {@code COLUMN/builtin} or
 * {@code COLUMN/sluice/SERVERS/FACTOR/CHECKSUMS[/TASKTYPE]} (servers separated by {@code ,},
 * checksums on or off; a task type, {@code ShuffleMapTask} or {@code ResultTask}, asks for a server
 * restart in the timed run once the first task of that type ended).
 */
final class SparkBenchmarkDriver {
  static final String BEGIN = "@@begin";
  static final String END = "@@end";

  private final Map<String, String> settings;
  private final List<String> runs;
  private final PrintStream out;

  private SparkBenchmarkDriver(Map<String, String> settings, List<String> runs, PrintStream out) {
    this.settings = settings;
    this.runs = runs;
    this.out = out;
  }

  public static void main(String[] args) {
    Map<String, String> settings = new LinkedHashMap<>();
    List<String> runs = new ArrayList<>();
    for (String arg : args) {
      int eq = arg.indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException("arguments are key=value, not '" + arg + "'");
      }
      String key = arg.substring(0, eq);
      if (key.equals("run")) {
        runs.add(arg.substring(eq + 1));
      } else {
        settings.put(key, arg.substring(eq + 1));
      }
    }
    new SparkBenchmarkDriver(settings, runs, System.out).runAll();
  }

  /**
   * The workloads by name, at {@code scale}; small-blocks with {@code smallBlocksMaps} x {@code
   * smallBlocksReducers} (400 x 2000 by default).
   */
  static Map<String, SparkWorkloads.Workload> workloads(
      double scale, int smallBlocksMaps, int smallBlocksReducers) {
    Map<String, SparkWorkloads.Workload> all = new LinkedHashMap<>();
    all.put("repartition", SparkWorkloads.repartition(8, (int) (1_250_000 * scale), 16));
    all.put(
        "small-blocks",
        SparkWorkloads.smallBlocks(smallBlocksMaps, smallBlocksReducers, (int) (4_000 * scale)));
    all.put("skew-join", SparkWorkloads.skewJoin((long) (2_000_000 * scale), 200_000, 80));
    all.put("small-shuffles", SparkWorkloads.smallShuffles(30, 8, (int) (4_000 * scale), 200));
    all.put("local-reader", SparkWorkloads.localReader((long) (6_000_000 * scale), 8));
    return all;
  }

  private void runAll() {
    String[] shape = settings.get("smallBlocks").split("x");
    Map<String, SparkWorkloads.Workload> all =
        workloads(
            Double.parseDouble(settings.get("scale")),
            Integer.parseInt(shape[0]),
            Integer.parseInt(shape[1]));
    int warmups = Integer.parseInt(settings.get("warmups"));
    int timedRuns = Integer.parseInt(settings.getOrDefault("timedRuns", "1"));
    boolean coldStart = Boolean.parseBoolean(settings.get("coldStart"));
    List<SparkWorkloads.Workload> workloads = new ArrayList<>();
    for (String name : settings.get("workloads").split(",")) {
      workloads.add(all.get(name.trim()));
    }
    for (String run : runs) {
      String[] parts = run.split("/");
      int column = Integer.parseInt(parts[0]);
      boolean builtin = parts[1].equals("builtin");
      Map<String, String> conf = builtin ? Map.of() : sluiceConf(parts);
      // a sixth part asks for a server restart in each timed run: the task type that triggers it
      SparkRestartTrigger restart =
          parts.length > 5 ? new SparkRestartTrigger(parts[5], out) : null;
      String name = "shuffle-bench-" + (builtin ? "builtin" : "sluice");
      SparkJobIncidents incidents = new SparkJobIncidents();
      SparkSession spark = session(name, conf, incidents, restart);
      try {
        for (SparkWorkloads.Workload w : workloads) {
          for (int i = 1; i <= warmups; i++) {
            out.println("# " + w.name() + " (" + w.describe() + ") on " + run + ": warm-up " + i);
            w.run(spark);
          }
          for (int t = 1; t <= timedRuns; t++) {
            if (coldStart) {
              out.println("# " + w.name() + " on " + run + ": fresh executors for the timed run");
              spark.stop();
              spark = session(name, conf, incidents, restart);
              awaitExecutors(spark);
            }
            // the warm-ups' last events are counted before the timed run starts, not in it
            drainListenerBus(spark);
            incidents.reset();
            if (restart != null) {
              restart.arm(w.name(), column);
            }
            out.println(BEGIN + " " + w.name() + " " + column);
            long start = System.nanoTime();
            SparkWorkloads.Outcome outcome = w.run(spark);
            double seconds = (System.nanoTime() - start) / 1e9;
            drainListenerBus(spark);
            Map<String, String> counts = incidents.counts();
            if (restart != null) {
              counts.putAll(restart.report());
            }
            out.println(
                String.join(
                    " ",
                    END,
                    w.name(),
                    Integer.toString(column),
                    String.format(Locale.ROOT, "%.6f", seconds),
                    encode(outcome.signature),
                    encode(outcome.note),
                    encode(lines(counts))));
          }
        }
      } finally {
        spark.stop();
      }
    }
  }

  /** Waits until the driver's listeners have seen every event so far (at most 10 s). */
  private void drainListenerBus(SparkSession spark) {
    try {
      spark.sparkContext().listenerBus().waitUntilEmpty();
    } catch (Exception | LinkageError e) {
      // a line without it, or a bus that did not empty in time: the counts may miss a last event
      out.println("# listener bus not drained: " + e);
    }
  }

  /** {@code key=value} lines. */
  private static String lines(Map<String, String> values) {
    StringBuilder s = new StringBuilder();
    for (Map.Entry<String, String> e : values.entrySet()) {
      s.append(e.getKey()).append('=').append(e.getValue()).append('\n');
    }
    return s.toString();
  }

  /** The {@code key=value} lines of an end line's incidents (its seventh field), decoded. */
  static Map<String, String> incidents(String[] endLine) {
    Map<String, String> values = new LinkedHashMap<>();
    if (endLine.length > 6) {
      for (String line : decode(endLine[6]).split("\n")) {
        int eq = line.indexOf('=');
        if (eq > 0) {
          values.put(line.substring(0, eq), line.substring(eq + 1));
        }
      }
    }
    return values;
  }

  /** The Spark settings of a run {@code COLUMN/sluice/SERVERS/FACTOR/CHECKSUMS}. */
  private static Map<String, String> sluiceConf(String[] run) {
    Map<String, String> conf = new LinkedHashMap<>();
    conf.put("spark.shuffle.manager", "org.apache.spark.shuffle.sluice.SluiceShuffleManager");
    conf.put(
        "spark.shuffle.sort.io.plugin.class",
        "org.apache.spark.shuffle.sluice.SluiceShuffleDataIO");
    conf.put("spark.sluice.servers", run[2]);
    conf.put("spark.sluice.replication.factor", run[3]);
    conf.put("spark.sluice.fallback", "never");
    if (run[4].equals("off")) {
      // the executors push and read; the switch is a system property of their JVMs
      // (a constant: compiled in, so this JVM never loads Sluice's own classes)
      conf.put(
          "spark.executor.extraJavaOptions", "-D" + ChecksumBenchmarkSwitch.PROPERTY + "=true");
    }
    return conf;
  }

  /** A new session with {@code extra} settings and the listeners (the trigger may be null). */
  private SparkSession session(
      String name,
      Map<String, String> extra,
      SparkJobIncidents incidents,
      SparkRestartTrigger restart) {
    SparkSession spark = session(name, extra);
    spark.sparkContext().addSparkListener(incidents);
    if (restart != null) {
      spark.sparkContext().addSparkListener(restart);
    }
    return spark;
  }

  private SparkSession session(String name, Map<String, String> extra) {
    String classpath = System.getProperty("java.class.path");
    String memory = settings.get("executorMemory");
    SparkSession.Builder b =
        SparkSession.builder()
            .appName(name)
            .master("local-cluster[2,1," + megabytes(memory) + "]")
            .config("spark.executor.memory", memory)
            .config("spark.ui.enabled", "false")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.serializer", "org.apache.spark.serializer.KryoSerializer")
            .config("spark.sql.adaptive.enabled", "true")
            // Spark 4 ANSI mode would fail the workloads' wrapping checksums; 3.5 is not ANSI
            .config("spark.sql.ansi.enabled", "false")
            .config("spark.locality.wait", "0s")
            // executors are started by Spark's launcher from this classpath (no distribution)
            .config("spark.executorEnv.SPARK_DIST_CLASSPATH", classpath)
            .config("spark.executorEnv.SPARK_SCALA_VERSION", settings.get("scala"))
            .config("spark.executorEnv.SPARK_TESTING", "1");
    for (Map.Entry<String, String> e : extra.entrySet()) {
      b = b.config(e.getKey(), e.getValue());
    }
    String javaOptions =
        (extra.getOrDefault("spark.executor.extraJavaOptions", "")
                + " "
                + settings.getOrDefault("executorJavaOptions", ""))
            .trim();
    if (!javaOptions.isEmpty()) {
      b = b.config("spark.executor.extraJavaOptions", javaOptions);
    }
    return b.getOrCreate();
  }

  /** Waits until both executors of the local cluster registered, so none starts in a timed run. */
  private static void awaitExecutors(SparkSession spark) {
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
    // the driver is listed too
    while (spark.sparkContext().statusTracker().getExecutorInfos().length < 3) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("the local cluster's two executors did not start in 2 min");
      }
      try {
        Thread.sleep(50);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while waiting for executors", e);
      }
    }
  }

  static int megabytes(String size) {
    String s = size.trim().toLowerCase(Locale.ROOT);
    long n = Long.parseLong(s.replaceAll("[a-z]+$", ""));
    if (s.endsWith("g")) {
      return (int) (n * 1024);
    }
    return (int) n;
  }

  static String encode(String text) {
    return Base64.getEncoder().encodeToString(text.getBytes(StandardCharsets.UTF_8));
  }

  static String decode(String base64) {
    return new String(Base64.getDecoder().decode(base64), StandardCharsets.UTF_8);
  }
}
