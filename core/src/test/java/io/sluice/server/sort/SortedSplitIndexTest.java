package io.sluice.server.sort;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SortedSplitIndexTest {
  @TempDir Path tmp;

  // maps 1, 3, 4 at [0,100), [100,250), [250,400); chunks at 0, 120, 300, 400
  private static SortedSplitIndex sample() {
    return new SortedSplitIndex(
        400,
        400,
        new int[] {1, 3, 4},
        new long[] {0, 100, 250},
        new long[] {100, 150, 150},
        new long[] {0, 120, 300, 400});
  }

  @Test
  void rangeIsOneContiguousByteRangeCutAtChunkBoundaries() {
    SortedSplitIndex index = sample();
    assertThat(index.rangeChunkOffsets(0, 10)).containsExactly(0L, 120L, 300L, 400L);
    assertThat(index.rangeChunkOffsets(3, 4)).containsExactly(100L, 120L, 250L);
    assertThat(index.rangeChunkOffsets(2, 5)).containsExactly(100L, 120L, 300L, 400L);
    assertThat(index.rangeChunkOffsets(4, 5)).containsExactly(250L, 300L, 400L);
    assertThat(index.rangeChunkOffsets(1, 2)).containsExactly(0L, 100L);
  }

  @Test
  void rangeWithoutDataHasNoChunk() {
    SortedSplitIndex index = sample();
    assertThat(index.rangeChunkOffsets(2, 3)).containsExactly(100L);
    assertThat(index.rangeChunkOffsets(5, 9)).containsExactly(400L);
  }

  @Test
  void roundTripsThroughItsFile() throws IOException {
    Path file = tmp.resolve("x.index");
    sample().writeTo(file);
    SortedSplitIndex read = SortedSplitIndex.read(file);
    assertThat(read.sourceLength()).isEqualTo(400);
    assertThat(read.dataLength()).isEqualTo(400);
    assertThat(read.mapCount()).isEqualTo(3);
    assertThat(read.rangeChunkOffsets(3, 5)).containsExactly(100L, 120L, 300L, 400L);
  }

  @Test
  void corruptOrTruncatedIndexIsRefusedNamingTheFile() throws IOException {
    Path file = tmp.resolve("x.index");
    sample().writeTo(file);
    byte[] bytes = Files.readAllBytes(file);
    bytes[45] ^= 1;
    Files.write(file, bytes);
    assertThatThrownBy(() -> SortedSplitIndex.read(file))
        .isInstanceOf(IOException.class)
        .hasMessageContaining(file.toString())
        .hasMessageContaining("CRC32");

    bytes[45] ^= 1;
    Files.write(file, java.util.Arrays.copyOf(bytes, bytes.length - 9));
    assertThatThrownBy(() -> SortedSplitIndex.read(file))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("bytes");

    bytes[0] = 'X';
    Files.write(file, bytes);
    assertThatThrownBy(() -> SortedSplitIndex.read(file)).hasMessageContaining("magic");
  }
}
