package io.sluice.e2e.spark;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sluice.protocol.BatchFormat;
import io.sluice.testutil.SplitFileBytes;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
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
 * A byte that changes in a committed shuffle file on a Sluice server does not change a Spark job's
 * result: the reader's checksum check fails the reduce task with a {@code FetchFailedException}, so
 * Spark reruns the map stage (into a new Sluice generation) and the job returns what it returns on
 * the built-in shuffle. The job collects an aggregated RDD twice; between the two collects one
 * payload bit of a committed split file is flipped (the lowest bit of a map's partial sum; batches
 * are uncompressed here), and the second collect reuses the shuffle (its map outputs are
 * registered) until the read fails. Without checksums that bit went into the result.
 */
class SparkCorruptedShuffleIT {
  @TempDir Path tmp;

  private static JavaPairRDD<Integer, Long> sums(SparkSession spark) {
    return Jobs.jsc(spark)
        .parallelize(Jobs.range(20_000), 4)
        .mapToPair(i -> new Tuple2<>(i % 53, (long) i))
        .reduceByKey(Long::sum, 3);
  }

  /** The messages of the fetch failures Spark saw. */
  private static final class FetchFailures extends SparkListener {
    final List<String> messages = new CopyOnWriteArrayList<>();

    @Override
    public void onTaskEnd(SparkListenerTaskEnd end) {
      if (end.reason() instanceof FetchFailed) {
        messages.add(((FetchFailed) end.reason()).message());
      }
    }
  }

  /** The committed split files ({@code <partition>-<epoch>.data}) under {@code root}. */
  private static List<Path> splitFiles(Path root) throws IOException {
    try (Stream<Path> files = Files.walk(root)) {
      return files
          .filter(p -> p.getFileName().toString().matches("\\d+-\\d+\\.data"))
          .sorted(Comparator.comparing(Path::toString))
          .collect(Collectors.toList());
    }
  }

  /**
   * The partial sums the four maps write for the keys of reduce partition {@code partition}: map
   * {@code m} holds numbers [5000m, 5000m + 5000), key {@code i % 53}, and the hash partitioner
   * sends key {@code k} to partition {@code k % 3}.
   */
  private static List<Long> partialSums(int partition) {
    List<Long> sums = new java.util.ArrayList<>();
    for (int m = 0; m < 4; m++) {
      for (int k = partition; k < 53; k += 3) {
        long sum = 0;
        for (int i = 5000 * m; i < 5000 * m + 5000; i++) {
          if (i % 53 == k) {
            sum += i;
          }
        }
        sums.add(sum);
      }
    }
    return sums;
  }

  /**
   * Flips the lowest bit of a map's partial sum in a committed split file: the payload is
   * uncompressed Java serialization, which writes a {@code Long} as its 8 big-endian bytes, so
   * without checksums the reducer would add a sum off by one and the job's result would be wrong
   * without any error.
   *
   * @return the offset of the flipped byte, or -1 when no partial sum is found in {@code file}
   */
  private static long flipAPartialSum(Path file) throws IOException {
    String name = file.getFileName().toString();
    int partition = Integer.parseInt(name.substring(0, name.indexOf('-')));
    byte[] bytes = Files.readAllBytes(file);
    ByteBuf b = Unpooled.wrappedBuffer(bytes);
    assertThat(BatchFormat.headerProblem(b, 0, bytes.length)).isNull();
    int end = SplitFileBytes.dataLength(bytes);
    for (long sum : partialSums(partition)) {
      byte[] pattern = ByteBuffer.allocate(8).putLong(sum).array();
      for (int at = BatchFormat.HEADER_SIZE; at + 8 <= end; at++) {
        if (java.util.Arrays.equals(bytes, at, at + 8, pattern, 0, 8)) {
          long flipped = at + 7;
          try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(new byte[] {(byte) (bytes[at + 7] ^ 1)}), flipped);
          }
          return flipped;
        }
      }
    }
    return -1;
  }

  /** Flips the lowest bit of the first batch's batch id (header bytes 12-15): a header byte. */
  private static long flipAHeaderByte(Path file) throws IOException {
    long at = 15;
    byte[] bytes = Files.readAllBytes(file);
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
      ch.write(ByteBuffer.wrap(new byte[] {(byte) (bytes[(int) at] ^ 1)}), at);
    }
    return at;
  }

  /**
   * Cuts the last 7 bytes off the file: the end of its last batch's payload, so the file now ends
   * inside a batch and holds fewer bytes than its commit recorded.
   *
   * @return the file's new length
   */
  private static long truncateInsideTheLastBatch(Path file) throws IOException {
    byte[] bytes = Files.readAllBytes(file);
    ByteBuf b = Unpooled.wrappedBuffer(bytes);
    int last = 0;
    int end = SplitFileBytes.dataLength(bytes); // the map-run trailer follows
    for (int pos = 0; pos < end; pos += BatchFormat.HEADER_SIZE + BatchFormat.length(b, pos)) {
      assertThat(BatchFormat.headerProblem(b, pos, end - pos)).isNull();
      last = pos;
    }
    if (BatchFormat.length(b, last) <= 7) {
      return -1;
    }
    long size = end - 7;
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
      ch.truncate(size);
    }
    return size;
  }

  @Test
  void aCorruptedCommittedFileIsReadThroughAStageRetryWithTheBuiltinResult() throws Exception {
    runWithDamage(
        "a payload bit",
        SparkCorruptedShuffleIT::flipAPartialSum,
        m -> m.contains("CRC32C") && m.contains("byte offset "));
  }

  @Test
  void aFlippedBatchHeaderByteIsReadThroughAStageRetryWithTheBuiltinResult() throws Exception {
    runWithDamage(
        "a batch header bit", SparkCorruptedShuffleIT::flipAHeaderByte, m -> m.contains("CRC32C"));
  }

  @Test
  void aTruncatedCommittedFileIsReadThroughAStageRetryWithTheBuiltinResult() throws Exception {
    // the server checks a chunk's end against the file on disk before it sends the chunk, and
    // answers with an error naming the file, both sizes and "truncated"
    runWithDamage(
        "the end of the file (truncated inside its last batch)",
        SparkCorruptedShuffleIT::truncateInsideTheLastBatch,
        m -> m.contains("truncated"));
  }

  /** Damages one committed split file; returns the offset damaged, or -1 to try the next file. */
  private interface Damage {
    long apply(Path file) throws IOException;
  }

  private void runWithDamage(
      String what, Damage damage, java.util.function.Predicate<String> namesIt) throws Exception {
    SparkSession builtin = SparkSessions.builtin("SparkCorruptedShuffleIT");
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
              "SparkCorruptedShuffleIT",
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
        long offset = -1;
        for (Path file : splitFiles(root)) {
          offset = damage.apply(file);
          if (offset >= 0) {
            victim = file;
            break;
          }
        }
        assertThat(victim).as("a committed split file to damage (%s)", what).isNotNull();
        spark.sparkContext().listenerBus().waitUntilEmpty();
        tasks.reset();

        // the map outputs are registered, so only the reduce stage runs; the corrupt batch fails
        // its read, and the fetch failure makes Spark rerun the maps into a new generation
        assertThat(Jobs.sorted(Jobs.strings(sums.collect()))).isEqualTo(expected);

        spark.sparkContext().listenerBus().waitUntilEmpty();
        assertThat(tasks.fetchFailures.get()).as("fetch failures").isPositive();
        assertThat(tasks.retriedStages.get()).as("stage attempts after the first").isPositive();
        assertThat(tasks.shuffleMapTasks.get()).as("map tasks rerun").isGreaterThanOrEqualTo(1);
        String partitionFile = root.relativize(victim).getFileName().toString();
        assertThat(fetchFailures.messages)
            .as("fetch failures after damaging %s at byte %d of %s", what, offset, victim)
            .anyMatch(m -> namesIt.test(m) && m.contains("/" + partitionFile));
      } finally {
        spark.stop();
      }
    }
  }
}
