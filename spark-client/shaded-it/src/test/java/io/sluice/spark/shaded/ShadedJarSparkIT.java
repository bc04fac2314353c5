package io.sluice.spark.shaded;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.spark.jobs.SkewJoin;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.zip.ZipFile;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import scala.Tuple2;

/**
 * One Spark line with its shaded client jar as the only Sluice jar on the class path, against real
 * daemons: the jar hides its libraries, and an RDD aggregation, a key sort and an AQE skew join run
 * through Sluice (no fallback) with the built-in shuffle's results.
 */
class ShadedJarSparkIT {
  @TempDir static Path tmp;
  private static SluiceDaemons daemons;

  @BeforeAll
  static void startServers() throws Exception {
    daemons = SluiceDaemons.start(tmp, 2);
  }

  @AfterAll
  static void stopServers() throws Exception {
    if (daemons != null) {
      daemons.close();
    }
  }

  @Test
  void theJarHoldsTheClientAndHidesItsLibraries() throws Exception {
    try (ZipFile zip = new ZipFile(Sessions.clientJar())) {
      assertThat(zip.getEntry("org/apache/spark/shuffle/sluice/SluiceShuffleManager.class"))
          .isNotNull();
      assertThat(zip.getEntry("org/apache/spark/shuffle/sluice/SparkLine.class")).isNotNull();
      assertThat(zip.getEntry("io/sluice/client/ClientContext.class")).isNotNull();
      assertThat(zip.getEntry("io/sluice/shaded/io/netty/channel/Channel.class")).isNotNull();
      assertThat(zip.getEntry("io/sluice/shaded/com/google/protobuf/Message.class")).isNotNull();
      List<String> names =
          zip.stream()
              .filter(e -> !e.isDirectory())
              .map(e -> e.getName())
              .collect(Collectors.toList());
      assertThat(names)
          .noneMatch(n -> n.startsWith("io/netty/"))
          .noneMatch(n -> n.startsWith("com/google/protobuf/"))
          // Spark's own: its metrics sources hand Spark a registry of its type
          .noneMatch(n -> n.startsWith("com/codahale/"))
          .noneMatch(n -> n.startsWith("io/sluice/shaded/com/codahale/"))
          // Spark's own too: its lz4-java loads its native library, a relocated copy could not
          .noneMatch(n -> n.startsWith("net/jpountz/"))
          .noneMatch(n -> n.startsWith("io/sluice/shaded/net/jpountz/"))
          .noneMatch(n -> n.startsWith("scala/"))
          .noneMatch(n -> n.startsWith("org/slf4j/"))
          .noneMatch(n -> n.startsWith("org/rocksdb/"))
          .noneMatch(n -> n.startsWith("com/beust/"))
          .allMatch(n -> !n.startsWith("org/apache/spark/") || n.contains("/sluice/"));
    }
  }

  /** One session for all three jobs: its executors start once. */
  @Test
  void anAggregationASortAndAnAqeSkewJoinRunThroughSluice() {
    List<Row> sluice;
    String plan;
    SparkSession spark = Sessions.sluice("shaded-jar", daemons.servers(), Map.of());
    try {
      assertThat(SparkEnv.get().shuffleManager().getClass().getName()).isEqualTo(Sessions.MANAGER);
      JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
      List<Integer> numbers = IntStream.range(0, 100_000).boxed().collect(Collectors.toList());
      Map<Integer, Long> counts =
          jsc.parallelize(numbers, 8)
              .mapToPair(i -> new Tuple2<>(i % 1000, 1L))
              .reduceByKey(Long::sum, 16)
              .collectAsMap();
      assertThat(counts).hasSize(1000);
      assertThat(counts.values()).containsOnly(100L);

      // sortByKey reads through the key sorter, which differs between Spark lines
      List<Integer> shuffled = new ArrayList<>(numbers.subList(0, 20_000));
      java.util.Collections.shuffle(shuffled, new java.util.Random(7));
      List<Integer> sorted =
          jsc.parallelize(shuffled, 6)
              .mapToPair(i -> new Tuple2<>(i, "v" + i))
              .sortByKey(true, 4)
              .keys()
              .collect();
      assertThat(sorted).isEqualTo(numbers.subList(0, 20_000));

      Dataset<Row> join = SkewJoin.of(spark);
      sluice = join.collectAsList();
      plan = join.queryExecution().executedPlan().toString();
    } finally {
      spark.stop();
    }
    assertThat(plan)
        .as("the final plan splits the skewed partition:\n%s", plan)
        .contains("skew=true");

    SparkSession builtin = Sessions.builtin("shaded-skew-join", Map.of());
    try {
      assertThat(sluice).isEqualTo(SkewJoin.of(builtin).collectAsList());
    } finally {
      builtin.stop();
    }
  }
}
