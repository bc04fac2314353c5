package io.sluice.server.sort;

import java.util.Arrays;

/**
 * The batches of one split file as found by a scan: map index, offset and length of each, in file
 * order, and the order that sorts them by map index (stable). Primitive arrays, grown by doubling:
 * 20 bytes per batch. Not thread safe.
 */
final class BatchTable {
  private int[] maps = new int[256];
  private long[] offsets = new long[256];
  private int[] lengths = new int[256];
  private int size;

  /** Adds a batch of {@code length} bytes (header included) at {@code offset}. */
  void add(int mapIndex, long offset, int length) {
    if (size == maps.length) {
      int grown = size * 2;
      maps = Arrays.copyOf(maps, grown);
      offsets = Arrays.copyOf(offsets, grown);
      lengths = Arrays.copyOf(lengths, grown);
    }
    maps[size] = mapIndex;
    offsets[size] = offset;
    lengths[size] = length;
    size++;
  }

  int size() {
    return size;
  }

  int mapIndex(int batch) {
    return maps[batch];
  }

  long offset(int batch) {
    return offsets[batch];
  }

  int length(int batch) {
    return lengths[batch];
  }

  /** Batch numbers ordered by map index, file order within a map. */
  int[] sortedByMap() {
    long[] keys = new long[size];
    for (int i = 0; i < size; i++) {
      keys[i] = ((long) maps[i] << 32) | i;
    }
    Arrays.sort(keys);
    int[] order = new int[size];
    for (int i = 0; i < size; i++) {
      order[i] = (int) keys[i];
    }
    return order;
  }
}
