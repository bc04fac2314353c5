package io.sluice.server.storage;

import io.sluice.protocol.MapRunIndex;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * Records the {@link MapRunIndex} of a split while its flusher writes it: one call per batch, in
 * file order. A run ends where the map index changes or where it would grow past the longest run
 * (the chunk size), so every extent of a range read fits a chunk. Flusher thread only.
 *
 * <p>Memory: 8 bytes per run on the heap until commit; a split that exceeds {@link #MAX_RUNS} runs
 * (2 MiB) stops recording and gets no trailer, so its range reads sort on read.
 */
final class MapRunRecorder {
  static final int MAX_RUNS = 1 << 18;

  private final long maxRunLength;
  private int[] mapIndexes = new int[8];
  private int[] lengths = new int[8];
  private int count;
  private long dataLength;
  private boolean abandoned;

  MapRunRecorder(long maxRunLength) {
    this.maxRunLength = Math.min(maxRunLength, Integer.MAX_VALUE);
  }

  /** The next batch of the file: {@code length} bytes (header included) of map {@code mapIndex}. */
  void batch(int mapIndex, int length) {
    dataLength += length;
    if (abandoned) {
      return;
    }
    if (count > 0
        && mapIndexes[count - 1] == mapIndex
        && (long) lengths[count - 1] + length <= maxRunLength) {
      lengths[count - 1] += length;
      return;
    }
    if (count == MAX_RUNS) {
      abandoned = true;
      mapIndexes = null;
      lengths = null;
      return;
    }
    if (count == mapIndexes.length) {
      mapIndexes = Arrays.copyOf(mapIndexes, count * 2);
      lengths = Arrays.copyOf(lengths, count * 2);
    }
    mapIndexes[count] = mapIndex;
    lengths[count] = length;
    count++;
  }

  /** The trailer to append after the data, or null when there is none to write. */
  ByteBuffer trailer() {
    if (abandoned || count == 0) {
      return null;
    }
    return MapRunIndex.encode(dataLength, mapIndexes, lengths, count);
  }
}
