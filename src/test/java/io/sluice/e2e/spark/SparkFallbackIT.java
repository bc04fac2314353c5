package io.sluice.e2e.spark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.server.ShuffleServer;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code spark.sluice.fallback}: under {@code auto} a shuffle that no Sluice server takes runs on
 * Spark's built-in sort shuffle with the same result, and so does a shuffle past {@code
 * spark.sluice.fallback.maxPartitions} while smaller ones still go through Sluice; under {@code
 * never} the job fails saying why; under {@code always} nothing reaches the servers.
 */
class SparkFallbackIT {
  @TempDir Path tmp;

  @Test
  void withNoServerReachableTheShuffleRunsBuiltInUnderAutoAndFailsUnderNever() throws Exception {
    String nobody = "127.0.0.1:" + freePort();
    List<Row> expected = builtinCounts();

    SparkSession auto = SparkSessions.sluice("fallback-auto", nobody, Map.of());
    try {
      assertThat(counts(auto)).isEqualTo(expected);
    } finally {
      auto.stop();
    }

    SparkSession never =
        SparkSessions.sluice("fallback-never", nobody, Map.of("spark.sluice.fallback", "never"));
    try {
      assertThatThrownBy(() -> counts(never))
          .hasStackTraceContaining("with Sluice (spark.sluice.fallback=never)")
          .hasStackTraceContaining(nobody);
    } finally {
      never.stop();
    }
  }

  @Test
  void shufflesPastTheLimitRunBuiltInAndTheOthersThroughSluice() throws Exception {
    List<Row> expected = builtinCounts();
    try (SluiceServers servers = new SluiceServers(tmp, 2)) {
      SparkSession spark =
          SparkSessions.sluice(
              "fallback-limit", servers.list(), Map.of("spark.sluice.fallback.maxPartitions", "4"));
      try {
        spark.conf().set("spark.sql.adaptive.enabled", "false");
        spark.conf().set("spark.sql.shuffle.partitions", "8");
        assertThat(counts(spark)).as("8 partitions: built-in").isEqualTo(expected);
        assertThat(bytesPushed(servers)).isZero();

        spark.conf().set("spark.sql.shuffle.partitions", "4");
        assertThat(counts(spark)).as("4 partitions: Sluice").isEqualTo(expected);
        assertThat(bytesPushed(servers)).isPositive();
      } finally {
        spark.stop();
      }
    }
  }

  @Test
  void alwaysLeavesTheServersUnused() throws Exception {
    List<Row> expected = builtinCounts();
    try (SluiceServers servers = new SluiceServers(tmp, 1)) {
      SparkSession spark =
          SparkSessions.sluice(
              "fallback-always", servers.list(), Map.of("spark.sluice.fallback", "always"));
      try {
        assertThat(counts(spark)).isEqualTo(expected);
      } finally {
        spark.stop();
      }
      assertThat(bytesPushed(servers)).isZero();
    }
  }

  @Test
  void aPolicyThatDoesNotExistIsRefusedWithTheValuesItTakes() {
    assertThatThrownBy(
            () ->
                SparkSessions.sluice(
                    "fallback-typo", "127.0.0.1:1", Map.of("spark.sluice.fallback", "sometimes")))
        .hasStackTraceContaining("spark.sluice.fallback=sometimes is not a fallback policy")
        .hasStackTraceContaining("auto, never or always");
    SparkSession.clearActiveSession();
    SparkSession.clearDefaultSession();
  }

  /** Rows per key of a two-stage job, in key order. */
  private static List<Row> counts(SparkSession spark) {
    return spark
        .range(0, 20_000, 1, 4)
        .selectExpr("id % 13 AS k")
        .groupBy("k")
        .count()
        .orderBy("k")
        .collectAsList();
  }

  private static List<Row> builtinCounts() {
    SparkSession spark = SparkSessions.builtin("fallback-reference");
    try {
      return counts(spark);
    } finally {
      spark.stop();
    }
  }

  private static long bytesPushed(SluiceServers servers) {
    long n = 0;
    for (ShuffleServer s : servers.all()) {
      n += s.metrics().bytesPushed().getCount();
    }
    return n;
  }

  private static int freePort() throws Exception {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}
