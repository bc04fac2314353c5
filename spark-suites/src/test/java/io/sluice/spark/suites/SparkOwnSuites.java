package io.sluice.spark.suites;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.spark.sql.connector.WriteDistributionAndOrderingSuite;
import org.apache.spark.sql.execution.CoalesceShufflePartitionsSuite;
import org.apache.spark.sql.execution.adaptive.AdaptiveQueryExecSuite;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;
import org.opentest4j.AssertionFailedError;
import org.scalatest.Suite;

/**
 * Spark's own suites, from the test-jars Spark publishes (3.5's here, 3.4's in {@code
 * spark3.4_2.12}, which runs the AQE ones), with Sluice as the shuffle manager: {@code
 * AdaptiveQueryExecSuite}, {@code CoalesceShufflePartitionsSuite}, {@code ShuffleSuite} (through
 * {@link SluiceShuffleSuite}) and {@code WriteDistributionAndOrderingSuite} (AQE on DataSource V2
 * writes that require a distribution and ordering). Two Sluice servers run in this JVM on ephemeral
 * loopback ports; {@code spark.shuffle.manager} and {@code spark.sluice.servers} are set as system
 * properties, which every {@code SparkConf} the SQL suites create loads (and local-cluster
 * executors get from their driver).
 *
 * <p>Every test of a suite becomes one JUnit test here, so the build counts them. A test listed in
 * {@code spark-suites-exclusions.txt} does not run and is reported skipped with its reason.
 */
class SparkOwnSuites {
  private static final Map<String, String> SETTINGS = new LinkedHashMap<>();
  private static LocalSluiceServers servers;
  private static Exclusions exclusions;

  @TempDir static Path dirs;

  /** The Spark settings that put every SparkContext of the suites on Sluice. */
  static synchronized Map<String, String> sparkSettings() {
    if (SETTINGS.isEmpty()) {
      throw new IllegalStateException("the Sluice servers are not started");
    }
    return Map.copyOf(SETTINGS);
  }

  @BeforeAll
  static void startServers() throws IOException {
    exclusions = Exclusions.read(Path.of(System.getProperty("sluice.suites.exclusions")));
    servers = new LocalSluiceServers(dirs, 2);
    synchronized (SparkOwnSuites.class) {
      SETTINGS.putAll(servers.sparkSettings());
    }
    SETTINGS.forEach(System::setProperty);
  }

  @AfterAll
  static void stopServers() {
    synchronized (SparkOwnSuites.class) {
      SETTINGS.keySet().forEach(System::clearProperty);
      SETTINGS.clear();
    }
    servers.close();
  }

  @TestFactory
  @DisplayName("AdaptiveQueryExecSuite")
  Stream<DynamicTest> adaptiveQueryExecSuite() {
    assumeSelected("AdaptiveQueryExecSuite");
    return run("AdaptiveQueryExecSuite", new AdaptiveQueryExecSuite());
  }

  @TestFactory
  @DisplayName("CoalesceShufflePartitionsSuite")
  Stream<DynamicTest> coalesceShufflePartitionsSuite() {
    assumeSelected("CoalesceShufflePartitionsSuite");
    return run("CoalesceShufflePartitionsSuite", new CoalesceShufflePartitionsSuite());
  }

  @TestFactory
  @DisplayName("ShuffleSuite")
  Stream<DynamicTest> shuffleSuite() {
    assumeSelected("ShuffleSuite");
    return run("ShuffleSuite", new SluiceShuffleSuite());
  }

  @TestFactory
  @DisplayName("WriteDistributionAndOrderingSuite")
  Stream<DynamicTest> writeDistributionAndOrderingSuite() {
    assumeSelected("WriteDistributionAndOrderingSuite");
    return run("WriteDistributionAndOrderingSuite", new WriteDistributionAndOrderingSuite());
  }

  /**
   * Skips a suite that {@code sluice.suites.run} (a comma-separated list of suite names, set by the
   * module; every suite when unset) does not name: an older Spark line runs some of them only.
   */
  private static void assumeSelected(String suite) {
    String selected = System.getProperty("sluice.suites.run", "").strip();
    Assumptions.assumeTrue(
        selected.isEmpty() || Arrays.asList(selected.split("\\s*,\\s*")).contains(suite),
        () -> suite + " is not run for this Spark line (sluice.suites.run=" + selected + ")");
  }

  /** Runs the suite, then replays each test's outcome as a JUnit test. */
  private static Stream<DynamicTest> run(String name, Suite suite) {
    Map<String, String> excluded = exclusions.of(name);
    List<ScalaTestRun.Result> results = ScalaTestRun.run(suite, excluded.keySet());
    if (results.isEmpty()) {
      return Stream.of(DynamicTest.dynamicTest(name, () -> fail(name + " reported no test")));
    }
    return results.stream()
        .map(r -> DynamicTest.dynamicTest(r.test(), () -> replay(name, r, excluded)));
  }

  private static void replay(String suite, ScalaTestRun.Result r, Map<String, String> excluded) {
    switch (r.outcome()) {
      case SUCCEEDED:
        return;
      case IGNORED:
        String reason = excluded.get(r.test());
        Assumptions.abort(
            reason != null
                ? "excluded on Sluice: " + reason
                : "ignored in Spark's own " + suite + " source");
        return;
      case CANCELED:
        Assumptions.abort("canceled: " + r.message());
        return;
      case FAILED:
      default:
        throw new AssertionFailedError(suite + " :: " + r.test() + ": " + r.message(), r.cause());
    }
  }
}
