package io.sluice.e2e.spark;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shape of Spark's own SPARK-48037 test (AdaptiveQueryExecSuite) on Sluice: 16,777,217 shuffle
 * partitions, one more than Spark's serialized-mode maximum, over a tiny dataset, AQE on, in
 * local-cluster mode. With one location per partition the coordinator's answer to every map task
 * was a 400 MB frame and the job failed; the locations are a placement rule now, and the reduce
 * side reads the committed splits of all 16,777,217 partitions (AQE coalesces them into one task)
 * in pages. Results are checked against values computed here, not against a built-in session: the
 * built-in sort shuffle would write a 128 MB index file per map.
 */
class SparkManyPartitionsIT {
  static final String PARTITIONS = "16777217";

  @TempDir static Path tmp;

  private static SluiceServers servers;
  private static SparkSession spark;

  @BeforeAll
  static void start() throws Exception {
    servers = new SluiceServers(tmp.resolve("sluice"), 2);
    // its executors work on sixteen million partitions: C2's compiles pay off here, unlike in the
    // short jobs the other suites run
    spark =
        SparkSessions.sluice(
            "SparkManyPartitionsIT",
            servers.list(),
            Map.of(
                "spark.executor.extraJavaOptions",
                "-Dio.netty.leakDetection.level=paranoid -XX:+UseSerialGC"));
    spark.conf().set("spark.sql.adaptive.enabled", "true");
    spark.conf().set("spark.sql.shuffle.partitions", PARTITIONS);
  }

  @AfterAll
  static void stop() {
    try {
      if (spark != null) {
        spark.stop();
      }
    } finally {
      if (servers != null) {
        servers.close();
      }
    }
  }

  /** The final adaptive plan of a query that ran; it must have read a shuffle. */
  private static String shuffledPlan(Dataset<Row> df) {
    String plan = df.queryExecution().executedPlan().toString();
    assertThat(plan).contains("ShuffleQueryStage");
    return plan;
  }

  @Test
  void spark48037GroupByWithLimitOverSixteenMillionPartitions() {
    // as Spark's test: CREATE TABLE t3 USING PARQUET AS SELECT id FROM range(2), then the query
    String table = tmp.resolve("t3").toString();
    spark.range(2).write().parquet(table);
    spark.read().parquet(table).createOrReplaceTempView("t3");
    Dataset<Row> first = spark.sql("SELECT id, count(*) FROM t3 GROUP BY id LIMIT 1");
    List<Row> rows = first.collectAsList();
    assertThat(rows).hasSize(1);
    assertThat(rows.get(0).getLong(0)).isIn(0L, 1L);
    assertThat(rows.get(0).getLong(1)).isEqualTo(1L);
    assertThat(shuffledPlan(first)).contains("CollectLimit");
  }

  @Test
  void groupByOverSixteenMillionPartitions() {
    Dataset<Row> totals =
        spark
            .range(0, 1_000, 1, 2)
            .selectExpr("id % 7 AS k", "id AS v")
            .groupBy("k")
            .agg(functions.count("*").as("n"), functions.sum("v").as("total"));
    List<String> expected = new ArrayList<>();
    for (long k = 0; k < 7; k++) {
      long n = 0;
      long total = 0;
      for (long v = k; v < 1_000; v += 7) {
        n++;
        total += v;
      }
      expected.add("[" + k + "," + n + "," + total + "]");
    }
    assertThat(Jobs.sorted(Jobs.strings(totals.collectAsList()))).isEqualTo(Jobs.sorted(expected));
    assertThat(shuffledPlan(totals)).contains("AQEShuffleRead coalesced");
  }

  @Test
  void repartitionByColumnOverSixteenMillionPartitions() {
    Dataset<Row> moved =
        spark
            .range(0, 500, 1, 2)
            .selectExpr("id", "concat('row-', id) AS name")
            .repartition(functions.col("id"));
    List<String> expected = new ArrayList<>();
    for (long id = 0; id < 500; id++) {
      expected.add("[" + id + ",row-" + id + "]");
    }
    assertThat(Jobs.sorted(Jobs.strings(moved.collectAsList()))).isEqualTo(Jobs.sorted(expected));
    shuffledPlan(moved);
  }
}
