package io.sluice.e2e.spark;

import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * The DataFrame jobs whose AQE plans the suite checks. Each sets the SQL settings it needs on the
 * session (the same on both shuffles) and returns its result and final plan.
 */
final class SqlJobs {
  private SqlJobs() {}

  /** A result and the final adaptive plan that produced it. */
  static final class Outcome {
    final List<String> rows;
    final String plan;

    Outcome(List<String> rows, String plan) {
      this.rows = rows;
      this.plan = plan;
    }
  }

  private static Outcome run(Dataset<Row> df) {
    List<String> rows = Jobs.sorted(Jobs.strings(df.collectAsList()));
    return new Outcome(rows, df.queryExecution().executedPlan().toString());
  }

  private static void reset(SparkSession spark) {
    spark.conf().set("spark.sql.shuffle.partitions", "8");
    spark.conf().set("spark.sql.autoBroadcastJoinThreshold", "-1");
    spark.conf().set("spark.sql.adaptive.coalescePartitions.enabled", "true");
    spark.conf().set("spark.sql.adaptive.skewJoin.enabled", "true");
    spark.conf().set("spark.sql.adaptive.localShuffleReader.enabled", "true");
    spark.conf().set("spark.sql.adaptive.advisoryPartitionSizeInBytes", "64m");
    spark.conf().set("spark.sql.adaptive.skewJoin.skewedPartitionFactor", "5");
    spark.conf().set("spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes", "256m");
  }

  /** An aggregation and a shuffled join of its result. */
  static Outcome aggregateAndJoin(SparkSession spark) {
    reset(spark);
    Dataset<Row> people = Jobs.people(spark);
    Dataset<Row> depts =
        spark.range(0, 37, 1, 2).selectExpr("id AS dept", "concat('dept-', id) AS name");
    Dataset<Row> stats =
        people.groupBy("dept").agg(org.apache.spark.sql.functions.sum("salary").as("total"));
    return run(stats.join(depts, "dept"));
  }

  /** Fifty shuffle partitions of tiny data: AQE coalesces them. */
  static Outcome coalesced(SparkSession spark) {
    reset(spark);
    spark.conf().set("spark.sql.shuffle.partitions", "50");
    return run(Jobs.people(spark).groupBy("dept").count());
  }

  /**
   * A sort-merge join whose left side has one hot key holding three quarters of its rows, with
   * incompressible payloads so that partition sizes show the skew: AQE splits the hot partition
   * into map-index ranges of the left side.
   */
  static Outcome skewJoin(SparkSession spark) {
    return run(skewJoinFrame(spark));
  }

  /** The join of {@link #skewJoin}, with its settings set on the session. */
  static Dataset<Row> skewJoinFrame(SparkSession spark) {
    reset(spark);
    spark.conf().set("spark.sql.adaptive.coalescePartitions.enabled", "false");
    spark.conf().set("spark.sql.adaptive.skewJoin.skewedPartitionFactor", "2");
    spark.conf().set("spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes", "4k");
    spark.conf().set("spark.sql.adaptive.advisoryPartitionSizeInBytes", "4k");
    Dataset<Row> left =
        spark
            .range(0, 6_000, 1, 4)
            .selectExpr(
                "CASE WHEN id % 4 != 0 THEN 0 ELSE id END AS k",
                "sha2(CAST(id AS STRING), 256) AS lv");
    Dataset<Row> right =
        spark
            .range(0, 2_000, 1, 2)
            .selectExpr("id AS k", "sha2(CAST(id * 3 AS STRING), 256) AS rv");
    return left.join(right, "k");
  }

  /**
   * A join planned as sort-merge (statically both sides look large) whose small side turns out
   * tiny: AQE makes it a broadcast join and reads the other side's shuffle per mapper.
   */
  static Outcome localShuffleReader(SparkSession spark) {
    reset(spark);
    spark.conf().set("spark.sql.autoBroadcastJoinThreshold", "2000");
    Dataset<Row> big = spark.range(0, 5_000, 1, 4).selectExpr("id % 100 AS k", "id AS v");
    Dataset<Row> small =
        spark.range(0, 5_000, 1, 2).filter("id < 5").selectExpr("id AS k", "concat('s', id) AS s");
    return run(big.join(small, "k"));
  }
}
