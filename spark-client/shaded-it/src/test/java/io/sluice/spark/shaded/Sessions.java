package io.sluice.spark.shaded;

import java.io.File;
import java.util.Arrays;
import java.util.Map;
import org.apache.spark.sql.SparkSession;

/**
 * Spark sessions of the shaded-jar suites: Sluice in {@code local-cluster[2,1,1024]} (two executor
 * JVMs started from {@code SPARK_DIST_CLASSPATH}, see the surefire settings in pom.xml), and the
 * built-in sort shuffle in {@code local[2]}, the reference. One session at a time.
 */
final class Sessions {
  static final String MANAGER = "org.apache.spark.shuffle.sluice.SluiceShuffleManager";

  private Sessions() {}

  /** The line under test, as in the client jar's name: {@code spark3.5_2.12-shaded}. */
  static String line() {
    return System.getProperty("sluice.sparkLine");
  }

  /** The client jar: the one class path entry named after the line. */
  static File clientJar() {
    return Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
        .filter(p -> p.endsWith("-" + line() + ".jar"))
        .map(File::new)
        .findFirst()
        .orElseThrow(() -> new AssertionError("no *-" + line() + ".jar on the class path"));
  }

  private static SparkSession.Builder common(String name, String master) {
    return SparkSession.builder()
        .appName(name)
        .master(master)
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", "8")
        .config("spark.sql.adaptive.enabled", "true")
        .config("spark.locality.wait", "0s");
  }

  /**
   * Sluice, as its README tells a Spark user to set it up, with no fallback: a shuffle Sluice does
   * not take fails. Executors get the client jar on their class path (the 3.5 lines) or through
   * {@code spark.jars} alone (Spark 4).
   */
  static SparkSession sluice(String name, String servers, Map<String, String> extra) {
    SparkSession.Builder b =
        common(name, "local-cluster[2,1,1024]")
            .config("spark.shuffle.manager", MANAGER)
            .config(
                "spark.shuffle.sort.io.plugin.class",
                "org.apache.spark.shuffle.sluice.SluiceShuffleDataIO")
            .config("spark.sluice.servers", servers)
            .config("spark.sluice.fallback", "never")
            .config("spark.executor.memory", "1g")
            // short-lived executors: C1 alone compiles what they run at a fraction of the CPU
            .config("spark.executor.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC");
    if (!Boolean.getBoolean("sluice.clientJarOnExecutorClasspath")) {
      b = b.config("spark.jars", clientJar().getAbsolutePath());
    }
    for (Map.Entry<String, String> e : extra.entrySet()) {
      b = b.config(e.getKey(), e.getValue());
    }
    return b.getOrCreate();
  }

  /** The built-in sort shuffle in this JVM. */
  static SparkSession builtin(String name, Map<String, String> extra) {
    SparkSession.Builder b = common(name + "-builtin", "local[2]");
    for (Map.Entry<String, String> e : extra.entrySet()) {
      b = b.config(e.getKey(), e.getValue());
    }
    return b.getOrCreate();
  }
}
