package io.sluice.benchmarks;

import com.beust.jcommander.Parameter;
import com.beust.jcommander.ParameterException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/** Command-line options of {@code shuffle-bench spark}, and their checks. */
final class SparkBenchmarkOptions {

  @Parameter(
      names = "--scale",
      description = "Multiplies every workload's data size (1 = the default sizes)")
  double scale = 1.0;

  @Parameter(
      names = "--warmups",
      description =
          "Untimed runs of each workload before its timed run, on the same executors and servers"
              + " (both shuffles alike): the first runs of a fresh JVM spend seconds of CPU in"
              + " the JIT compiler, which a long-lived server and executors do not")
  int warmups = 2;

  @Parameter(
      names = "--timed-runs",
      description =
          "Timed runs of each workload after its warm-ups, on each shuffle; the report gives the"
              + " run of median job time (its seconds, server CPU and bytes) and every run's"
              + " seconds, so one slow run on a busy machine does not make the ratio")
  int timedRuns = 1;

  @Parameter(
      names = "--small-blocks-shape",
      description =
          "Maps x reducers of the small-blocks workload, e.g. 100x400: its M x R blocks are what"
              + " the built-in shuffle reads one by one, so on --disk hdd a smaller shape finishes"
              + " at a few hundred IOPS where the default (800,000 blocks) takes over an hour")
  String smallBlocksShape = "400x2000";

  int smallBlocksMaps;
  int smallBlocksReducers;

  @Parameter(
      names = "--cold-start",
      description =
          "Time each workload on fresh executors: the warm-ups run in an application of their"
              + " own, stopped before the timed run's application starts, so the timed run pays"
              + " a first job's cost (class loading, JIT) on the executors while the Sluice"
              + " servers stay as warm as the warm-ups left them (both shuffles alike)")
  boolean coldStart = false;

  @Parameter(
      names = "--workloads",
      description =
          "Comma-separated workloads to run: repartition, small-blocks, skew-join,"
              + " local-reader, small-shuffles")
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
      names = "--hdfs-tier",
      description =
          "Start a one-DataNode HDFS (MiniDFSCluster) in this JVM and put every Sluice split in"
              + " the servers' distributed tier on it (sluice.storage.policy=local,hdfs,"
              + " sluice.storage.hdfs.minSplitSize=0); executors read the splits from HDFS."
              + " Compare with a run without it")
  boolean hdfsTier;

  @Parameter(
      names = "--server-conf",
      splitter = WholeValue.class,
      description =
          "A setting of the Sluice servers, key=value (repeat for more; a value may hold"
              + " commas), e.g. sluice.storage.policy=memory,local")
  List<String> serverConf = new ArrayList<>();

  @Parameter(
      names = "--spark-line",
      description =
          "The Spark line the jobs run on, with its own jars and the Sluice client's shaded jar"
              + " for it (from benchmarks/spark<line>_<scala>/target/lib): 3.3, 3.4 or 3.5 (Scala"
              + " 2.12), 4.0 or 4.2 (Scala 2.13)")
  String sparkLine = "3.5";

  @Parameter(names = "--executor-memory", description = "Heap of each of the two executors")
  String executorMemory = "2g";

  @Parameter(
      names = "--executor-java-options",
      description =
          "More JVM options for every executor of every run, e.g. to profile them:"
              + " -XX:StartFlightRecording=filename=/tmp/executor.jfr,settings=profile")
  String executorJavaOptions = "";

  @Parameter(
      names = "--disk",
      description =
          "as-is: the disk under --dir as it is; hdd: emulate a disk that seeks on that device"
              + " for the built-in executors and the Sluice servers alike (an IOPS and bandwidth"
              + " limit and a page-cache cap through cgroup v1; needs root). The report adds each"
              + " side's disk reads and writes")
  String disk = "as-is";

  @Parameter(names = "--disk-iops", description = "--disk hdd: I/O operations per second")
  int diskIops = 200;

  @Parameter(names = "--disk-mbps", description = "--disk hdd: megabytes (10^6) per second")
  int diskMbps = 150;

  @Parameter(
      names = "--disk-drop-cache-ms",
      description =
          "--disk hdd: how often (milliseconds) the file system under --dir is synced and the"
              + " page cache dropped, so that reads reach the disk")
  int diskDropCacheMillis = 500;

  @Parameter(
      names = "--dir",
      description =
          "Data directory of the Sluice servers and of the built-in shuffle's files"
              + " (spark-local in it)")
  String dir = System.getProperty("java.io.tmpdir") + "/sluice-bench-spark";

  @Parameter(
      names = ChartOption.NAME,
      validateWith = ChartOption.class,
      description =
          "Where to write the SVG chart of job seconds per workload (default: spark-bench.svg"
              + " in --dir); its directory must exist")
  String chart = "";

  @Parameter(
      names = {"-h", "--help"},
      help = true,
      description = "Prints this help")
  boolean help;

  /**
   * Normalizes the options and says what is wrong with them, before anything starts; null when
   * nothing is.
   */
  String problem() {
    checksums = checksums.trim().toLowerCase(Locale.ROOT);
    if (!List.of("on", "off", "both").contains(checksums)) {
      return "--checksums must be on, off or both, not '" + checksums + "'";
    }
    replication = replication.trim().toLowerCase(Locale.ROOT);
    if (!List.of("1", "2", "both").contains(replication)) {
      return "--replication must be 1, 2 or both, not '" + replication + "'";
    }
    if (replication.equals("both") && checksums.equals("both")) {
      return "--replication both and --checksums both each add a run; use one at a time";
    }
    if (warmups < 0 || warmups > 10) {
      return "--warmups must be between 0 and 10, not " + warmups;
    }
    if (timedRuns < 1 || timedRuns > 20) {
      return "--timed-runs must be between 1 and 20, not " + timedRuns;
    }
    disk = disk.trim().toLowerCase(Locale.ROOT);
    if (!List.of("as-is", "hdd").contains(disk)) {
      return "--disk must be as-is or hdd, not '" + disk + "'";
    }
    if (diskIops < 1 || diskMbps < 1 || diskDropCacheMillis < 1) {
      return "--disk-iops, --disk-mbps and --disk-drop-cache-ms must be positive";
    }
    java.util.regex.Matcher shape =
        java.util.regex.Pattern.compile("(\\d{1,6})x(\\d{1,6})").matcher(smallBlocksShape.trim());
    if (!shape.matches()
        || Integer.parseInt(shape.group(1)) < 1
        || Integer.parseInt(shape.group(2)) < 1) {
      return "--small-blocks-shape must be MAPSxREDUCERS with positive numbers (e.g. 100x400), not '"
          + smallBlocksShape
          + "'";
    }
    smallBlocksMaps = Integer.parseInt(shape.group(1));
    smallBlocksReducers = Integer.parseInt(shape.group(2));
    sparkLine = sparkLine.trim();
    if (!SparkBenchmark.SparkLine.KNOWN.containsKey(sparkLine)) {
      return "--spark-line must be one of "
          + SparkBenchmark.SparkLine.KNOWN.keySet()
          + ", not '"
          + sparkLine
          + "'";
    }
    try {
      SparkBenchmark.SparkBenchmarkRun.serverSettings(serverConf);
      Set<String> known = SparkBenchmarkDriver.workloads(1, 1, 1).keySet();
      for (String name : workloads.split(",")) {
        if (!known.contains(name.trim())) {
          return "unknown workload '" + name.trim() + "'; known: " + known;
        }
      }
    } catch (IllegalArgumentException | ParameterException e) {
      return e.getMessage();
    }
    return null;
  }

  /** Keeps a repeated option's value whole (JCommander splits list values at commas). */
  public static final class WholeValue
      implements com.beust.jcommander.converters.IParameterSplitter {
    @Override
    public List<String> split(String value) {
      return List.of(value);
    }
  }
}
