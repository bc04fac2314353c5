package io.sluice.e2e.flink;

import static io.sluice.e2e.flink.FlinkJobs.CONSUMER;
import static io.sluice.e2e.flink.FlinkJobs.PRODUCER;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sluice.e2e.flink.FlinkJobs.Runs;
import io.sluice.e2e.flink.FlinkJobs.Sum;
import io.sluice.protocol.MapBlockFormat;
import io.sluice.testutil.TestCluster;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A byte that changes in a committed map partition file after its producer finished does not change
 * a Flink job's result: the consumer that reads the block fails its checksum check, the input gate
 * reports a {@code PartitionNotFoundException} of that producer's partition, Flink runs the
 * producer again, and the job returns the result of Flink's built-in shuffle. The job is {@link
 * FlinkJobs#sumPerKey} with four producers and two consumers, uncompressed ({@code
 * sluice.push.compression: none}), so without checksums the flipped bit went into a sum.
 *
 * <p>Deterministic timing: the first consumer attempt to open (every producer has finished: the
 * exchange is blocking) flips one bit in the first record of producer 0's data file before any
 * consumer reads; every first-attempt consumer waits in {@code open()} until that is done. With the
 * readers' check turned off, the job returns 32 results instead of the built-in shuffle's 31.
 */
class FlinkCorruptedPartitionIT {
  @TempDir Path tmp;

  /** The servers the running job uses, for its operators (the MiniCluster runs in this JVM). */
  private static volatile TestCluster servers;

  private static String corrupted;

  @Test
  void aCorruptedMapPartitionIsRecomputedByRunningItsProducerAgain() throws Exception {
    List<String> expected;
    MiniCluster builtin = FlinkHarness.builtin();
    try {
      expected = FlinkHarness.collectSorted(job(FlinkHarness.batch(builtin, 2), new Sum()));
    } finally {
      builtin.close();
    }

    Runs.clear();
    synchronized (FlinkCorruptedPartitionIT.class) {
      corrupted = null;
    }
    servers = TestCluster.start(tmp.resolve("sluice"), 2);
    try {
      Configuration settings = new Configuration();
      settings.setString("sluice.push.compression", "none");
      MiniCluster flink = FlinkHarness.sluice(servers, settings);
      try {
        List<String> result =
            FlinkHarness.collectSorted(
                job(FlinkHarness.batch(flink, 2), new CorruptProducerZeroOnOpen()));

        assertThat(result).hasSize(31).isEqualTo(expected);
        synchronized (FlinkCorruptedPartitionIT.class) {
          assertThat(corrupted).as("the file the consumers found corrupted").isNotNull();
        }
        // producer 0 ran again; the other producers' output was read as it was
        assertThat(Runs.attempts(PRODUCER)).contains("0/0", "0/1", "1/0", "2/0", "3/0");
        assertThat(Runs.attempts(PRODUCER)).doesNotContain("1/1", "2/1", "3/1");
        assertThat(Runs.attempts(CONSUMER)).hasSizeGreaterThan(2);
      } finally {
        flink.close();
      }
    } finally {
      servers.close();
      servers = null;
    }
  }

  private static org.apache.flink.streaming.api.datastream.DataStream<String> job(
      org.apache.flink.streaming.api.environment.StreamExecutionEnvironment env, Sum sum) {
    return FlinkJobs.sumPerKey(env, 4, 2, sum);
  }

  /**
   * Flips the lowest bit of the last byte of the first record of producer 0's data file (shuffle 0,
   * the producers' data set: {@code map-0-0.data}), once; later calls wait for it.
   */
  private static synchronized void corruptProducerZeroOnce() throws IOException {
    if (corrupted != null) {
      return;
    }
    Path file;
    try (Stream<Path> files = Files.walk(servers.root())) {
      List<Path> found =
          files
              .filter(p -> p.getFileName().toString().equals("map-0-0.data"))
              .filter(p -> p.getParent().getFileName().toString().equals("0"))
              .collect(Collectors.toList());
      assertThat(found).as("producer 0's data file").hasSize(1);
      file = found.get(0);
    }
    try (FileChannel ch =
        FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      ByteBuffer header = ByteBuffer.allocate(MapBlockFormat.HEADER_SIZE);
      ch.read(header, 0);
      ByteBuf h = Unpooled.wrappedBuffer(header.array());
      assertThat(MapBlockFormat.headerProblem(h, 0, (int) ch.size())).isNull();
      assertThat(MapBlockFormat.kind(h, 0)).isEqualTo(MapBlockFormat.KIND_DATA);
      assertThat(MapBlockFormat.length(h, 0)).isGreaterThanOrEqualTo(20);
      // byte 19 of the payload lies in the first serialized Tuple2<Long, Long>: without
      // checksums the flipped bit silently changes a key or a value of the result
      long at = MapBlockFormat.HEADER_SIZE + 19;
      ByteBuffer b = ByteBuffer.allocate(1);
      ch.read(b, at);
      b.put(0, (byte) (b.get(0) ^ 1));
      b.rewind();
      ch.write(b, at);
    }
    corrupted = file.toString();
  }

  /** The first attempt of each consumer: the data file is corrupted before any consumer reads. */
  static final class CorruptProducerZeroOnOpen extends Sum {
    private static final long serialVersionUID = 1L;

    @Override
    public void open(OpenContext openContext) throws Exception {
      super.open(openContext);
      if (FlinkJobs.attempt(getRuntimeContext()) == 0) {
        corruptProducerZeroOnce();
      }
    }
  }
}
