package io.sluice.e2e.spark;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerExecutorRemoved;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import scala.Tuple2;

/**
 * Executors are stateless: with dynamic allocation on and no external shuffle service (allowed
 * because the Sluice shuffle IO plugin declares reliable storage), every executor goes away between
 * the map stage and a later job that reads its output, and the map output is still there without
 * rerunning a single map.
 */
class SparkDynamicAllocationIT {
  @TempDir Path tmp;

  private static JavaPairRDD<Integer, Long> sums(SparkSession spark) {
    return Jobs.jsc(spark)
        .parallelize(Jobs.range(20_000), 4)
        .mapToPair(i -> new Tuple2<>(i % 41, (long) i))
        .reduceByKey(Long::sum, 3);
  }

  /** Counts executors removed. */
  private static final class Removals extends SparkListener {
    final AtomicInteger removed = new AtomicInteger();

    @Override
    public void onExecutorRemoved(SparkListenerExecutorRemoved event) {
      removed.incrementAndGet();
    }
  }

  @Test
  void executorsReleasedBetweenStagesLoseNoMapOutput() throws Exception {
    SparkSession builtin = SparkSessions.builtin("SparkDynamicAllocationIT");
    List<String> expected;
    try {
      expected = Jobs.sorted(Jobs.strings(sums(builtin).collect()));
    } finally {
      builtin.stop();
    }

    try (SluiceServers servers = new SluiceServers(tmp, 1)) {
      SparkSession spark =
          SparkSessions.sluice(
              "SparkDynamicAllocationIT",
              servers.list(),
              Map.of(
                  "spark.dynamicAllocation.enabled", "true",
                  "spark.dynamicAllocation.shuffleTracking.enabled", "false",
                  "spark.shuffle.service.enabled", "false",
                  "spark.dynamicAllocation.minExecutors", "0",
                  "spark.dynamicAllocation.initialExecutors", "2",
                  "spark.dynamicAllocation.maxExecutors", "2",
                  "spark.dynamicAllocation.executorIdleTimeout", "1s",
                  "spark.dynamicAllocation.schedulerBacklogTimeout", "1s"));
      try {
        Removals removals = new Removals();
        TaskFailureCounter tasks = new TaskFailureCounter();
        spark.sparkContext().addSparkListener(removals);
        spark.sparkContext().addSparkListener(tasks);

        JavaPairRDD<Integer, Long> sums = sums(spark);
        assertThat(sums.count()).isEqualTo(41); // map stage + a reduce stage

        // idle executors go: wait (bounded) until both were removed
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (removals.removed.get() < 2 && System.nanoTime() < deadline) {
          Thread.sleep(100);
        }
        assertThat(removals.removed.get()).as("executors removed while idle").isEqualTo(2);
        spark.sparkContext().listenerBus().waitUntilEmpty();
        tasks.reset();

        // a new job on new executors reads the same shuffle: no map reruns
        assertThat(Jobs.sorted(Jobs.strings(sums.collect()))).isEqualTo(expected);
        spark.sparkContext().listenerBus().waitUntilEmpty();
        assertThat(tasks.shuffleMapTasks.get()).isZero();
        assertThat(tasks.failedTasks.get()).isZero();
      } finally {
        spark.stop();
      }
    }
  }
}
