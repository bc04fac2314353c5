package io.sluice.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class ChunkExtentsTest {
  @Test
  void contiguousLayoutIsOneExtentPerChunk() {
    ChunkExtents c = ChunkExtents.contiguous(List.of(0L, 10L, 25L));
    assertThat(c.numChunks()).isEqualTo(2);
    assertThat(c.extentCount(1)).isEqualTo(1);
    assertThat(c.extentOffset(1, 0)).isEqualTo(10);
    assertThat(c.chunkLength(1)).isEqualTo(15);
    assertThat(c.chunkEnd(1)).isEqualTo(25);
    assertThat(c.handleOffsets()).containsExactly(0L, 10L, 25L);
    assertThat(ChunkExtents.contiguous(List.of(0L)).numChunks()).isZero();
    assertThat(ChunkExtents.contiguous(List.of(0L)).handleOffsets()).containsExactly(0L);
  }

  @Test
  void builderMergesTouchingExtentsAndPacksChunks() {
    ChunkExtents c =
        new ChunkExtents.Builder(100)
            .add(0, 30)
            .add(30, 30) // touches: one extent of 60
            .add(80, 30) // 90 in the chunk
            .add(200, 20) // would make 110: a new chunk
            .add(300, 0) // empty: skipped
            .add(400, 150) // bigger than a chunk: a chunk of its own
            .build();
    assertThat(c.numChunks()).isEqualTo(3);
    assertThat(c.extentCount(0)).isEqualTo(2);
    assertThat(c.extentLength(0, 0)).isEqualTo(60);
    assertThat(c.chunkLength(0)).isEqualTo(90);
    assertThat(c.chunkEnd(0)).isEqualTo(110);
    assertThat(c.chunkLength(1)).isEqualTo(20);
    assertThat(c.chunkLength(2)).isEqualTo(150);
    assertThat(c.numExtents()).isEqualTo(4);
    assertThat(c.totalLength()).isEqualTo(260);
    assertThat(c.handleOffsets()).containsExactly(0L, 200L, 400L, 550L);
  }
}
