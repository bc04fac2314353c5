package org.apache.spark.shuffle.sluice;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

/**
 * The Spark lines Sluice has a client jar for, one jar each, and the check that the Spark a jar
 * runs in is the line it was built for. Spark's internal APIs (the shuffle manager's, the map
 * status, the sorter) change between lines and Scala versions, so a jar of another line fails later
 * with linkage errors nobody can act on; this names the jar to install instead. The build writes
 * the jar's own line into {@code spark-line.properties} ({@code spark-client/src/line}).
 */
final class SparkLines {
  /** A client jar: the Spark line it serves, its Scala version, the tag in its name. */
  private static final class Jar {
    final int major;
    final int minor;
    final boolean andLater; // every later minor of the same major too
    final String scala;
    final String tag;

    Jar(int major, int minor, boolean andLater, String scala, String tag) {
      this.major = major;
      this.minor = minor;
      this.andLater = andLater;
      this.scala = scala;
      this.tag = tag;
    }

    boolean serves(int[] spark, String scalaVersion) {
      boolean line = spark[0] == major && (andLater ? spark[1] >= minor : spark[1] == minor);
      return line && scalaVersion.equals(scala);
    }

    String line() {
      return major + "." + minor + (andLater ? "+" : "");
    }
  }

  /** Every jar the release has. */
  private static final Jar[] JARS = {
    new Jar(3, 3, false, "2.12", "spark3.3_2.12"),
    new Jar(3, 4, false, "2.12", "spark3.4_2.12"),
    new Jar(3, 4, false, "2.13", "spark3.4_2.13"),
    new Jar(3, 5, false, "2.12", "spark3.5_2.12"),
    new Jar(3, 5, false, "2.13", "spark3.5_2.13"),
    new Jar(4, 0, false, "2.13", "spark4.0_2.13"),
    new Jar(4, 1, true, "2.13", "spark4.2_2.13"),
  };

  private SparkLines() {}

  /**
   * Refuses a Spark this jar is not built for.
   *
   * @throws IllegalStateException naming the jar to install, or saying there is none
   */
  static void checkRunning() {
    String refusal =
        refusal(
            builtFor(),
            org.apache.spark.package$.MODULE$.SPARK_VERSION(),
            scala.util.Properties$.MODULE$.versionNumberString());
    if (refusal != null) {
      throw new IllegalStateException(refusal);
    }
  }

  /**
   * Why a jar built as {@code built} (its {@code spark-line.properties}) cannot run in Spark {@code
   * sparkVersion} on Scala {@code scalaVersion} (full versions, as Spark and Scala report them), or
   * null when it can.
   */
  static String refusal(Properties built, String sparkVersion, String scalaVersion) {
    String version = built.getProperty("version");
    String tag = built.getProperty("jar", "").replace("-shaded", "");
    Jar self = null;
    for (Jar j : JARS) {
      if (j.tag.equals(tag)) {
        self = j;
      }
    }
    if (self == null) {
      throw new IllegalStateException("This Sluice client jar names an unknown Spark line: " + tag);
    }
    int[] spark = majorMinor(sparkVersion);
    String scalaBinary = scalaBinary(scalaVersion);
    if (spark != null && self.serves(spark, scalaBinary)) {
      return null;
    }
    String running = "Spark " + sparkVersion + " on Scala " + scalaVersion;
    String what =
        "This Sluice client jar ("
            + jarName(version, self)
            + ") is built for Spark "
            + self.line()
            + " on Scala "
            + self.scala
            + ", and this is "
            + running
            + ". ";
    for (Jar j : JARS) {
      if (spark != null && j.serves(spark, scalaBinary)) {
        return what + "Install " + jarName(version, j) + " instead.";
      }
    }
    List<String> lines = new ArrayList<>();
    for (Jar j : JARS) {
      lines.add(j.line() + " (Scala " + j.scala + ")");
    }
    return what
        + "Sluice has no client jar for "
        + running
        + "; its jars serve Spark "
        + String.join(", ", lines)
        + ". Leave spark.shuffle.manager unset to use Spark's own shuffle.";
  }

  /** The jar's name in the release's {@code jars/}. */
  private static String jarName(String version, Jar j) {
    return "sluice-spark-client-" + version + "-" + j.tag + "-shaded.jar";
  }

  /** {major, minor} of a version such as {@code 3.4.4} or {@code 4.1.0-SNAPSHOT}; null if not. */
  static int[] majorMinor(String version) {
    String[] parts = version.split("[.-]");
    try {
      return parts.length < 2
          ? null
          : new int[] {Integer.parseInt(parts[0]), Integer.parseInt(parts[1])};
    } catch (NumberFormatException e) {
      return null;
    }
  }

  /** {@code 2.12} of {@code 2.12.18}. */
  private static String scalaBinary(String scalaVersion) {
    int[] v = majorMinor(scalaVersion);
    return v == null ? scalaVersion : v[0] + "." + v[1];
  }

  /** This jar's {@code spark-line.properties}. */
  static Properties builtFor() {
    Properties p = new Properties();
    try (InputStream in = SparkLines.class.getResourceAsStream("spark-line.properties")) {
      if (in == null) {
        throw new IllegalStateException(
            "This Sluice client jar lacks org/apache/spark/shuffle/sluice/spark-line.properties:"
                + " it was not built by the project's build");
      }
      p.load(in);
    } catch (IOException e) {
      throw new IllegalStateException("Cannot read this Sluice client jar's Spark line", e);
    }
    return p;
  }
}
