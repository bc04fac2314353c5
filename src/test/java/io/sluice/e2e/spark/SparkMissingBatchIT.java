package io.sluice.e2e.spark;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sluice.protocol.BatchFormat;
import io.sluice.testutil.SplitFileBytes;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.spark.FetchFailed;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import scala.Tuple2;

/**
 * A whole batch that goes missing from a committed shuffle file does not change a Spark job's
 * result: the reader compares what it read of each map with the map's integrity record (batches,
 * bytes, checksum), fails the reduce task with a {@code FetchFailedException}, and Spark reruns the
 * map stage. Between two collects of an aggregated RDD, one map's batch in a committed split file
 * is overwritten with a copy of another map's batch of the same size: every batch left passes its
 * CRC32C, and the copy is a duplicate the reader drops, so before integrity records the job
 * silently lost that map's partial sums.
 */
class SparkMissingBatchIT {
  @TempDir Path tmp;

  private static JavaPairRDD<Integer, Long> sums(SparkSession spark) {
    return Jobs.jsc(spark)
        .parallelize(Jobs.range(20_000), 4)
        .mapToPair(i -> new Tuple2<>(i % 53, (long) i))
        .reduceByKey(Long::sum, 3);
  }

  private static final class FetchFailures extends SparkListener {
    final List<String> messages = new CopyOnWriteArrayList<>();

    @Override
    public void onTaskEnd(SparkListenerTaskEnd end) {
      if (end.reason() instanceof FetchFailed) {
        messages.add(((FetchFailed) end.reason()).message());
      }
    }
  }

  private static List<Path> splitFiles(Path root) throws IOException {
    try (Stream<Path> files = Files.walk(root)) {
      return files
          .filter(p -> p.getFileName().toString().matches("\\d+-\\d+\\.data"))
          .sorted(Comparator.comparing(Path::toString))
          .collect(Collectors.toList());
    }
  }

  /**
   * Overwrites a batch of one map with a copy of a batch of another map of the same size, keeping
   * the file otherwise as it was.
   *
   * @return the map whose batch is gone, or -1 when {@code file} has no such pair
   */
  private static int dropABatch(Path file) throws IOException {
    byte[] bytes = Files.readAllBytes(file);
    ByteBuf b = Unpooled.wrappedBuffer(bytes);
    List<Integer> offsets = new ArrayList<>();
    int end = SplitFileBytes.dataLength(bytes); // the map-run trailer follows
    for (int pos = 0; pos < end; pos += BatchFormat.HEADER_SIZE + BatchFormat.length(b, pos)) {
      assertThat(BatchFormat.headerProblem(b, pos, end - pos)).isNull();
      offsets.add(pos);
    }
    for (int victim : offsets) {
      for (int donor : offsets) {
        if (BatchFormat.mapIndex(b, donor) != BatchFormat.mapIndex(b, victim)
            && BatchFormat.length(b, donor) == BatchFormat.length(b, victim)) {
          int map = BatchFormat.mapIndex(b, victim);
          System.arraycopy(
              bytes, donor, bytes, victim, BatchFormat.HEADER_SIZE + BatchFormat.length(b, donor));
          Files.write(file, bytes);
          return map;
        }
      }
    }
    return -1;
  }

  @Test
  void aBatchMissingFromACommittedFileIsReadThroughAStageRetryWithTheBuiltinResult()
      throws Exception {
    SparkSession builtin = SparkSessions.builtin("SparkMissingBatchIT");
    List<String> expected;
    try {
      expected = Jobs.sorted(Jobs.strings(sums(builtin).collect()));
    } finally {
      builtin.stop();
    }

    Path root = tmp.resolve("sluice");
    try (SluiceServers servers = new SluiceServers(root, 2)) {
      SparkSession spark =
          SparkSessions.sluice(
              "SparkMissingBatchIT",
              servers.list(),
              Map.of("spark.sluice.push.compression", "none"));
      try {
        TaskFailureCounter tasks = new TaskFailureCounter();
        FetchFailures fetchFailures = new FetchFailures();
        spark.sparkContext().addSparkListener(tasks);
        spark.sparkContext().addSparkListener(fetchFailures);
        JavaPairRDD<Integer, Long> sums = sums(spark);
        assertThat(Jobs.sorted(Jobs.strings(sums.collect()))).isEqualTo(expected);

        Path victim = null;
        int map = -1;
        for (Path file : splitFiles(root)) {
          map = dropABatch(file);
          if (map >= 0) {
            victim = file;
            break;
          }
        }
        assertThat(victim).as("a committed split file with two maps' batches").isNotNull();
        spark.sparkContext().listenerBus().waitUntilEmpty();
        tasks.reset();

        assertThat(Jobs.sorted(Jobs.strings(sums.collect()))).isEqualTo(expected);

        spark.sparkContext().listenerBus().waitUntilEmpty();
        assertThat(tasks.fetchFailures.get()).as("fetch failures").isPositive();
        assertThat(tasks.retriedStages.get()).as("stage attempts after the first").isPositive();
        String name = victim.getFileName().toString();
        String partition = name.substring(0, name.indexOf('-'));
        int lost = map;
        assertThat(fetchFailures.messages)
            .as("fetch failures after dropping a batch of map %d from %s", lost, victim)
            .anyMatch(
                m ->
                    m.contains("Map " + lost + " attempt ")
                        && m.contains(" partition " + partition + " reported ")
                        && m.contains("/" + name));
      } finally {
        spark.stop();
      }
    }
  }
}
