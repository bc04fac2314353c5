package io.sluice.server.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.protocol.BatchFormat;
import io.sluice.protocol.ChunkExtents;
import io.sluice.protocol.MapRunIndex;
import io.sluice.server.storage.CommittedSplitFiles.Batch;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MapRunIndexTest {
  @TempDir Path tmp;

  /** Maps 0..2 in segments written in map order: [0 0 1 2] [1 1 2] [0 2 2]. */
  private CommittedSplitFile split() throws Exception {
    int[] maps = {0, 0, 1, 2, 1, 1, 2, 0, 2, 2};
    List<Batch> batches = new ArrayList<>();
    for (int i = 0; i < maps.length; i++) {
      batches.add(new Batch(maps[i], i, new byte[100]));
    }
    return CommittedSplitFiles.writeIndexed(tmp.resolve("0-0.data"), 0, batches);
  }

  private static final int BATCH = BatchFormat.HEADER_SIZE + 100;

  @Test
  void rangeIsTheRunsOfItsMapsWithTouchingRunsMerged() throws Exception {
    CommittedSplitFile split = split();
    MapRunIndex index = MapRunIndex.read(split.path(), split.length());
    // runs: 0x2 | 1 | 2 | 1x2 | 2 | 0 | 2x2
    assertThat(index.runCount()).isEqualTo(7);

    ChunkExtents map1 = index.range(1, 2, 1 << 20);
    assertThat(map1.numChunks()).isEqualTo(1);
    assertThat(map1.extentCount(0)).isEqualTo(2);
    assertThat(map1.extentOffset(0, 0)).isEqualTo(2L * BATCH);
    assertThat(map1.extentLength(0, 0)).isEqualTo(BATCH);
    assertThat(map1.extentOffset(0, 1)).isEqualTo(4L * BATCH);
    assertThat(map1.extentLength(0, 1)).isEqualTo(2L * BATCH);

    // maps 1 and 2 touch across runs: [2, 7) and [8, 10) batches
    ChunkExtents maps12 = index.range(1, 3, 1 << 20);
    assertThat(maps12.numExtents()).isEqualTo(2);
    assertThat(maps12.totalLength()).isEqualTo(7L * BATCH);

    // a small chunk size cuts chunks at run boundaries
    ChunkExtents small = index.range(1, 3, 2L * BATCH);
    assertThat(small.numChunks()).isGreaterThan(1);
    assertThat(small.totalLength()).isEqualTo(7L * BATCH);
    for (int c = 0; c < small.numChunks(); c++) {
      assertThat(small.chunkLength(c)).isLessThanOrEqualTo(2L * BATCH);
    }

    assertThat(index.range(5, 9, 1 << 20).numChunks()).isZero();
  }

  @Test
  void fileWithoutTrailerHasNoIndexAndCorruptTrailersAreNamed() throws Exception {
    CommittedSplitFile split = split();
    long size = Files.size(split.path());
    assertThat(MapRunIndex.sizeProblem(split.path(), split.length(), size)).isNull();
    assertThat(MapRunIndex.sizeProblem(split.path(), split.length() - 1, size))
        .contains("map-run trailer");

    // a flipped byte inside the runs
    try (FileChannel ch = FileChannel.open(split.path(), StandardOpenOption.WRITE)) {
      ch.write(ByteBuffer.wrap(new byte[] {7}), split.length() + 2);
    }
    assertThatThrownBy(() -> MapRunIndex.read(split.path(), split.length()))
        .hasMessageContaining(split.path().toString())
        .hasMessageContaining("CRC32C");

    // no trailer at all
    try (FileChannel ch = FileChannel.open(split.path(), StandardOpenOption.WRITE)) {
      ch.truncate(split.length());
    }
    assertThat(MapRunIndex.read(split.path(), split.length())).isNull();
    assertThat(MapRunIndex.sizeProblem(split.path(), split.length(), split.length())).isNull();
    assertThat(MapRunIndex.sizeProblem(split.path(), split.length(), split.length() + 3))
        .contains("has " + (split.length() + 3) + " bytes");
  }

  @Test
  void recorderCapsRunLengthAndGivesUpPastTheMaximum() {
    MapRunRecorder capped = new MapRunRecorder(250);
    for (int i = 0; i < 5; i++) {
      capped.batch(0, 100);
    }
    ByteBuffer t = capped.trailer();
    // runs of at most 250 bytes: 200, 200, 100
    assertThat(t.getInt(MapRunIndex.RUN_SIZE * 3 + 16)).isEqualTo(3);

    MapRunRecorder many = new MapRunRecorder(1 << 20);
    for (int i = 0; i <= MapRunRecorder.MAX_RUNS; i++) {
      many.batch(i % 2, 30);
    }
    assertThat(many.trailer()).isNull();
    assertThat(new MapRunRecorder(1).trailer()).isNull();
  }
}
