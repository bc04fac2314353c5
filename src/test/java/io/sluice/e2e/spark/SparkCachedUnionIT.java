package io.sluice.e2e.spark;

import static org.apache.spark.sql.functions.col;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 20: with {@code spark.sql.optimizer.canChangeCachedPlanOutputPartitioning=true} (Spark's
 * SPARK-42101 shape: a shuffle read and a table cache stage in one union), {@code
 * Seq(2).toDF("c").repartition($"c").union(Seq(1).toDF("c").cache())} returned at once on the
 * built-in shuffle and never on Sluice in {@code local[2]}. Every run is bounded: a hang fails the
 * test with the stacks of the waiting threads.
 */
class SparkCachedUnionIT {
  private static final Duration BOUND = Duration.ofSeconds(60);

  @TempDir Path tmp;

  static Dataset<Row> cachedUnion(SparkSession spark) {
    spark.conf().set("spark.sql.optimizer.canChangeCachedPlanOutputPartitioning", "true");
    Dataset<Row> cached = spark.createDataset(List.of(1), Encoders.INT()).toDF("c").cache();
    return spark
        .createDataset(List.of(2), Encoders.INT())
        .toDF("c")
        .repartition(col("c"))
        .union(cached);
  }

  @Test
  void builtinReturnsBothRows() throws Exception {
    SparkSession builtin = SparkSessions.shellLike("SparkCachedUnionIT-builtin", null, Map.of());
    try {
      assertThat(BoundedQuery.collect(builtin, cachedUnion(builtin), BOUND))
          .containsExactly("[1]", "[2]");
    } finally {
      builtin.stop();
    }
  }

  @Test
  void sluiceInLocalModeReturnsBothRows() throws Exception {
    try (SluiceServers servers = new SluiceServers(tmp, 1)) {
      SparkSession spark =
          SparkSessions.shellLike("SparkCachedUnionIT-local", servers.list(), Map.of());
      try {
        assertThat(BoundedQuery.collect(spark, cachedUnion(spark), BOUND))
            .containsExactly("[1]", "[2]");
      } finally {
        spark.stop();
      }
    }
  }

  @Test
  void sluiceInLocalClusterModeReturnsBothRows() throws Exception {
    try (SluiceServers servers = new SluiceServers(tmp, 2)) {
      SparkSession spark =
          SparkSessions.sluice(
              "SparkCachedUnionIT-cluster",
              servers.list(),
              Map.of("spark.locality.wait", "3s")); // Spark's default, as in local mode here
      try {
        assertThat(BoundedQuery.collect(spark, cachedUnion(spark), BOUND))
            .containsExactly("[1]", "[2]");
      } finally {
        spark.stop();
      }
    }
  }
}
