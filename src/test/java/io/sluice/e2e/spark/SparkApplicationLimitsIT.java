package io.sluice.e2e.spark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.spark.HashPartitioner;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import scala.Tuple2;

/**
 * A Spark job past a server's limit per application fails its task with a message naming the
 * setting, and is not taken for lost data: no fetch failure, no map stage rerun. Spark in {@code
 * local[2, 4]} (four attempts a task) on real servers.
 */
class SparkApplicationLimitsIT {
  private static final Duration BOUND = Duration.ofSeconds(120);
  private static final int MAPS = 4;
  private static final int REDUCERS = 2;
  private static final int RECORDS_PER_MAP = 2000;

  /**
   * The stream test's reducers meet here (local mode: tasks run in this JVM): one holds its stream
   * until the other's first attempt was refused, and the refused one's retry waits until the first
   * one is done.
   */
  private static final CountDownLatch refused = new CountDownLatch(1);

  private static final CountDownLatch firstDone = new CountDownLatch(1);

  @TempDir Path tmp;

  private static SparkSession session(String name, String servers, Map<String, String> extra) {
    SparkSession.Builder b =
        SparkSession.builder()
            .appName(name)
            .master("local[2,4]")
            .config("spark.ui.enabled", "false")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.shuffle.manager", SparkSessions.MANAGER)
            .config("spark.shuffle.sort.io.plugin.class", SparkSessions.DATA_IO)
            .config("spark.sluice.servers", servers);
    for (Map.Entry<String, String> e : extra.entrySet()) {
      b = b.config(e.getKey(), e.getValue());
    }
    return b.getOrCreate();
  }

  /**
   * Records of 1 KB each, {@value #MAPS} maps of {@value #RECORDS_PER_MAP} (8 MB in all), counted
   * per reducer.
   */
  private static List<Long> countPerReducer(SparkSession spark, boolean holdFirstStream) {
    return Jobs.jsc(spark)
        .parallelize(Jobs.range(MAPS), MAPS)
        .flatMapToPair(
            m -> {
              // random letters: the pushed bytes stay about as large after compression
              Random random = new Random(m);
              List<Tuple2<Integer, String>> out = new ArrayList<>();
              for (int i = 0; i < RECORDS_PER_MAP; i++) {
                char[] value = new char[1000];
                for (int c = 0; c < value.length; c++) {
                  value[c] = (char) ('a' + random.nextInt(26));
                }
                out.add(new Tuple2<>(i % REDUCERS, new String(value)));
              }
              return out.iterator();
            })
        .partitionBy(new HashPartitioner(REDUCERS))
        .mapPartitions(
            it -> {
              boolean first = TaskContext.get().attemptNumber() == 0;
              if (holdFirstStream && !first) {
                // a retry reads once the reducer that held the stream is done
                firstDone.await(60, TimeUnit.SECONDS);
              }
              long n = 0;
              try {
                if (it.hasNext()) {
                  it.next();
                  n++;
                  if (holdFirstStream && first) {
                    // hold this reducer's stream open until the other reducer was refused its own
                    refused.await(10, TimeUnit.SECONDS);
                  }
                }
                while (it.hasNext()) {
                  it.next();
                  n++;
                }
              } catch (RuntimeException e) {
                if (holdFirstStream) {
                  refused.countDown();
                }
                throw e;
              }
              if (holdFirstStream) {
                firstDone.countDown();
              }
              return List.of(n).iterator();
            })
        .collect();
  }

  @Test
  void aJobPastItsStoredBytesLimitFailsNamingTheSetting() throws Exception {
    try (SluiceServers servers = new SluiceServers(tmp, 1)) {
      SparkSession spark =
          session(
              "SparkApplicationLimitsIT-stored",
              servers.list(),
              Map.of("spark.sluice.client.limits.maxStoredBytes", "1m"));
      TaskFailureCounter failures = new TaskFailureCounter();
      spark.sparkContext().addSparkListener(failures);
      try {
        assertThatThrownBy(
                () -> BoundedQuery.run(spark, () -> countPerReducer(spark, false), BOUND))
            .hasStackTraceContaining("QUOTA_EXCEEDED")
            .hasStackTraceContaining("sluice.client.limits.maxStoredBytes");
        assertThat(failures.failures)
            .as("tasks of the aborted stage may also end killed")
            .anySatisfy(f -> assertThat(f).contains("sluice.client.limits.maxStoredBytes"));
        assertThat(failures.fetchFailures.get()).isZero();
      } finally {
        spark.stop();
      }
    }
  }

  @Test
  void aReaderPastTheStreamLimitFailsItsTaskNotTheMapStage() throws Exception {
    // 256 KiB chunks of about 4 MB per reducer: a reducer's stream stays open while it reads
    try (SluiceServers servers =
        new SluiceServers(tmp, 1, Map.of("sluice.app.maxOpenStreams", "1"))) {
      SparkSession spark = session("SparkApplicationLimitsIT-streams", servers.list(), Map.of());
      TaskFailureCounter failures = new TaskFailureCounter();
      spark.sparkContext().addSparkListener(failures);
      try {
        List<Long> counts = BoundedQuery.run(spark, () -> countPerReducer(spark, true), BOUND);
        assertThat(counts)
            .as("the refused reducer's next attempt reads once the other is done")
            .containsExactly((long) MAPS * RECORDS_PER_MAP / 2, (long) MAPS * RECORDS_PER_MAP / 2);
        assertThat(failures.failures)
            .as("the second reducer's first attempt was refused")
            .isNotEmpty()
            .allSatisfy(
                f ->
                    assertThat(f).contains("QUOTA_EXCEEDED").contains("sluice.app.maxOpenStreams"));
        assertThat(failures.fetchFailures.get()).as("not taken for lost data").isZero();
        assertThat(failures.retriedStages.get()).as("no map stage rerun").isZero();
      } finally {
        spark.stop();
      }
    }
  }
}
