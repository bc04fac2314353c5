package io.sluice.spark.suites;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import org.apache.spark.MapOutputTrackerMaster;
import org.apache.spark.scheduler.MapStatus;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanExec;
import org.apache.spark.sql.execution.adaptive.ShuffleQueryStageExec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The decision of Spark's "SPARK-37357: Add small partition factor for rebalance partitions"
 * (excluded from {@code AdaptiveQueryExecSuite}: its thresholds sit around the built-in writer's
 * exact block sizes, [88, 97, 97]) on Sluice's own block sizes for the same rows: with the advisory
 * size placed the same way (the first two map blocks fit, the third does not), the last split is
 * merged back (no AQE shuffle read) when the small partition factor puts the threshold just above
 * it and kept (a skew-split read) when just below.
 */
class RebalanceSmallPartitionFactorIT {
  private static final String QUERY = "SELECT /*+ REBALANCE(c1) */ * FROM v";

  @TempDir Path dir;

  @Test
  void smallPartitionFactorDecidesOnSluiceSizesAsOnTheBuiltInOnes() throws IOException {
    try (LocalSluiceServers servers = new LocalSluiceServers(dir, 1)) {
      SparkSession.Builder b =
          SparkSession.builder()
              .master("local[2]")
              .appName("rebalance-small-partition-factor")
              .config("spark.ui.enabled", "false")
              .config("spark.driver.host", "127.0.0.1")
              .config("spark.driver.bindAddress", "127.0.0.1")
              .config("spark.sql.adaptive.enabled", "true")
              .config("spark.sql.adaptive.optimizeSkewsInRebalancePartitions.enabled", "true")
              .config("spark.sql.shuffle.partitions", "1");
      for (Map.Entry<String, String> e : servers.sparkSettings().entrySet()) {
        b = b.config(e.getKey(), e.getValue());
      }
      SparkSession spark = b.getOrCreate();
      try {
        assertThat(spark.sparkContext().env().shuffleManager().getClass().getName())
            .isEqualTo(LocalSluiceServers.MANAGER);
        // the suite's view: (1 to 8).map(i => TestData(if (i > 2) 2 else i, i.toString)), 3 slices
        spark
            .range(1, 9, 1, 3)
            .selectExpr("cast(if(id > 2, 2, id) as int) as c1", "cast(id as string) as c2")
            .createOrReplaceTempView("v");

        spark.conf().set("spark.sql.adaptive.advisoryPartitionSizeInBytes", "1000000");
        long[] blocks = mapBlockSizes(spark, run(spark));
        assertThat(blocks).hasSize(3);
        long a = blocks[0];
        long b2 = blocks[1];
        long c = blocks[2];
        assertThat(c).isGreaterThan(0);

        long advisory = a + b2; // the first two blocks fit, the third starts a new split
        spark
            .conf()
            .set("spark.sql.adaptive.advisoryPartitionSizeInBytes", Long.toString(advisory));
        spark
            .conf()
            .set(
                "spark.sql.adaptive.rebalancePartitionsSmallPartitionFactor",
                Double.toString((c + 1.0) / advisory));
        assertThat(hasShuffleRead(run(spark)))
            .as(
                "blocks %s, advisory %d: the small last split is merged back",
                Arrays.toString(blocks), advisory)
            .isFalse();
        spark
            .conf()
            .set(
                "spark.sql.adaptive.rebalancePartitionsSmallPartitionFactor",
                Double.toString((c - 1.0) / advisory));
        assertThat(hasShuffleRead(run(spark)))
            .as("blocks %s, advisory %d: the last split is kept", Arrays.toString(blocks), advisory)
            .isTrue();
      } finally {
        spark.stop();
      }
    }
  }

  /** Runs the query and returns its final adaptive plan. */
  private static SparkPlan run(SparkSession spark) {
    Dataset<Row> df = spark.sql(QUERY);
    assertThat(df.collectAsList()).hasSize(8);
    return ((AdaptiveSparkPlanExec) df.queryExecution().executedPlan()).executedPlan();
  }

  private static boolean hasShuffleRead(SparkPlan plan) {
    return plan.toString().contains("AQEShuffleRead");
  }

  /** The block sizes of partition 0 of the plan's one shuffle, by map, as AQE reads them. */
  private static long[] mapBlockSizes(SparkSession spark, SparkPlan plan) {
    ShuffleQueryStageExec stage = null;
    scala.collection.Iterator<SparkPlan> leaves = plan.collectLeaves().iterator();
    while (leaves.hasNext()) {
      SparkPlan leaf = leaves.next();
      if (leaf instanceof ShuffleQueryStageExec s) {
        stage = s;
      }
    }
    assertThat(stage).as("a shuffle stage in %s", plan).isNotNull();
    int shuffleId = stage.mapStats().get().shuffleId();
    MapOutputTrackerMaster tracker =
        (MapOutputTrackerMaster) spark.sparkContext().env().mapOutputTracker();
    MapStatus[] statuses = tracker.shuffleStatuses().get(shuffleId).get().mapStatuses();
    long[] sizes = new long[statuses.length];
    for (int i = 0; i < statuses.length; i++) {
      sizes[i] = statuses[i].getSizeForBlock(0);
    }
    return sizes;
  }
}
