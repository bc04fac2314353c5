package io.sluice.e2e.spark;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.server.ShuffleServer;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import scala.Tuple2;

/**
 * Real Spark jobs on Sluice in local-cluster mode (two executor JVMs), each compared with the same
 * job on Spark's built-in sort shuffle: RDD operations, DataFrames, AQE coalescing, skew joins and
 * the local shuffle reader (their plans checked), injected task failures, and a stage retry after
 * the map output became unreadable. One Sluice session serves the whole class; the reference
 * results are computed first, in a built-in session that is stopped before it starts.
 */
class SparkShuffleIT {
  @TempDir static Path tmp;

  private static final Map<String, Function<SparkSession, List<String>>> RDD_JOBS =
      Map.of(
          "reduceByKey", Jobs::reduceByKey,
          "groupByKey", Jobs::groupByKey,
          "sortByKey", Jobs::sortByKey,
          "join", Jobs::join,
          "repartition", Jobs::repartition,
          "taskFailures", Jobs::withTaskFailures);
  private static final Map<String, Function<SparkSession, SqlJobs.Outcome>> SQL_JOBS =
      Map.of(
          "aggregateAndJoin", SqlJobs::aggregateAndJoin,
          "coalesced", SqlJobs::coalesced,
          "skewJoin", SqlJobs::skewJoin,
          "localShuffleReader", SqlJobs::localShuffleReader);

  private static final Map<String, List<String>> expected = new HashMap<>();
  private static final Map<String, SqlJobs.Outcome> expectedSql = new HashMap<>();
  private static SluiceServers servers;
  private static SparkSession spark;
  private static final TaskFailureCounter failures = new TaskFailureCounter();
  private static final ShuffleBytesCounter shuffleBytes = new ShuffleBytesCounter();
  private static SpeculationMarker speculation;

  @BeforeAll
  static void start() throws Exception {
    SparkSession builtin = SparkSessions.builtin("SparkShuffleIT");
    try {
      RDD_JOBS.forEach((name, job) -> expected.put(name, job.apply(builtin)));
      SQL_JOBS.forEach((name, job) -> expectedSql.put(name, job.apply(builtin)));
      expected.put(
          "speculation",
          Jobs.sorted(
              Jobs.strings(
                  Jobs.jsc(builtin)
                      .parallelize(Jobs.range(8_000), 8)
                      .mapToPair(i -> new Tuple2<>(i % 13, (long) i))
                      .reduceByKey(Long::sum, 2)
                      .collect())));
      expected.put("stageRetry", Jobs.sorted(Jobs.strings(stageRetryInput(builtin).collect())));
    } finally {
      builtin.stop();
    }
    servers = new SluiceServers(tmp.resolve("sluice"), 2);
    speculation = new SpeculationMarker(tmp.resolve("speculated"));
    spark =
        SparkSessions.sluice(
            "SparkShuffleIT",
            servers.list(),
            Map.of(
                "spark.speculation", "true",
                "spark.speculation.interval", "50ms",
                "spark.speculation.quantile", "0.5",
                "spark.speculation.multiplier", "1.5",
                "spark.speculation.minTaskRuntime", "50ms"));
    spark.sparkContext().addSparkListener(failures);
    spark.sparkContext().addSparkListener(speculation);
    spark.sparkContext().addSparkListener(shuffleBytes);
  }

  @AfterAll
  static void stop() throws Exception {
    try {
      if (spark != null) {
        // executors run Netty's leak detector on paranoid; a leak they saw fails the suite
        System.gc();
        assertThat(SparkSessions.executorLeaks(spark.sparkContext().applicationId())).isEmpty();
      }
    } finally {
      if (spark != null) {
        spark.stop();
      }
      if (servers != null) {
        servers.close();
      }
    }
  }

  private static void assertSameAsBuiltin(String job) {
    assertThat(RDD_JOBS.get(job).apply(spark)).isEqualTo(expected.get(job));
  }

  @Test
  void reduceByKey() {
    assertSameAsBuiltin("reduceByKey");
  }

  @Test
  void groupByKey() {
    assertSameAsBuiltin("groupByKey");
  }

  @Test
  void sortByKeyKeepsTheOrder() {
    assertSameAsBuiltin("sortByKey");
  }

  @Test
  void join() {
    assertSameAsBuiltin("join");
  }

  @Test
  void repartitionPutsEveryRecordInTheSamePartition() {
    assertSameAsBuiltin("repartition");
  }

  @Test
  void injectedTaskFailuresCountOnlyTheRegisteredAttempts() throws Exception {
    synchronized (failures) {
      spark.sparkContext().listenerBus().waitUntilEmpty();
      failures.reset();
      assertSameAsBuiltin("taskFailures");
      spark.sparkContext().listenerBus().waitUntilEmpty();
      // maps 0, 2, 4 fail halfway, map 3 after its output was reported, reduce 1 after reading
      assertThat(failures.failedTasks.get()).isGreaterThanOrEqualTo(5);
    }
  }

  /**
   * Speculation is on for the whole suite. Here map 0 stays running until the driver has decided to
   * speculate it. (Spark never launches a copy on a host that runs an attempt already, and all
   * local-cluster executors share one host, so the copy itself cannot start here; two complete
   * attempts of one map, only one of which may count, are what {@link
   * #injectedTaskFailuresCountOnlyTheRegisteredAttempts} produces.)
   */
  @Test
  void speculationOn() {
    String marker = tmp.resolve("speculated").toString();
    List<String> sums =
        Jobs.sorted(
            Jobs.strings(
                Jobs.jsc(spark)
                    .parallelize(Jobs.range(8_000), 8)
                    .mapPartitions(
                        it -> {
                          if (org.apache.spark.TaskContext.get().partitionId() == 0) {
                            SpeculationMarker.await(marker, 60_000);
                          }
                          return it;
                        })
                    .mapToPair(i -> new Tuple2<>(i % 13, (long) i))
                    .reduceByKey(Long::sum, 2)
                    .collect()));
    assertThat(speculation.seen()).isTrue();
    assertThat(sums).isEqualTo(expected.get("speculation"));
  }

  /** The shuffle metrics of one job, after it ran alone. */
  private static ShuffleBytesCounter shuffleMetricsOf(Runnable job) throws Exception {
    synchronized (shuffleBytes) {
      spark.sparkContext().listenerBus().waitUntilEmpty();
      shuffleBytes.reset();
      job.run();
      spark.sparkContext().listenerBus().waitUntilEmpty();
      return shuffleBytes;
    }
  }

  /**
   * Spark's ShuffleSuite "metrics for shuffle without aggregation" shape (found 40,558 bytes
   * written and 43,616 read): written and read bytes are one count, the serialized records' bytes.
   */
  @Test
  void shuffleBytesWrittenAreTheBytesReadWithoutAggregation() throws Exception {
    ShuffleBytesCounter m =
        shuffleMetricsOf(
            () ->
                Jobs.jsc(spark)
                    .parallelize(Jobs.range(10_000), 4)
                    .mapToPair(i -> new Tuple2<>(i, 1))
                    .groupByKey()
                    .collect());
    assertThat(m.recordsWritten.get()).as("%s", m).isEqualTo(10_000);
    assertThat(m.recordsRead.get()).as("%s", m).isEqualTo(10_000);
    assertThat(m.bytesWritten.get()).as("%s", m).isPositive().isEqualTo(m.bytesRead.get());
  }

  /** The same with map-side combine, and for a DataFrame (Spark SQL's row serializer). */
  @Test
  void shuffleBytesWrittenAreTheBytesReadWithAggregationAndForDataFrames() throws Exception {
    ShuffleBytesCounter combined =
        shuffleMetricsOf(
            () ->
                Jobs.jsc(spark)
                    .parallelize(Jobs.range(10_000), 4)
                    .mapToPair(i -> new Tuple2<>(i % 100, 1))
                    .reduceByKey(Integer::sum, 3)
                    .collect());
    assertThat(combined.recordsRead.get()).as("%s", combined).isEqualTo(400); // 4 maps x 100 keys
    assertThat(combined.bytesWritten.get())
        .as("%s", combined)
        .isPositive()
        .isEqualTo(combined.bytesRead.get());

    spark.conf().set("spark.sql.adaptive.enabled", "false"); // one read of every partition
    try {
      ShuffleBytesCounter rows =
          shuffleMetricsOf(
              () ->
                  spark
                      .range(0, 20_000, 1, 4)
                      .selectExpr("id", "concat('row-', id) AS name")
                      .repartition(5)
                      .collectAsList());
      assertThat(rows.recordsRead.get()).as("%s", rows).isEqualTo(20_000);
      assertThat(rows.bytesWritten.get())
          .as("%s", rows)
          .isPositive()
          .isEqualTo(rows.bytesRead.get());
    } finally {
      spark.conf().set("spark.sql.adaptive.enabled", "true");
    }
  }

  @Test
  void dataFrameAggregationAndJoin() {
    assertThat(SqlJobs.aggregateAndJoin(spark).rows)
        .isEqualTo(expectedSql.get("aggregateAndJoin").rows);
  }

  @Test
  void aqeCoalescesPartitionsFromTheRealSizes() {
    SqlJobs.Outcome outcome = SqlJobs.coalesced(spark);
    assertThat(outcome.rows).isEqualTo(expectedSql.get("coalesced").rows);
    assertThat(outcome.plan).contains("AQEShuffleRead").contains("coalesced");
  }

  @Test
  void aqeSplitsTheSkewedPartitionIntoMapRangesReadInPlaceWithoutSorting() {
    long sortsBefore = servers.sorts();
    long indexedBefore = servers.indexedRangeReads();
    SqlJobs.Outcome outcome = SqlJobs.skewJoin(spark);
    assertThat(expectedSql.get("skewJoin").plan).contains("skew=true");
    assertThat(outcome.plan).contains("skew=true").contains("skewed");
    assertThat(outcome.rows).hasSize(expectedSql.get("skewJoin").rows.size());
    assertThat(outcome.rows).isEqualTo(expectedSql.get("skewJoin").rows);
    assertThat(servers.indexedRangeReads()).isGreaterThan(indexedBefore);
    assertThat(servers.sorts()).isEqualTo(sortsBefore);
  }

  @Test
  void aqeLocalShuffleReaderReadsPerMapper() {
    long sortsBefore = servers.sorts();
    SqlJobs.Outcome outcome = SqlJobs.localShuffleReader(spark);
    assertThat(expectedSql.get("localShuffleReader").plan).contains("BroadcastHashJoin");
    assertThat(outcome.plan).contains("BroadcastHashJoin").contains("AQEShuffleRead local");
    assertThat(outcome.rows).isEqualTo(expectedSql.get("localShuffleReader").rows);
    assertThat(servers.sorts()).isEqualTo(sortsBefore);
  }

  private static JavaPairRDD<Integer, Long> stageRetryInput(SparkSession session) {
    return Jobs.jsc(session)
        .parallelize(Jobs.range(12_000), 4)
        .mapToPair(i -> new Tuple2<>(i % 31, (long) i))
        .reduceByKey(Long::sum, 3);
  }

  @Test
  void mapOutputLostBetweenStagesIsRecomputedThroughAStageRetry() throws Exception {
    synchronized (failures) {
      JavaPairRDD<Integer, Long> sums = stageRetryInput(spark);
      assertThat(sums.count()).isEqualTo(31);
      int shuffleId = ((ShuffleDependency<?, ?, ?>) sums.rdd().dependencies().head()).shuffleId();
      String appId = spark.sparkContext().applicationId();
      // the servers lose the shuffle's committed data (as a restart without state would)
      for (ShuffleServer server : servers.all()) {
        server.registry().unregisterShuffle(appId, shuffleId).get();
      }
      spark.sparkContext().listenerBus().waitUntilEmpty();
      failures.reset();

      // the map outputs are still registered, so only the reduce stage runs, finds the data gone,
      // fails with a fetch failure, and Spark reruns the maps (into a new generation)
      assertThat(Jobs.sorted(Jobs.strings(sums.collect()))).isEqualTo(expected.get("stageRetry"));

      spark.sparkContext().listenerBus().waitUntilEmpty();
      assertThat(failures.fetchFailures.get()).isGreaterThan(0);
      assertThat(failures.retriedStages.get()).isGreaterThan(0);
      assertThat(failures.shuffleMapTasks.get()).isGreaterThanOrEqualTo(4); // the maps reran
    }
  }

  @Test
  void aCompletedMapStageIsCommittedBeforeAnyReaderAsks() throws Exception {
    JavaPairRDD<Integer, Long> sums =
        Jobs.jsc(spark)
            .parallelize(Jobs.range(2_000), 3)
            .mapToPair(i -> new Tuple2<>(i % 11, (long) i))
            .reduceByKey(Long::sum, 4);
    ShuffleDependency<?, ?, ?> dep = (ShuffleDependency<?, ?, ?>) sums.rdd().dependencies().head();
    long before = servers.commits();

    // the map stage alone, as AQE runs its query stages: no reduce task ever reads the shuffle
    spark.sparkContext().submitMapStage(dep).get();

    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (servers.commits() == before && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertThat(servers.commits()).as("commits answered by the servers").isGreaterThan(before);
    // and the reduce stage reads that commit
    Map<Integer, Long> expectedSums = new HashMap<>();
    for (int i : Jobs.range(2_000)) {
      expectedSums.merge(i % 11, (long) i, Long::sum);
    }
    assertThat(sums.collectAsMap()).isEqualTo(expectedSums);
  }

  @Test
  void unregisteringAShuffleDeletesItOnTheServers() throws Exception {
    JavaPairRDD<Integer, Long> counts =
        Jobs.jsc(spark)
            .parallelize(Jobs.range(1_000), 2)
            .mapToPair(i -> new Tuple2<>(i % 7, 1L))
            .reduceByKey(Long::sum, 2);
    assertThat(counts.count()).isEqualTo(7);
    int shuffleId = ((ShuffleDependency<?, ?, ?>) counts.rdd().dependencies().head()).shuffleId();
    String appId = spark.sparkContext().applicationId();
    assertThat(servers.all().stream().anyMatch(s -> s.registry().get(appId, shuffleId) != null))
        .isTrue();

    spark.sparkContext().cleaner().get().doCleanupShuffle(shuffleId, true);

    for (ShuffleServer s : servers.all()) {
      assertThat(s.registry().get(appId, shuffleId)).isNull();
    }
  }
}
