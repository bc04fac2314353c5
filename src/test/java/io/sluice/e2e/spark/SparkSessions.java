package io.sluice.e2e.spark;

import java.io.IOException;
import java.nio.file.FileVisitOption;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.apache.spark.sql.SparkSession;

/**
 * Spark sessions for the suites: the built-in sort shuffle in {@code local[2]} (the reference), and
 * Sluice in {@code local-cluster[2,1,1024]}: two executor JVMs started by Spark's launcher from the
 * test classpath (see the surefire environment in src/test/pom.xml), all on loopback. Only one
 * session runs at a time in a JVM.
 */
final class SparkSessions {
  static final String MANAGER = "org.apache.spark.shuffle.sluice.SluiceShuffleManager";
  static final String DATA_IO = "org.apache.spark.shuffle.sluice.SluiceShuffleDataIO";

  private SparkSessions() {}

  private static SparkSession.Builder common(String name, String master) {
    return SparkSession.builder()
        .appName(name)
        .master(master)
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", "8")
        .config("spark.default.parallelism", "4")
        .config("spark.sql.adaptive.enabled", "true")
        .config("spark.task.maxFailures", "4")
        .config("spark.locality.wait", "0s");
  }

  /** The built-in sort shuffle, in one JVM: what every job's result is compared with. */
  static SparkSession builtin(String name) {
    return common(name + "-builtin", "local[2,4]").getOrCreate();
  }

  /**
   * Sluice in local-cluster mode, stateless executors declared through the shuffle IO plugin.
   * Executors run Netty's leak detector on paranoid; {@link #executorLeaks} reads their logs.
   */
  static SparkSession sluice(String name, String servers, Map<String, String> extra) {
    SparkSession.Builder b =
        common(name, "local-cluster[2,1,1024]")
            .config("spark.shuffle.manager", MANAGER)
            .config("spark.shuffle.sort.io.plugin.class", DATA_IO)
            .config("spark.sluice.servers", servers)
            .config("spark.sluice.push.bufferSize", "8k")
            .config("spark.sluice.push.retryWait", "10ms")
            .config("spark.executor.memory", "1g")
            .config(
                "spark.executor.extraJavaOptions",
                // short-lived executors: C1 alone compiles what they run at a fraction of the CPU
                "-Dio.netty.leakDetection.level=paranoid -XX:+UseSerialGC -XX:TieredStopAtLevel=1");
    for (Map.Entry<String, String> e : extra.entrySet()) {
      b = b.config(e.getKey(), e.getValue());
    }
    return b.getOrCreate();
  }

  /**
   * A session as a notebook or a PySpark shell starts one: {@code local[2]}, Spark's own driver
   * host (the machine's canonical name, the host its one executor has) and locality wait (3s), AQE
   * on. With {@code sluiceServers} non-null it runs on Sluice, otherwise on the built-in shuffle.
   */
  static SparkSession shellLike(String name, String sluiceServers, Map<String, String> extra) {
    SparkSession.Builder b =
        SparkSession.builder()
            .appName(name)
            .master("local[2]")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.adaptive.enabled", "true");
    if (sluiceServers != null) {
      b =
          b.config("spark.shuffle.manager", MANAGER)
              .config("spark.shuffle.sort.io.plugin.class", DATA_IO)
              .config("spark.sluice.servers", sluiceServers);
    }
    for (Map.Entry<String, String> e : extra.entrySet()) {
      b = b.config(e.getKey(), e.getValue());
    }
    return b.getOrCreate();
  }

  /**
   * Lines of an application's executor logs where Netty reported a leaked buffer. Local-cluster
   * workers keep their work directories (one per application, with each executor's stderr) in
   * temporary directories that they delete when the session stops, so call this before stopping.
   *
   * @throws IllegalStateException when no executor log of the application is found
   */
  static List<String> executorLeaks(String appId) throws IOException {
    return executorLogLines(appId, line -> line.contains("LEAK:"));
  }

  /**
   * Lines of an application's executor logs (their stderr, where the test logging configuration
   * sends Sluice's INFO and everything's WARN) that match {@code filter}, each prefixed with its
   * log's path; see {@link #executorLeaks} for when to call it.
   *
   * @throws IllegalStateException when no executor log of the application is found
   */
  /** Whether {@code f} lies under a directory named {@code appId} at most three levels in. */
  private static boolean under(Path f, String appId, Path tmp) {
    Path rel = tmp.relativize(f);
    for (int i = 0; i < Math.min(3, rel.getNameCount() - 1); i++) {
      if (rel.getName(i).toString().equals(appId)) {
        return true;
      }
    }
    return false;
  }

  static List<String> executorLogLines(String appId, Predicate<String> filter) throws IOException {
    List<Path> logs = new ArrayList<>();
    Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
    // the temporary directory is shared with every other process on the machine: what vanishes
    // while it is walked (another JVM's native library, a test's directory) is passed over
    Files.walkFileTree(
        tmp,
        EnumSet.noneOf(FileVisitOption.class),
        6,
        new SimpleFileVisitor<Path>() {
          @Override
          public FileVisitResult visitFile(Path f, BasicFileAttributes a) {
            if (f.getFileName().toString().equals("stderr") && under(f, appId, tmp)) {
              logs.add(f);
            }
            return FileVisitResult.CONTINUE;
          }

          @Override
          public FileVisitResult visitFileFailed(Path f, IOException e) {
            return FileVisitResult.CONTINUE;
          }
        });
    if (logs.isEmpty()) {
      throw new IllegalStateException("no executor log of " + appId + " under " + tmp);
    }
    List<String> lines = new ArrayList<>();
    for (Path log : logs) {
      for (String line : Files.readAllLines(log)) {
        if (filter.test(line)) {
          lines.add(log + ": " + line);
        }
      }
    }
    return lines;
  }
}
