package io.sluice.e2e.spark;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.HashPartitioner;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import scala.Tuple2;

/**
 * RDD jobs with Kryo, whose records can be relocated: a reducer reads all its batches (one per map,
 * a few records each, and some spanning several chunks) through one deserialization stream. The
 * result is the built-in shuffle's with the same serializer, for records of every size from a few
 * bytes to larger than a chunk.
 */
class SparkKryoIT {
  private static final Duration BOUND = Duration.ofSeconds(120);
  private static final Map<String, String> KRYO =
      Map.of("spark.serializer", "org.apache.spark.serializer.KryoSerializer");

  @TempDir Path tmp;

  private static List<String> job(SparkSession spark) {
    return Jobs.sorted(
        Jobs.strings(
            Jobs.jsc(spark)
                .parallelize(Jobs.range(60), 30)
                .flatMapToPair(
                    m -> {
                      List<Tuple2<Integer, String>> out = new ArrayList<>();
                      for (int j = 0; j < 200; j++) {
                        // mostly tiny values, a few past the chunk size
                        int length = j % 97 == 0 ? 300_000 + m : j % 7;
                        out.add(new Tuple2<>(j % 41, "m" + m + "j" + j + "x".repeat(length)));
                      }
                      return out.iterator();
                    })
                .partitionBy(new HashPartitioner(41))
                .mapPartitionsToPair(
                    it -> {
                      java.util.Map<Integer, long[]> byKey = new java.util.TreeMap<>();
                      while (it.hasNext()) {
                        Tuple2<Integer, String> t = it.next();
                        long[] s = byKey.computeIfAbsent(t._1(), k -> new long[2]);
                        s[0]++;
                        s[1] += t._2().length() * 31L + t._2().hashCode();
                      }
                      List<Tuple2<Integer, String>> out = new ArrayList<>();
                      byKey.forEach((k, s) -> out.add(new Tuple2<>(k, s[0] + "/" + s[1])));
                      return out.iterator();
                    })
                .collect()));
  }

  @Test
  void aReducerReadsManyKryoBatchesThroughOneStream() throws Exception {
    SparkSession builtin =
        SparkSession.builder()
            .appName("SparkKryoIT-builtin")
            .master("local[2]")
            .config("spark.ui.enabled", "false")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.serializer", "org.apache.spark.serializer.KryoSerializer")
            .getOrCreate();
    List<String> expected;
    try {
      expected = job(builtin);
    } finally {
      builtin.stop();
    }
    assertThat(expected).hasSize(41);
    try (SluiceServers servers =
        new SluiceServers(tmp, 2, Map.of("sluice.read.chunkSize", "64k"))) {
      SparkSession spark = SparkSessions.sluice("SparkKryoIT", servers.list(), KRYO);
      try {
        assertThat(BoundedQuery.run(spark, () -> job(spark), BOUND)).isEqualTo(expected);
      } finally {
        spark.stop();
      }
    }
  }
}
