package io.sluice.server.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.codahale.metrics.MetricRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.sluice.common.SluiceConf;
import io.sluice.protocol.BatchFormat;
import io.sluice.protocol.ChunkExtents;
import io.sluice.protocol.MapRunIndex;
import io.sluice.protocol.proto.Status;
import io.sluice.server.ServerConf;
import io.sluice.server.ServerMetrics;
import io.sluice.server.memory.MemoryBudget;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ReducePartitionSplitTest {
  @TempDir Path tmp;
  private MemoryBudget memory;
  private DataDirectories dirs;

  @BeforeEach
  void setUp() throws Exception {
    ServerConf conf =
        new ServerConf(
            SluiceConf.of(
                Map.of(
                    "sluice.server.dirs", tmp.resolve("a") + "," + tmp.resolve("b"),
                    "sluice.flush.size", "1k",
                    "sluice.read.chunkSize", "4k",
                    "sluice.memory.max", "4m")));
    memory = new MemoryBudget(conf.memoryMax());
    dirs = new DataDirectories(conf, memory, new ServerMetrics(new MetricRegistry(), memory));
  }

  @AfterEach
  void tearDown() {
    dirs.close();
  }

  private ByteBuf body(int map, int batchId, int payload) {
    ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer();
    BatchFormat.writeHeader(b, map, 0, batchId, payload);
    b.writeBytes(new byte[payload]);
    return b;
  }

  private Status append(ReducePartitionSplit split, ByteBuf body) {
    assertThat(memory.tryReserve(body.readableBytes())).isTrue();
    Status s = split.append(body);
    if (s != Status.OK) {
      memory.release(body.readableBytes());
      body.release();
    }
    return s;
  }

  @Test
  void writesEachSegmentInMapOrderWithChunkBoundariesOnBatchBoundaries() throws Exception {
    ReducePartitionSplit split = dirs.newSplit(new SplitKey("app", 1, 2, 0));
    long offset = 0;
    for (int i = 0; i < 40; i++) {
      int payload = 100 + i * 37;
      offset += BatchFormat.HEADER_SIZE + payload;
      // maps interleaved, several batches per 1 KiB flush
      assertThat(append(split, body(2 - i % 3, i, payload))).isEqualTo(Status.OK);
    }
    CommittedSplitFile file = split.commit().get(1, TimeUnit.MINUTES);
    assertThat(memory.held()).isZero();
    assertThat(file.length()).isEqualTo(offset);
    assertThat(Files.size(file.path())).isGreaterThan(offset); // the map-run trailer
    assertThat(file.path().getFileName().toString()).isEqualTo("2-0.data");
    assertThat(file.mapIndexes().toRuns()).containsExactly(0, 3);

    // every batch is there once; one map's batches keep their order
    ByteBuffer content = ByteBuffer.wrap(Files.readAllBytes(file.path()));
    List<Long> batchStarts = new ArrayList<>();
    List<Integer> maps = new ArrayList<>();
    List<Integer> ids = new ArrayList<>();
    for (long pos = 0; pos < offset; ) {
      batchStarts.add(pos);
      maps.add(content.getInt((int) pos + BatchFormat.MAP_INDEX_OFFSET));
      ids.add(content.getInt((int) pos + 12));
      pos += BatchFormat.HEADER_SIZE + content.getInt((int) pos + BatchFormat.LENGTH_OFFSET);
    }
    assertThat(ids)
        .containsExactlyInAnyOrderElementsOf(
            java.util.stream.IntStream.range(0, 40)
                .boxed()
                .collect(java.util.stream.Collectors.toList()));
    for (int m = 0; m < 3; m++) {
      List<Integer> ofMap = new ArrayList<>();
      for (int k = 0; k < ids.size(); k++) {
        if (maps.get(k) == m) {
          ofMap.add(ids.get(k));
        }
      }
      assertThat(ofMap).isSorted().hasSize(m == 2 ? 14 : 13);
    }
    // segments were reordered: the file is not in push order, yet ranges are few pieces
    assertThat(maps.get(0)).isNotEqualTo(2);
    MapRunIndex index = MapRunIndex.read(file.path(), file.length());
    ChunkExtents map1 = index.range(1, 2, 4096);
    long map1Bytes = 0;
    for (int k = 0; k < ids.size(); k++) {
      if (maps.get(k) == 1) {
        map1Bytes += BatchFormat.HEADER_SIZE + 100 + ids.get(k) * 37;
      }
    }
    assertThat(map1.totalLength()).isEqualTo(map1Bytes);
    for (int c = 0; c < map1.numChunks(); c++) {
      for (int e = 0; e < map1.extentCount(c); e++) {
        long start = map1.extentOffset(c, e);
        long end = start + map1.extentLength(c, e);
        for (long pos = start; pos < end; ) {
          assertThat(content.getInt((int) pos + BatchFormat.MAP_INDEX_OFFSET)).isEqualTo(1);
          pos += BatchFormat.HEADER_SIZE + content.getInt((int) pos + BatchFormat.LENGTH_OFFSET);
        }
      }
    }

    List<Long> chunks = file.chunkOffsets();
    assertThat(chunks.get(0)).isZero();
    assertThat(chunks.get(chunks.size() - 1)).isEqualTo(offset);
    assertThat(chunks.size()).isGreaterThan(2);
    for (int i = 1; i < chunks.size() - 1; i++) {
      assertThat(batchStarts).contains(chunks.get(i));
    }
    for (int i = 1; i < chunks.size(); i++) {
      // a chunk ends before the batch that would take it past the chunk size
      long chunk = chunks.get(i) - chunks.get(i - 1);
      int firstBatch = batchStarts.indexOf(chunks.get(i - 1));
      long firstBatchSize =
          (firstBatch + 1 < batchStarts.size() ? batchStarts.get(firstBatch + 1) : offset)
              - chunks.get(i - 1);
      assertThat(chunk).isLessThanOrEqualTo(Math.max(4096, firstBatchSize));
      if (i + 1 < chunks.size()) {
        int next = batchStarts.indexOf(chunks.get(i));
        long nextBatch =
            (next + 1 < batchStarts.size() ? batchStarts.get(next + 1) : offset) - chunks.get(i);
        assertThat(chunk + nextBatch)
            .as("chunk %d could have taken the next batch", i)
            .isGreaterThan(4096);
      }
    }
    assertThat(split.commit().get()).isSameAs(file);
    assertThat(append(split, body(0, 99, 1))).isEqualTo(Status.STAGE_ENDED);
  }

  @Test
  void discardReleasesMemoryAndDeletesTheFile() throws Exception {
    ReducePartitionSplit split = dirs.newSplit(new SplitKey("app", 1, 3, 0));
    for (int i = 0; i < 10; i++) {
      append(split, body(0, i, 500));
    }
    split.discard().get(1, TimeUnit.MINUTES);
    assertThat(memory.held()).isZero();
    try (var files = Files.walk(tmp)) {
      assertThat(files.filter(Files::isRegularFile).count()).isZero();
    }
    assertThat(append(split, body(0, 11, 5))).isEqualTo(Status.HARD_SPLIT);
    assertThatThrownBy(() -> split.commit().get()).hasMessageContaining("discarded");
  }

  @Test
  void uncommittedFileIsMarkedInProgress() throws Exception {
    ReducePartitionSplit split = dirs.newSplit(new SplitKey("app", 1, 4, 2));
    for (int i = 0; i < 5; i++) {
      append(split, body(0, i, 1000));
    }
    split.flushNow();
    // the flusher writes in order; a commit queued behind it shows what was on disk before
    try (var files = Files.walk(tmp)) {
      assertThat(files.map(Path::toString).filter(p -> p.endsWith("4-2.data")).count()).isZero();
    }
    split.commit().get(1, TimeUnit.MINUTES);
    try (var files = Files.walk(tmp)) {
      assertThat(files.map(Path::toString).filter(p -> p.endsWith(".inprogress")).count()).isZero();
    }
  }

  @Test
  void newSplitsSpreadOverDirectories() {
    ReducePartitionSplit a = dirs.newSplit(new SplitKey("app", 1, 10, 0));
    ReducePartitionSplit b = dirs.newSplit(new SplitKey("app", 1, 11, 0));
    assertThat(dirs.all().get(0).activeSplits()).isEqualTo(1);
    assertThat(dirs.all().get(1).activeSplits()).isEqualTo(1);
    a.discard();
    b.discard();
  }

  /** Batches of a split's file as {map index, batch id} pairs, in file order. */
  private static List<int[]> batchesOf(CommittedSplitFile file) throws Exception {
    ByteBuffer content = ByteBuffer.wrap(Files.readAllBytes(file.path()));
    List<int[]> batches = new ArrayList<>();
    for (long pos = 0; pos < file.length(); ) {
      batches.add(
          new int[] {
            content.getInt((int) pos + BatchFormat.MAP_INDEX_OFFSET), content.getInt((int) pos + 12)
          });
      pos += BatchFormat.HEADER_SIZE + content.getInt((int) pos + BatchFormat.LENGTH_OFFSET);
    }
    return batches;
  }

  /** Directories in {@code tmp/name} whose splits flush at 1 MiB, sharing the budget. */
  private DataDirectories unflushedDirs(String name) throws java.io.IOException {
    ServerConf conf =
        new ServerConf(
            SluiceConf.of(
                Map.of(
                    "sluice.server.dirs", tmp.resolve(name).toString(),
                    "sluice.flush.size", "1m",
                    "sluice.memory.max", "4m")));
    return new DataDirectories(conf, memory, new ServerMetrics(new MetricRegistry(), memory));
  }

  @Test
  void smallBodiesAreGatheredIntoFewBuffersThatTheBudgetCountsWhole() throws Exception {
    DataDirectories unflushed = unflushedDirs("c");
    try {
      ReducePartitionSplit split = unflushed.newSplit(new SplitKey("app", 1, 5, 0));
      int bodies = 500;
      long data = 0;
      for (int i = 0; i < bodies; i++) {
        ByteBuf b = body(i % 7, i, 40);
        data += b.readableBytes();
        assertThat(append(split, b)).isEqualTo(Status.OK);
      }
      // one buffer per pushed batch before: 500, each freed by the flusher through the arena
      assertThat(split.pendingBuffers()).isLessThanOrEqualTo(5);
      // the budget holds the gathering buffers whole: at least the data, at most their room more
      assertThat(memory.held()).isEqualTo(split.pendingBytes());
      assertThat(memory.held())
          .isBetween(data, data + PendingBatches.GATHER_LARGEST + PendingBatches.GATHER_MAX);

      CommittedSplitFile file = split.commit().get(1, TimeUnit.MINUTES);
      assertThat(memory.held()).isZero();
      assertThat(file.length()).isEqualTo(data);
      List<int[]> batches = batchesOf(file);
      assertThat(batches).hasSize(bodies);
      int lastMap = -1;
      int lastId = -1;
      for (int[] batch : batches) {
        // in map order, one map's batches in the order they were pushed
        assertThat(batch[0]).isGreaterThanOrEqualTo(lastMap);
        if (batch[0] == lastMap) {
          assertThat(batch[1]).isGreaterThan(lastId);
        }
        lastMap = batch[0];
        lastId = batch[1];
      }
    } finally {
      unflushed.close();
    }
  }

  @Test
  void aLargeBodyBetweenSmallOnesKeepsTheOrderTheyWereAccepted() throws Exception {
    ReducePartitionSplit split = dirs.newSplit(new SplitKey("app", 1, 6, 0));
    int[] payloads = {10, 20, PendingBatches.GATHER_MAX, 30, 40, 5000, 50};
    for (int i = 0; i < payloads.length; i++) {
      assertThat(append(split, body(3, i, payloads[i]))).isEqualTo(Status.OK);
    }
    CommittedSplitFile file = split.commit().get(1, TimeUnit.MINUTES);
    assertThat(memory.held()).isZero();
    assertThat(batchesOf(file).stream().map(b -> b[1])).containsExactly(0, 1, 2, 3, 4, 5, 6);
  }

  @Test
  void withNoRoomForAGatheringBufferSmallBodiesAreKeptAsTheyAre() throws Exception {
    dirs.close();
    dirs = unflushedDirs("d");
    ReducePartitionSplit split = dirs.newSplit(new SplitKey("app", 1, 7, 0));
    int body = 1024;
    // room for the first body, a first gathering buffer and the bodies copied into it until it
    // is full, but when the sixth body comes, not for a second buffer (twice as large) besides the
    // first body, the first buffer and the sixth body
    long room = 3L * PendingBatches.GATHER_FIRST + 2L * body - 1;
    long blocker = memory.max() - memory.held() - room;
    assertThat(memory.tryReserve(blocker)).isTrue();
    try {
      for (int i = 0; i < 8; i++) {
        assertThat(append(split, body(0, i, body - BatchFormat.HEADER_SIZE))).isEqualTo(Status.OK);
      }
      // body 0 kept, bodies 1-4 gathered (their reservations returned when the buffer filled),
      // bodies 5-7 kept as they came: no room for the next, twice as large, buffer
      assertThat(split.pendingBuffers()).isEqualTo(5);
      assertThat(split.pendingBytes()).isEqualTo(PendingBatches.GATHER_FIRST + 4L * body);
      assertThat(memory.held() - blocker).isEqualTo(split.pendingBytes());
    } finally {
      memory.release(blocker);
    }
    CommittedSplitFile file = split.commit().get(1, TimeUnit.MINUTES);
    assertThat(memory.held()).isZero();
    assertThat(batchesOf(file).stream().map(b -> b[1])).containsExactly(0, 1, 2, 3, 4, 5, 6, 7);
  }
}
