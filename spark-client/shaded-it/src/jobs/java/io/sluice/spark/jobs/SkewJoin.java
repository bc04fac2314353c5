package io.sluice.spark.jobs;

import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/** The AQE skew join every Spark-line suite runs (shaded jars, YARN). */
public final class SkewJoin {
  private SkewJoin() {}

  /**
   * A sort-merge join whose left side has one hot key with three quarters of its rows and
   * incompressible payloads, on 8 shuffle partitions: AQE splits the hot partition into map-index
   * ranges of the left side. Reduced to one row: the count and the XOR of a hash of every joined
   * row.
   */
  public static Dataset<Row> of(SparkSession spark) {
    spark.conf().set("spark.sql.autoBroadcastJoinThreshold", "-1");
    spark.conf().set("spark.sql.shuffle.partitions", "8");
    spark.conf().set("spark.sql.adaptive.coalescePartitions.enabled", "false");
    spark.conf().set("spark.sql.adaptive.skewJoin.enabled", "true");
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
    return left.join(right, "k").selectExpr("count(*)", "bit_xor(xxhash64(k, lv, rv))");
  }
}
