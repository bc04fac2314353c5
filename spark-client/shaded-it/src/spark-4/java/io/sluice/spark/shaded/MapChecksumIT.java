package io.sluice.spark.shaded;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Map;
import org.apache.spark.MapOutputTrackerMaster;
import org.apache.spark.SparkEnv;
import org.apache.spark.scheduler.MapStatus;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Spark 4.1+'s order-independent map checksum ({@code
 * spark.sql.shuffle.orderIndependentChecksum.enabled}): with Sluice every map status carries the
 * checksum Spark's own sort shuffle reports for the same map, not 0.
 */
class MapChecksumIT {
  private static final Map<String, String> CHECKSUMS =
      Map.of(
          "spark.sql.shuffle.orderIndependentChecksum.enabled",
          "true",
          // keep the query's shuffle (and its map statuses) registered after it ends
          "spark.sql.classic.shuffleDependency.fileCleanup.enabled",
          "false");

  @TempDir Path tmp;

  @Test
  void mapStatusesCarryTheBuiltInShufflesChecksums() throws Exception {
    long[] sluice;
    try (SluiceDaemons daemons = SluiceDaemons.start(tmp, 2)) {
      SparkSession spark = Sessions.sluice("shaded-checksums", daemons.servers(), CHECKSUMS);
      try {
        sluice = checksumsOfARepartition(spark);
      } finally {
        spark.stop();
      }
    }
    SparkSession builtin = Sessions.builtin("shaded-checksums", CHECKSUMS);
    long[] expected;
    try {
      expected = checksumsOfARepartition(builtin);
    } finally {
      builtin.stop();
    }
    assertThat(expected).hasSize(4).doesNotContain(0L);
    assertThat(sluice).isEqualTo(expected);
  }

  /** Repartitions four deterministic slices by key; the checksum of each of their map outputs. */
  private static long[] checksumsOfARepartition(SparkSession spark) {
    spark.conf().set("spark.sql.adaptive.enabled", "false");
    long rows =
        spark
            .range(0, 20_000, 1, 4)
            .selectExpr("id % 97 AS k", "sha2(CAST(id AS STRING), 256) AS v")
            .repartition(8, org.apache.spark.sql.functions.col("k"))
            .collectAsList()
            .size();
    assertThat(rows).isEqualTo(20_000);
    MapOutputTrackerMaster tracker = (MapOutputTrackerMaster) SparkEnv.get().mapOutputTracker();
    assertThat(tracker.shuffleStatuses().size()).as("one shuffle").isEqualTo(1);
    int shuffleId = (Integer) tracker.shuffleStatuses().keys().head();
    MapStatus[] statuses = tracker.shuffleStatuses().get(shuffleId).get().mapStatuses();
    long[] checksums = new long[statuses.length];
    for (int i = 0; i < statuses.length; i++) {
      checksums[i] = statuses[i].checksumValue();
    }
    return checksums;
  }
}
