package io.sluice.e2e.spark;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.server.ShuffleServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.spark.Success$;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import scala.Tuple2;

/**
 * Small shuffles on servers with the memory tier on (sluice.storage.policy=memory,local): every
 * split is committed in memory and every chunk read from there, no file is written, and the result
 * is the built-in shuffle's; when memory pressure writes the tier back in the middle of the reduce
 * stage, the rest is read from the files and nothing is lost.
 */
class SparkMemoryTierIT {
  private static final Duration BOUND = Duration.ofSeconds(100);

  @TempDir Path tmp;

  private static List<String> sums(SparkSession spark) {
    JavaPairRDD<Integer, Long> sums =
        Jobs.jsc(spark)
            .parallelize(Jobs.range(40_000), 4)
            .mapToPair(i -> new Tuple2<>(i % 97, (long) i))
            .reduceByKey(Long::sum, 8);
    return Jobs.sorted(Jobs.strings(sums.collect()));
  }

  @Test
  void smallShufflesAreServedFromMemoryAndAWriteBackMidReadLosesNothing() throws Exception {
    SparkSession builtin = SparkSessions.builtin("SparkMemoryTierIT");
    List<String> expected;
    try {
      expected = sums(builtin);
    } finally {
      builtin.stop();
    }
    try (SluiceServers servers =
        new SluiceServers(
            tmp,
            2,
            Map.of(
                "sluice.storage.policy",
                "memory,local",
                "sluice.storage.memory.maxSplitSize",
                "4m"))) {
      SparkSession spark = SparkSessions.sluice("SparkMemoryTierIT", servers.list(), Map.of());
      try {
        assertThat(BoundedQuery.run(spark, () -> sums(spark), BOUND)).isEqualTo(expected);
        long commits = 0;
        long reads = 0;
        long flushed = 0;
        for (ShuffleServer s : servers.all()) {
          commits += s.metrics().memoryTierCommits().getCount();
          reads += s.metrics().memoryTierReads().getCount();
          flushed += s.metrics().bytesFlushed().getCount();
        }
        assertThat(commits).as("splits committed in memory").isEqualTo(8);
        assertThat(reads).as("chunks read from memory").isGreaterThanOrEqualTo(8);
        assertThat(flushed).as("bytes written to files").isZero();

        // the next job: memory pressure writes the tier back once the first reducer ended
        WriteBackAfterFirstReducer writeBack = new WriteBackAfterFirstReducer(servers);
        spark.sparkContext().addSparkListener(writeBack);
        assertThat(BoundedQuery.run(spark, () -> sums(spark), BOUND)).isEqualTo(expected);
        spark.sparkContext().listenerBus().waitUntilEmpty();
        assertThat(writeBack.done).as("the tier was written back mid-read").isTrue();
        long writebacks = 0;
        for (ShuffleServer s : servers.all()) {
          writebacks += s.metrics().memoryTierWritebacks().getCount();
        }
        assertThat(writebacks).as("splits written back").isPositive();
      } finally {
        spark.stop();
      }
      for (ShuffleServer s : servers.all()) {
        assertThat(s.memory().held()).as("memory held after the application").isZero();
      }
    }
  }

  /** Hands every server's memory tier to its files when the first reduce task ends. */
  private static final class WriteBackAfterFirstReducer extends SparkListener {
    final AtomicBoolean done = new AtomicBoolean();
    private final SluiceServers servers;

    WriteBackAfterFirstReducer(SluiceServers servers) {
      this.servers = servers;
    }

    @Override
    public void onTaskEnd(SparkListenerTaskEnd end) {
      if (end.reason() == Success$.MODULE$
          && end.taskType().equals("ResultTask")
          && done.compareAndSet(false, true)) {
        for (ShuffleServer s : servers.all()) {
          s.registry().flushLargest(Long.MAX_VALUE);
        }
      }
    }
  }
}
