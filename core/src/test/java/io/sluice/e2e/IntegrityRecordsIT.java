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
import io.sluice.server.storage.DataDirectory;
import io.sluice.testutil.Records;
import io.sluice.testutil.SplitFileBytes;
import io.sluice.testutil.TestCluster;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Per (map attempt, partition) integrity records: a committed split file changed between the map
 * and the reduce stage so that every batch still passes its own CRC32C check (a batch replaced by a
 * copy of another one, which dedup then drops; a copy of another batch under the replaced one's id;
 * a batch of a losing attempt in its place) fails the read, naming the server, the file, the map
 * and the partition, because what was read no longer equals what the map reported. Per-batch
 * checksums cannot see any of these: each batch left is intact.
 */
class IntegrityRecordsIT {
  private static final int SHUFFLE = 0;
  private static final int RECORDS = 300;

  @TempDir Path tmp;

  /** {@code maps} maps each write {@link #RECORDS} records to partition 0, batches of ~1 KiB. */
  private static TestCluster startAndWrite(Path dir, int maps) throws Exception {
    return startAndWrite(dir, maps, Map.of());
  }

  private static TestCluster startAndWrite(Path dir, int maps, Map<String, String> more)
      throws Exception {
    Map<String, String> conf =
        new java.util.HashMap<>(
            Map.of(
                "sluice.push.compression", "none",
                "sluice.push.bufferSize", "1k",
                "sluice.read.chunkSize", "8k",
                "sluice.flush.size", "4k"));
    conf.putAll(more);
    TestCluster cluster = TestCluster.start(dir, 1, conf);
    cluster.coordinator().registerShuffle(SHUFFLE, maps, 1);
    for (int m = 0; m < maps; m++) {
      try (MapOutputPusher pusher = cluster.pusher(SHUFFLE, m, 0)) {
        for (int seq = 0; seq < RECORDS; seq++) {
          byte[] r = Records.record(m, 0, seq, 100);
          pusher.write(0, r, 0, r.length);
        }
        pusher.finish();
      }
    }
    cluster.coordinator().committed(SHUFFLE).get();
    return cluster;
  }

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
  private static List<Integer> batchOffsets(byte[] file) {
    ByteBuf bytes = Unpooled.wrappedBuffer(file);
    List<Integer> offsets = new ArrayList<>();
    int pos = 0;
    int end = SplitFileBytes.dataLength(ByteBufUtil.getBytes(bytes));
    while (pos < end) {
      assertThat(BatchFormat.headerProblem(bytes, pos, end - pos)).isNull();
      offsets.add(pos);
      pos += BatchFormat.HEADER_SIZE + BatchFormat.length(bytes, pos);
    }
    return offsets;
  }

  /**
   * The file indexes of the batches of {@code map} (any map when negative) with the largest size:
   * full batches. The server stores a partition's batches in the order they arrive, so the last,
   * shorter batch may be anywhere.
   */
  private static List<Integer> fullBatches(Path file, int map) throws IOException {
    byte[] bytes = Files.readAllBytes(file);
    ByteBuf buf = Unpooled.wrappedBuffer(bytes);
    List<Integer> offsets = batchOffsets(bytes);
    int max = 0;
    for (int at : offsets) {
      max = Math.max(max, BatchFormat.length(buf, at));
    }
    List<Integer> full = new ArrayList<>();
    for (int i = 0; i < offsets.size(); i++) {
      int at = offsets.get(i);
      if (BatchFormat.length(buf, at) == max && (map < 0 || BatchFormat.mapIndex(buf, at) == map)) {
        full.add(i);
      }
    }
    return full;
  }

  /** A full batch in the middle of the file (a later chunk than the first). */
  private static int victim(Path file) throws IOException {
    List<Integer> full = fullBatches(file, -1);
    return full.get(full.size() / 2);
  }

  /** Another full batch, before the victim. */
  private static int donor(Path file) throws IOException {
    List<Integer> full = fullBatches(file, -1);
    return full.get(full.size() / 2 - 3);
  }

  /**
   * Rewrites the file with the batch at index {@code victim} replaced by a copy of the batch at
   * {@code donor} (same length, so chunk boundaries stay), its header changed by {@code edit} and
   * sealed again: every batch of the file still passes its own checks.
   */
  private static void replaceBatch(Path file, int victim, int donor, HeaderEdit edit)
      throws IOException {
    byte[] bytes = Files.readAllBytes(file);
    List<Integer> offsets = batchOffsets(bytes);
    ByteBuf buf = Unpooled.wrappedBuffer(bytes);
    int at = offsets.get(victim);
    int from = offsets.get(donor);
    int length = BatchFormat.HEADER_SIZE + BatchFormat.length(buf, from);
    assertThat(BatchFormat.HEADER_SIZE + BatchFormat.length(buf, at))
        .as("victim and donor batches have the same size")
        .isEqualTo(length);
    int victimId = BatchFormat.batchId(buf, at);
    System.arraycopy(bytes, from, bytes, at, length);
    edit.apply(buf, at, victimId);
    BatchFormat.seal(buf, at);
    assertThat(BatchFormat.checksumProblem(buf, at)).isNull();
    Files.write(file, bytes);
  }

  private interface HeaderEdit {
    void apply(ByteBuf buf, int header, int victimId);
  }

  private static final class Read {
    final List<byte[]> batches = new ArrayList<>();
    IOException failure;
  }

  private static Read read(TestCluster cluster, int startMap, int endMap) throws Exception {
    Read read = new Read();
    try (PartitionReader reader = cluster.reader(SHUFFLE, 0, 1, startMap, endMap)) {
      try {
        for (ShuffleBatch b = reader.next(); b != null; b = reader.next()) {
          read.batches.add(b.payload());
        }
      } catch (IOException e) {
        read.failure = e;
        assertThat(catchThrowable(reader::next)).isSameAs(e);
      }
    }
    return read;
  }

  private static String server(TestCluster cluster) {
    return ClientContext.format(cluster.addresses().get(0));
  }

  @Test
  void anIntactShuffleReadsWholeAndUnchanged() throws Exception {
    try (TestCluster cluster = startAndWrite(tmp, 2)) {
      Read all = read(cluster, 0, 2);
      assertThat(all.failure).isNull();
      assertThat(all.batches).hasSize(batchOffsets(Files.readAllBytes(splitFile(cluster))).size());
      assertThat(read(cluster, 1, 2).failure).isNull();
    }
  }

  @Test
  void aBatchMissingFromACommittedFileFailsTheRead() throws Exception {
    try (TestCluster cluster = startAndWrite(tmp, 1)) {
      Path file = splitFile(cluster);
      int batches = batchOffsets(Files.readAllBytes(file)).size();
      // batch 5 becomes a second copy of batch 3: dedup drops it, so batch 5 is gone
      replaceBatch(file, victim(file), donor(file), (buf, at, id) -> {});

      Read read = read(cluster, 0, 1);

      assertThat(read.failure)
          .hasMessageContaining("Map 0 attempt 0 of")
          .hasMessageContaining("partition 0 reported " + batches + " batches")
          .hasMessageContaining("read " + (batches - 1) + " batches")
          .hasMessageContaining(TestCluster.APP_ID + "/0/0-0.data on " + server(cluster))
          .hasMessageContaining("missing");
    }
  }

  @Test
  void anotherBatchUnderTheReplacedOnesIdFailsTheRead() throws Exception {
    try (TestCluster cluster = startAndWrite(tmp, 1)) {
      Path file = splitFile(cluster);
      // batch 5's place holds batch 3's data under id 5: same count and bytes, another checksum
      replaceBatch(
          file,
          victim(file),
          donor(file),
          (buf, at, id) -> buf.setInt(at + BatchFormat.LENGTH_OFFSET - 4, id));

      Read read = read(cluster, 0, 1);

      assertThat(read.failure)
          .hasMessageContaining("Map 0 attempt 0 of")
          .hasMessageContaining("partition 0")
          .hasMessageContaining("checksum")
          .hasMessageContaining(server(cluster));
    }
  }

  @Test
  void aDuplicateUnderAFreshIdFailsBeforeItsRecordsComeOut() throws Exception {
    try (TestCluster cluster = startAndWrite(tmp, 1)) {
      Path file = splitFile(cluster);
      List<Integer> offsets = batchOffsets(Files.readAllBytes(file));
      int batches = offsets.size();
      int victim = victim(file);
      // batch 5's place holds batch 3 under an id the map never used
      replaceBatch(
          file,
          victim,
          donor(file),
          (buf, at, id) -> buf.setInt(at + BatchFormat.LENGTH_OFFSET - 4, batches + 7));

      Read read = read(cluster, 0, 1);

      assertThat(read.failure)
          .hasMessageContaining("byte offset " + offsets.get(victim) + " of " + TestCluster.APP_ID)
          .hasMessageContaining("batch id " + (batches + 7) + " of map 0 attempt 0")
          .hasMessageContaining("a batch it never wrote")
          .hasMessageContaining(server(cluster));
      // the batches before it came out, not it
      assertThat(read.batches).hasSize(victim);
    }
  }

  @Test
  void aBatchOfALosingAttemptInPlaceOfOneIsFilteredAndTheGapFailsTheRead() throws Exception {
    try (TestCluster cluster = startAndWrite(tmp, 1)) {
      Path file = splitFile(cluster);
      // batch 5's place holds a batch of attempt 1, which never won
      replaceBatch(file, victim(file), donor(file), (buf, at, id) -> buf.setInt(at + 8, 1));

      Read read = read(cluster, 0, 1);

      assertThat(read.failure)
          .hasMessageContaining("Map 0 attempt 0 of")
          .hasMessageContaining("partition 0")
          .hasMessageContaining(server(cluster));
    }
  }

  @Test
  void aMapRangeReadComparesOnlyTheMapsInRange() throws Exception {
    try (TestCluster cluster = startAndWrite(tmp, 2)) {
      Path file = splitFile(cluster);
      List<Integer> ofMap0 = fullBatches(file, 0);
      // a batch of map 0 becomes another copy of one of its batches
      replaceBatch(file, ofMap0.get(6), ofMap0.get(2), (b, at, id) -> {});

      Read map1 = read(cluster, 1, 2);
      Read map0 = read(cluster, 0, 1);
      Read all = read(cluster, 0, 2);

      assertThat(map1.failure).isNull();
      assertThat(map0.failure).hasMessageContaining("Map 0 attempt 0 of");
      assertThat(all.failure).hasMessageContaining("Map 0 attempt 0 of");
    }
  }

  /**
   * Readers report the failures to the server, which counts them per data directory and marks the
   * directory suspect after sluice.integrity.suspectAfter of them, without failing it.
   */
  @Test
  void readersReportFailuresAndTheDirectoryBecomesSuspect() throws Exception {
    try (TestCluster cluster =
        startAndWrite(tmp, 1, Map.of("sluice.integrity.suspectAfter", "2"))) {
      DataDirectory dir = cluster.server(0).dataDirectories().directoryOf(splitFile(cluster));
      assertThat(dir).isNotNull();
      replaceBatch(
          splitFile(cluster),
          victim(splitFile(cluster)),
          donor(splitFile(cluster)),
          (buf, at, id) -> {});

      assertThat(read(cluster, 0, 1).failure).isNotNull();
      awaitFailures(cluster, dir, 1);
      assertThat(dir.isSuspect()).isFalse();
      assertThat(read(cluster, 0, 1).failure).isNotNull();
      awaitFailures(cluster, dir, 2);

      assertThat(dir.isSuspect()).isTrue();
      assertThat(dir.health()).isEqualTo(DataDirectory.Health.HEALTHY);
      assertThat(cluster.server(0).metrics().checksumFailures().getCount()).isEqualTo(2);
      String prefix = "sluice.server.dir.";
      assertThat(cluster.server(0).metrics().registry().getGauges())
          .anySatisfy(
              (name, gauge) -> {
                assertThat(name).startsWith(prefix).endsWith(".suspect");
                assertThat(gauge.getValue()).isEqualTo(1);
              });
    }
  }

  /** Waits (bounded) for the reports, which readers send without waiting for their answer. */
  private static void awaitFailures(TestCluster cluster, DataDirectory dir, long count)
      throws InterruptedException {
    long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
    while (dir.checksumFailures() < count && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertThat(dir.checksumFailures()).isEqualTo(count);
  }

  @Test
  void aMapEndWithoutRecordsIsReadUnchecked() throws Exception {
    try (TestCluster cluster =
        TestCluster.start(
            tmp,
            1,
            Map.of(
                "sluice.push.compression", "none",
                "sluice.push.bufferSize", "1k",
                "sluice.read.chunkSize", "8k"))) {
      cluster.coordinator().registerShuffle(SHUFFLE, 1, 1);
      // a map reported without records (the call tests and older writers make)
      ByteBuf body = Unpooled.buffer();
      BatchFormat.writeBatch(body, 0, 0, 0, new byte[] {1, 2, 3});
      BatchFormat.writeBatch(body, 0, 0, 3, new byte[] {4, 5});
      cluster
          .context()
          .call(
              TestCluster.APP_ID,
              cluster.addresses().get(0),
              id ->
                  io.sluice.protocol.Messages.request(
                      io.sluice.protocol.MessageType.PUSH_DATA,
                      io.sluice.protocol.proto.PushData.newBuilder()
                          .setRequestId(id)
                          .setAppId(TestCluster.APP_ID)
                          .setShuffleId(SHUFFLE)
                          .setPartitionId(0)
                          .build(),
                      id,
                      body));
      cluster.coordinator().mapperEnd(SHUFFLE, 0, 0, List.of(cluster.addresses().get(0)));

      Read read = read(cluster, 0, 1);

      assertThat(read.failure).isNull();
      assertThat(read.batches).hasSize(2);
    }
  }
}
