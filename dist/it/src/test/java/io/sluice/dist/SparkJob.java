package io.sluice.dist;

import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.SparkSession;
import scala.Tuple2;

/**
 * The job {@link TarballIT} runs in a JVM of its own, whose class path is Spark 3.5 and the one
 * client jar from the tarball: Sluice set up as its docs tell a Spark user, without fallback (a
 * shuffle Sluice does not take fails), in local mode. Prints the shuffle manager in use and what
 * the aggregation counted; the test checks both.
 *
 * <p>Argument: {@code spark.sluice.servers}.
 */
public final class SparkJob {
  static final String MANAGER = "org.apache.spark.shuffle.sluice.SluiceShuffleManager";

  private SparkJob() {}

  public static void main(String[] args) {
    SparkSession spark =
        SparkSession.builder()
            .appName("sluice-tarball")
            .master("local[2]")
            .config("spark.ui.enabled", "false")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.shuffle.manager", MANAGER)
            .config(
                "spark.shuffle.sort.io.plugin.class",
                "org.apache.spark.shuffle.sluice.SluiceShuffleDataIO")
            .config("spark.sluice.servers", args[0])
            .config("spark.sluice.fallback", "never")
            .getOrCreate();
    try {
      JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
      List<Integer> numbers = IntStream.range(0, 100_000).boxed().collect(Collectors.toList());
      Map<Integer, Long> counts =
          jsc.parallelize(numbers, 8)
              .mapToPair(i -> new Tuple2<>(i % 1000, 1L))
              .reduceByKey(Long::sum, 16)
              .collectAsMap();
      String manager = SparkEnv.get().shuffleManager().getClass().getName();
      System.out.println("shuffle manager: " + manager);
      System.out.println(
          "keys: " + counts.size() + ", counts per key: " + new TreeSet<>(counts.values()));
    } finally {
      spark.stop();
    }
  }
}
