package io.sluice.e2e.spark;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.spark.HashPartitioner;
import org.apache.spark.MapOutputTrackerMaster;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext$;
import org.apache.spark.TaskContextImpl;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.executor.TaskMetrics$;
import org.apache.spark.memory.TaskMemoryManager;
import org.apache.spark.scheduler.MapStatus;
import org.apache.spark.shuffle.ShuffleManager;
import org.apache.spark.shuffle.ShuffleWriter;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import scala.Option;
import scala.Product2;
import scala.Tuple2;
import scala.collection.JavaConverters;

/**
 * Two attempts of one map task writing at the same time with the same stage attempt, attempt number
 * and map id, and different task attempt ids (the shape of Spark's ShuffleSuite "multiple
 * simultaneous attempts for one task (SPARK-8029)", which failed now and then on Sluice, and also
 * asserts that both attempts' statuses have one location). Sluice told attempts apart by stage
 * attempt and attempt number, so both wrote as one attempt: the reader kept the batches that
 * reached the server first and compared them with the record of the attempt that ended first, and
 * when those were different writers the read failed ("a batch is missing, duplicated or from
 * another attempt"). Here the order that fails is forced: attempt A pushes first, attempt B pushes
 * and ends, then A ends; either attempt's output must read back whole.
 */
class SparkSimultaneousAttemptsIT {
  private static final int RECORDS = 20_000;

  @TempDir Path tmp;

  @Test
  @SuppressWarnings({"unchecked", "rawtypes"})
  void twoAttemptsWithOneAttemptNumberEachReadBackWhole() throws Exception {
    try (SluiceServers servers = new SluiceServers(tmp, 1)) {
      SparkSession spark =
          SparkSessions.shellLike(
              "SparkSimultaneousAttemptsIT",
              servers.list(),
              // small batches, and merged requests of at most a quarter of 32k, so A's first
              // batches reach the server while it still writes
              Map.of(
                  "spark.sluice.push.bufferSize",
                  "8k",
                  "spark.sluice.push.maxInFlightBytesPerServer",
                  "32k"));
      ExecutorService threads = Executors.newFixedThreadPool(2);
      try {
        JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
        List<Tuple2<Integer, Integer>> one = List.of(new Tuple2<>(1, 1));
        ShuffleDependency<Integer, Integer, Integer> dep =
            (ShuffleDependency<Integer, Integer, Integer>)
                jsc.parallelizePairs(one, 1)
                    .partitionBy(new HashPartitioner(1))
                    .rdd()
                    .dependencies()
                    .head();
        ShuffleManager manager = SparkEnv.get().shuffleManager();
        MapOutputTrackerMaster tracker = (MapOutputTrackerMaster) SparkEnv.get().mapOutputTracker();
        tracker.registerShuffle(dep.shuffleId(), 1, 1);
        TaskMemoryManager memory = new TaskMemoryManager(SparkEnv.get().memoryManager(), 0L);

        TaskContextImpl contextA = context(memory, 0L);
        TaskContextImpl contextB = context(memory, 1L);
        ShuffleWriter<Integer, Integer> writerA =
            manager.getWriter(
                dep.shuffleHandle(), 0L, contextA, contextA.taskMetrics().shuffleWriteMetrics());
        ShuffleWriter<Integer, Integer> writerB =
            manager.getWriter(
                dep.shuffleHandle(), 0L, contextB, contextB.taskMetrics().shuffleWriteMetrics());

        // A pushes its first batches, then waits until B has pushed everything and ended
        CountDownLatch aPushed = new CountDownLatch(1);
        CountDownLatch bEnded = new CountDownLatch(1);
        Future<Option<MapStatus>> a =
            threads.submit(
                () -> {
                  TaskContext$.MODULE$.setTaskContext(contextA);
                  writerA.write(
                      JavaConverters.asScalaIterator(new HeldRecords(0, servers, aPushed, bEnded)));
                  return writerA.stop(true);
                });
        assertThat(aPushed.await(60, TimeUnit.SECONDS)).as("A pushed a batch").isTrue();
        Future<Option<MapStatus>> b =
            threads.submit(
                () -> {
                  TaskContext$.MODULE$.setTaskContext(contextB);
                  writerB.write(JavaConverters.asScalaIterator(records(RECORDS).iterator()));
                  return writerB.stop(true);
                });
        Option<MapStatus> statusB = b.get(60, TimeUnit.SECONDS);
        bEnded.countDown();
        Option<MapStatus> statusA = a.get(60, TimeUnit.SECONDS);
        assertThat(statusA.isDefined()).isTrue();
        assertThat(statusB.isDefined()).isTrue();
        // as Spark's test asserts: both attempts' output is at one location
        assertThat(statusA.get().location()).isEqualTo(statusB.get().location());

        // as Spark would: the status of the attempt that finished first counts (here B), and
        // then, as a rerun of the stage might, A's
        tracker.registerMapOutput(dep.shuffleId(), 0, statusB.get());
        assertThat(read(manager, dep, memory)).isEqualTo(expected(RECORDS, 0));
        tracker.registerMapOutput(dep.shuffleId(), 0, statusA.get());
        assertThat(read(manager, dep, memory)).isEqualTo(expected(RECORDS, 1_000_000));
      } finally {
        threads.shutdownNow();
        TaskContext$.MODULE$.unset();
        spark.stop();
      }
    }
  }

  private static TaskContextImpl context(TaskMemoryManager memory, long taskAttemptId) {
    // stage 0, stage attempt 0, partition 0, attempt number 0 for both attempts
    return new TaskContextImpl(
        0,
        0,
        0,
        taskAttemptId,
        0,
        1,
        memory,
        new Properties(),
        SparkEnv.get().metricsSystem(),
        TaskMetrics$.MODULE$.empty(),
        1,
        scala.collection.immutable.Map$.MODULE$.empty());
  }

  /** Attempt B's records: keys 0..n-1, each with its key as value. */
  private static List<Product2<Integer, Integer>> records(int n) {
    List<Product2<Integer, Integer>> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      out.add(new Tuple2<>(i, i));
    }
    return out;
  }

  /** The values read back, sorted; attempt A's values are its keys plus one million. */
  private static List<Integer> expected(int n, int offset) {
    List<Integer> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      out.add(i + offset);
    }
    return out;
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private static List<Integer> read(
      ShuffleManager manager, ShuffleDependency<Integer, Integer, Integer> dep, TaskMemoryManager m)
      throws Exception {
    TaskContextImpl context = context(m, 2L);
    TaskContext$.MODULE$.setTaskContext(context);
    try {
      scala.collection.Iterator<Product2<Integer, Integer>> it =
          (scala.collection.Iterator)
              manager
                  .getReader(
                      dep.shuffleHandle(),
                      0,
                      1,
                      context,
                      context.taskMetrics().createTempShuffleReadMetrics())
                  .read();
      List<Integer> values = new ArrayList<>();
      while (it.hasNext()) {
        values.add(it.next()._2());
      }
      values.sort(null);
      return values;
    } finally {
      TaskContext$.MODULE$.unset();
    }
  }

  /**
   * Attempt A's records (values one million above B's, so the two outputs differ): after the first
   * quarter it waits until the server received bytes, says so, and holds the rest until B has
   * ended.
   */
  private static final class HeldRecords implements java.util.Iterator<Product2<Integer, Integer>> {
    private final SluiceServers servers;
    private final CountDownLatch pushed;
    private final CountDownLatch release;
    private int next;

    HeldRecords(int first, SluiceServers servers, CountDownLatch pushed, CountDownLatch release) {
      this.next = first;
      this.servers = servers;
      this.pushed = pushed;
      this.release = release;
    }

    @Override
    public boolean hasNext() {
      return next < RECORDS;
    }

    @Override
    public Product2<Integer, Integer> next() {
      if (next == RECORDS / 4) {
        try {
          long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
          while (bytesPushed() == 0 && System.nanoTime() < deadline) {
            Thread.sleep(10);
          }
          pushed.countDown();
          release.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException(e);
        }
      }
      int key = next++;
      return new Tuple2<>(key, key + 1_000_000);
    }

    private long bytesPushed() {
      return servers
          .all()
          .get(0)
          .metrics()
          .registry()
          .meter("sluice.server.bytesPushed")
          .getCount();
    }
  }
}
