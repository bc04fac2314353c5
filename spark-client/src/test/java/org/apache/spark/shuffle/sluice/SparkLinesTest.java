package org.apache.spark.shuffle.sluice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import java.util.Properties;
import org.junit.jupiter.api.Test;

class SparkLinesTest {
  private static Properties jar(String tag) {
    Properties p = new Properties();
    p.setProperty("version", "1.2.3");
    p.setProperty("jar", tag + "-shaded");
    return p;
  }

  @Test
  void thisBuildsJarNamesItsLineAndRunsInTheSparkItWasBuiltFor() {
    Properties built = SparkLines.builtFor();
    assertThat(built.getProperty("jar")).isEqualTo("spark3.5_2.12-shaded");
    assertThat(built.getProperty("version")).doesNotContain("${");
    assertThatCode(SparkLines::checkRunning).doesNotThrowAnyException();
  }

  @Test
  void aJarServesItsOwnLineAndScalaOnly() {
    assertThat(SparkLines.refusal(jar("spark3.4_2.13"), "3.4.4", "2.13.8")).isNull();
    assertThat(SparkLines.refusal(jar("spark3.3_2.12"), "3.3.0", "2.12.15")).isNull();
    assertThat(SparkLines.refusal(jar("spark4.0_2.13"), "4.0.4", "2.13.16")).isNull();
    // the 4.1+ jar: every later 4.x, not 4.0
    assertThat(SparkLines.refusal(jar("spark4.2_2.13"), "4.1.0", "2.13.16")).isNull();
    assertThat(SparkLines.refusal(jar("spark4.2_2.13"), "4.3.0-SNAPSHOT", "2.13.17")).isNull();
    assertThat(SparkLines.refusal(jar("spark4.2_2.13"), "4.0.1", "2.13.16"))
        .startsWith(
            "This Sluice client jar (sluice-spark-client-1.2.3-spark4.2_2.13-shaded.jar) is built"
                + " for Spark 4.1+ on Scala 2.13, and this is Spark 4.0.1 on Scala 2.13.16.")
        .endsWith("Install sluice-spark-client-1.2.3-spark4.0_2.13-shaded.jar instead.");
  }

  @Test
  void anotherScalaVersionNamesTheJarOfThatScala() {
    assertThat(SparkLines.refusal(jar("spark3.5_2.12"), "3.5.9", "2.13.8"))
        .contains("built for Spark 3.5 on Scala 2.12")
        .endsWith("Install sluice-spark-client-1.2.3-spark3.5_2.13-shaded.jar instead.");
  }

  @Test
  void aSparkWithNoJarIsToldSoAndHowToRunWithout() {
    assertThat(SparkLines.refusal(jar("spark3.3_2.12"), "3.2.4", "2.12.15"))
        .contains("Sluice has no client jar for Spark 3.2.4 on Scala 2.12.15")
        .contains("3.3 (Scala 2.12), 3.4 (Scala 2.12), 3.4 (Scala 2.13)")
        .contains("4.1+ (Scala 2.13)")
        .endsWith("Leave spark.shuffle.manager unset to use Spark's own shuffle.");
    assertThat(SparkLines.refusal(jar("spark3.3_2.12"), "3.3.2", "2.13.8"))
        .contains("Sluice has no client jar for Spark 3.3.2 on Scala 2.13.8");
    assertThat(SparkLines.refusal(jar("spark3.5_2.12"), "unknown", "2.12.18"))
        .contains("no client jar for Spark unknown");
  }

  @Test
  void versionsAreReadAsMajorAndMinor() {
    assertThat(SparkLines.majorMinor("3.4.4")).containsExactly(3, 4);
    assertThat(SparkLines.majorMinor("4.1.0-SNAPSHOT")).containsExactly(4, 1);
    assertThat(SparkLines.majorMinor("4")).isNull();
    assertThat(SparkLines.majorMinor("x.y")).isNull();
  }
}
