package io.sluice.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.sluice.client.ClientContext;
import io.sluice.client.push.MapOutputPusher;
import io.sluice.client.read.PartitionReader;
import io.sluice.client.read.ShuffleBatch;
import io.sluice.protocol.BatchFormat;
import io.sluice.protocol.MessageType;
import io.sluice.protocol.Messages;
import io.sluice.protocol.StatusException;
import io.sluice.protocol.proto.PartitionLocation;
import io.sluice.protocol.proto.PushData;
import io.sluice.protocol.proto.Status;
import io.sluice.testutil.Records;
import io.sluice.testutil.SplitFileBytes;
import io.sluice.testutil.TestCluster;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every byte a reducer consumes is checked: a byte changed in a committed split file, in a batch's
 * payload or header, fails the read naming the server, the split, its file and the byte offset of
 * the batch, and no record of that batch is handed out (before checksums, a flipped payload byte
 * was read as data and a flipped batch id made the batch look like a duplicate, silently dropped).
 * And the optional check on receipt ({@code sluice.integrity.verifyOnPush}).
 */
class CorruptedSplitFileIT {
  private static final int SHUFFLE = 0;
  private static final int RECORDS = 400;

  @TempDir Path tmp;

  /** One map writes {@link #RECORDS} records to partition 0, in batches of about 1 KiB. */
  private static TestCluster startAndWrite(Path dir) throws Exception {
    TestCluster cluster =
        TestCluster.start(
            dir,
            1,
            Map.of(
                "sluice.push.compression", "none",
                "sluice.push.bufferSize", "1k",
                "sluice.read.chunkSize", "8k",
                "sluice.flush.size", "4k"));
    cluster.coordinator().registerShuffle(SHUFFLE, 1, 1);
    try (MapOutputPusher pusher = cluster.pusher(SHUFFLE, 0, 0)) {
      for (int seq = 0; seq < RECORDS; seq++) {
        byte[] r = Records.record(0, 0, seq, 100);
        pusher.write(0, r, 0, r.length);
      }
      pusher.finish();
    }
    return cluster;
  }

  /** The committed data file of partition 0, epoch 0, under the server's data directories. */
  private static Path splitFile(TestCluster cluster) throws IOException {
    try (Stream<Path> files = Files.walk(cluster.root())) {
      List<Path> found =
          files
              .filter(p -> p.getFileName().toString().equals("0-0.data"))
              .collect(Collectors.toList());
      assertThat(found).hasSize(1);
      return found.get(0);
    }
  }

  /** Byte offsets of the batches of a split file, in file order. */
  private static List<Long> batchOffsets(Path file) throws IOException {
    ByteBuf bytes = Unpooled.wrappedBuffer(Files.readAllBytes(file));
    List<Long> offsets = new ArrayList<>();
    int pos = 0;
    int end = SplitFileBytes.dataLength(ByteBufUtil.getBytes(bytes));
    while (pos < end) {
      assertThat(BatchFormat.headerProblem(bytes, pos, end - pos)).isNull();
      offsets.add((long) pos);
      pos += BatchFormat.HEADER_SIZE + BatchFormat.length(bytes, pos);
    }
    return offsets;
  }

  private static void flipBit(Path file, long offset, int bit) throws IOException {
    try (FileChannel ch =
        FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      ByteBuffer b = ByteBuffer.allocate(1);
      ch.read(b, offset);
      b.put(0, (byte) (b.get(0) ^ (1 << bit)));
      b.rewind();
      ch.write(b, offset);
    }
  }

  /** What one read of partition 0 handed out before it ended or failed. */
  private static final class Read {
    final List<byte[]> batches = new ArrayList<>();
    IOException failure;
  }

  private static Read read(TestCluster cluster) throws Exception {
    Read read = new Read();
    try (PartitionReader reader = cluster.reader(SHUFFLE, 0, 1, 0, 1)) {
      try {
        for (ShuffleBatch b = reader.next(); b != null; b = reader.next()) {
          read.batches.add(b.payload());
        }
      } catch (IOException e) {
        read.failure = e;
        // the reader stays failed: nothing of the corrupt batch or after it comes out
        assertThat(catchThrowable(reader::next)).isSameAs(e);
      }
    }
    return read;
  }

  private static String server(TestCluster cluster) {
    return ClientContext.format(cluster.addresses().get(0));
  }

  @Test
  void aFlippedPayloadByteFailsTheReadNamingFileAndOffsetAndYieldsNoRecordOfTheBatch()
      throws Exception {
    try (TestCluster cluster = startAndWrite(tmp)) {
      Read intact = read(cluster);
      assertThat(intact.failure).isNull();
      Path file = splitFile(cluster);
      List<Long> offsets = batchOffsets(file);
      assertThat(intact.batches).hasSize(offsets.size()).hasSizeGreaterThan(20);
      int victim = offsets.size() / 2; // in a later chunk than the first
      long at = offsets.get(victim);
      flipBit(file, at + BatchFormat.HEADER_SIZE + 37, 4);

      Read corrupt = read(cluster);

      assertThat(corrupt.failure)
          .hasMessageContaining("byte offset " + at + " of " + TestCluster.APP_ID + "/0/0-0.data")
          .hasMessageContaining("partition 0 epoch 0")
          .hasMessageContaining(server(cluster))
          .hasMessageContaining("chunk ")
          .hasMessageContaining("CRC32C")
          .hasMessageContaining("expected 0x")
          .hasMessageContaining("actual 0x");
      assertThat(corrupt.failure.getMessage()).doesNotContain("of chunk 0)");
      // exactly the batches before the corrupt one came out, none of it
      assertThat(corrupt.batches).hasSize(victim);
      for (int i = 0; i < victim; i++) {
        assertThat(corrupt.batches.get(i)).isEqualTo(intact.batches.get(i));
      }
    }
  }

  /**
   * A flipped bit in each field of a header: the magic, the version, the flags, the map index, the
   * attempt, the batch id (made equal to an earlier batch's: before checksums the batch was dropped
   * as a duplicate), the length and the checksum itself.
   */
  @Test
  void aFlippedHeaderByteFailsTheReadAndNeverDropsTheBatchSilently() throws Exception {
    try (TestCluster cluster = startAndWrite(tmp)) {
      Read intact = read(cluster);
      Path file = splitFile(cluster);
      byte[] original = Files.readAllBytes(file);
      List<Long> offsets = batchOffsets(file);
      int victim = offsets.size() / 2 + 1;
      long at = offsets.get(victim);
      ByteBuf header = Unpooled.wrappedBuffer(original, (int) at, BatchFormat.HEADER_SIZE);
      int batchId = BatchFormat.batchId(header, 0);
      int idBit = Integer.numberOfTrailingZeros(Integer.highestOneBit(batchId));
      int[][] flips = {
        {0, 0}, // magic
        {2, 1}, // version
        {3, 0}, // flags: "no checksum"
        {3, 5}, // flags: unknown
        {BatchFormat.MAP_INDEX_OFFSET + 3, 0},
        {11, 0}, // attempt
        {15 - idBit / 8, idBit % 8}, // batch id: now that of an earlier batch
        {BatchFormat.LENGTH_OFFSET + 3, 2}, // shorter
        {BatchFormat.LENGTH_OFFSET + 1, 3}, // longer than the chunk
        {BatchFormat.CHECKSUM_OFFSET + 2, 7},
      };
      for (int[] flip : flips) {
        Files.write(file, original);
        flipBit(file, at + flip[0], flip[1]);

        Read corrupt = read(cluster);

        assertThat(corrupt.failure)
            .as("header byte %d bit %d", flip[0], flip[1])
            .hasMessageContaining("byte offset " + at + " of " + TestCluster.APP_ID + "/0/0-0.data")
            .hasMessageContaining(server(cluster));
        assertThat(corrupt.batches).as("header byte %d bit %d", flip[0], flip[1]).hasSize(victim);
      }
      Files.write(file, original);
      assertThat(read(cluster).batches).hasSize(intact.batches.size());
    }
  }

  /**
   * A split file cut short on disk after its commit: the chunks still in the file are served, the
   * first chunk that ends past the cut is answered with an error naming the file and its sizes (it
   * used to close the connection midway through sendfile), the connection keeps serving, and the
   * server counts the damage against the file's directory.
   */
  @Test
  void aTruncatedFileFailsTheReadNamingTheFileAndTheConnectionKeepsServing() throws Exception {
    try (TestCluster cluster = startAndWrite(tmp)) {
      Read intact = read(cluster);
      Path file = splitFile(cluster);
      long size = SplitFileBytes.dataLength(Files.readAllBytes(file)); // what its commit recorded
      List<Long> offsets = batchOffsets(file);
      int victim = offsets.size() / 2;
      long cut = offsets.get(victim) + BatchFormat.HEADER_SIZE + 10;
      try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
        ch.truncate(cut);
      }

      Read truncated = read(cluster);

      assertThat(truncated.failure)
          .hasMessageContaining(file.toString())
          .hasMessageContaining("holds " + cut + " bytes")
          .hasMessageContaining("its commit recorded " + size)
          .hasMessageContaining("truncated")
          .hasMessageContaining(server(cluster));
      assertThat(truncated.batches).hasSizeLessThanOrEqualTo(victim);
      for (int i = 0; i < truncated.batches.size(); i++) {
        assertThat(truncated.batches.get(i)).isEqualTo(intact.batches.get(i));
      }
      assertThat(cluster.server(0).metrics().checksumFailures().getCount()).isEqualTo(1);
      // the same server still serves: another shuffle written now reads back whole
      cluster.coordinator().registerShuffle(SHUFFLE + 1, 1, 1);
      try (MapOutputPusher pusher = cluster.pusher(SHUFFLE + 1, 0, 0)) {
        byte[] r = Records.record(0, 0, 0, 100);
        pusher.write(0, r, 0, r.length);
        pusher.finish();
      }
      try (PartitionReader reader = cluster.reader(SHUFFLE + 1, 0, 1, 0, 1)) {
        assertThat(reader.next()).isNotNull();
        assertThat(reader.next()).isNull();
      }
    }
  }

  private static void push(TestCluster cluster, PartitionLocation location, ByteBuf body)
      throws Exception {
    cluster
        .context()
        .call(
            null,
            location.getServer(),
            id ->
                Messages.request(
                    MessageType.PUSH_DATA,
                    PushData.newBuilder()
                        .setRequestId(id)
                        .setAppId(TestCluster.APP_ID)
                        .setShuffleId(SHUFFLE)
                        .setPartitionId(0)
                        .setEpoch(location.getEpoch())
                        .build(),
                    id,
                    body));
  }

  @Test
  void verifyOnPushRefusesACorruptBatchNamingBatchAndPartition() throws Exception {
    try (TestCluster cluster =
        TestCluster.start(tmp, 1, Map.of("sluice.integrity.verifyOnPush", "true"))) {
      cluster.coordinator().registerShuffle(SHUFFLE, 2, 1);
      PartitionLocation location = cluster.coordinator().locations(SHUFFLE).location(0);
      ByteBuf good = Unpooled.buffer();
      BatchFormat.writeBatch(good, 0, 0, 0, new byte[] {1, 2, 3});
      ByteBuf bad = Unpooled.buffer();
      BatchFormat.writeBatch(bad, 1, 0, 4, new byte[] {4, 5, 6, 7});
      bad.setByte(bad.writerIndex() - 2, 0);
      ByteBuf body = Unpooled.wrappedBuffer(good.retainedDuplicate(), bad);

      StatusException refused =
          (StatusException) catchThrowable(() -> push(cluster, location, body));

      assertThat(refused.status()).isEqualTo(Status.BAD_REQUEST);
      assertThat(refused)
          .hasMessageContaining("partition 0 epoch 0")
          .hasMessageContaining("batch 1 (map 1 attempt 0 batch id 4, at byte 27 of the body)")
          .hasMessageContaining("CRC32C")
          .hasMessageContaining("sluice.integrity.verifyOnPush");
      assertThat(cluster.server(0).metrics().checksumFailures().getCount()).isEqualTo(1);
      // batches as pushers build them pass
      push(cluster, location, good);
      try (MapOutputPusher pusher = cluster.pusher(SHUFFLE, 1, 0)) {
        byte[] r = Records.record(1, 0, 0, 5000);
        pusher.write(0, r, 0, r.length);
        pusher.finish();
      }
      assertThat(cluster.server(0).metrics().checksumFailures().getCount()).isEqualTo(1);
    }
  }

  @Test
  void withoutVerifyOnPushTheServerTakesACorruptBatchAndItsReaderFails() throws Exception {
    try (TestCluster cluster = TestCluster.start(tmp, 1)) {
      cluster.coordinator().registerShuffle(SHUFFLE, 1, 1);
      PartitionLocation location = cluster.coordinator().locations(SHUFFLE).location(0);
      ByteBuf bad = Unpooled.buffer();
      BatchFormat.writeBatch(bad, 0, 0, 0, new byte[] {4, 5, 6, 7});
      bad.setByte(BatchFormat.HEADER_SIZE, 9);
      push(cluster, location, bad);
      cluster.coordinator().mapperEnd(SHUFFLE, 0, 0, List.of(location.getServer()));

      Read read = read(cluster);

      assertThat(read.batches).isEmpty();
      assertThat(read.failure)
          .hasMessageContaining("byte offset 0 of")
          .hasMessageContaining("CRC32C");
      // the server took it unchecked; the reader then reports the failure (without waiting for
      // the answer), which the server counts
      long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
      while (cluster.server(0).metrics().checksumFailures().getCount() == 0
          && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      assertThat(cluster.server(0).metrics().checksumFailures().getCount()).isEqualTo(1);
    }
  }
}
