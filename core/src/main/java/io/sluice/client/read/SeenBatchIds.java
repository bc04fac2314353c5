package io.sluice.client.read;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The batch ids a reader has seen, per (partition, map). The pusher numbers a map attempt's batches
 * of each partition densely from 0 ({@link io.sluice.protocol.BatchFormat}), so the ids seen of one
 * (partition, map) are almost always one run {@code [0, n)}, stored as the single int {@code n}.
 * Ids read out of push order (a retried push, a partition whose splits are read in another order
 * than they were written) leave gaps; such a (partition, map) keeps its seen ids as a sorted array
 * of disjoint runs, and returns to a single int once the gaps fill.
 *
 * <p>Memory, counted by {@link #footprintBytes}: an open-addressing table of (partition, map) keys
 * at least 3/8 full, 12 bytes a slot, so at most <b>32 bytes per (partition, map) seen</b>; plus,
 * for a (partition, map) whose ids have gaps (or had them once), <b>24 bytes and 8 bytes per
 * run</b>. It grows with the batches the reader sees, never with the size of their ids; 100,000
 * maps each read in one run hold at most 3.2 MB. Not thread safe.
 */
final class SeenBatchIds {
  private static final long EMPTY = -1L;
  private static final int MIN_CAPACITY = 16;

  /** (partition << 32 | map), or EMPTY. */
  private long[] keys = newKeys(MIN_CAPACITY);

  /** n >= 1: ids [0, n) seen and no other; n < 0: the runs at index -1 - n of {@link #runs}. */
  private int[] values = new int[MIN_CAPACITY];

  private int size;

  /**
   * Sorted disjoint, non-adjacent runs {@code [start0, end0, start1, end1, ...]} (end exclusive).
   */
  private final List<int[]> runs = new ArrayList<>();

  private final List<Integer> freeRuns = new ArrayList<>();

  /**
   * Records a batch id.
   *
   * @param partition not negative
   * @param map not negative
   * @param batchId not negative, below {@link Integer#MAX_VALUE}
   * @return true the first time this (partition, map, batchId) is added
   */
  boolean add(int partition, int map, int batchId) {
    long key = ((long) partition << 32) | (map & 0xFFFFFFFFL);
    int slot = slot(key);
    if (keys[slot] == EMPTY) {
      keys[slot] = key;
      size++;
      if (batchId == 0) {
        values[slot] = 1;
      } else {
        values[slot] = storeRuns(new int[] {batchId, batchId + 1});
      }
      if (size * 4 > keys.length * 3) {
        grow();
      }
      return true;
    }
    int v = values[slot];
    if (v >= 0) {
      if (batchId < v) {
        return false;
      }
      if (batchId == v) {
        values[slot] = v + 1;
      } else {
        values[slot] = storeRuns(new int[] {0, v, batchId, batchId + 1});
      }
      return true;
    }
    int index = -1 - v;
    int[] merged = insert(runs.get(index), batchId);
    if (merged == null) {
      return false;
    }
    if (merged.length == 2 && merged[0] == 0) {
      runs.set(index, null);
      freeRuns.add(index);
      values[slot] = merged[1];
    } else {
      runs.set(index, merged);
    }
    return true;
  }

  /** The runs with {@code id} added, or null when a run already holds it. */
  private static int[] insert(int[] r, int id) {
    // i: the first run that ends after id
    int lo = 0;
    int hi = r.length / 2;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (r[2 * mid + 1] <= id) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    int i = lo;
    if (i < r.length / 2 && r[2 * i] <= id) {
      return null;
    }
    boolean joinsLeft = i > 0 && r[2 * i - 1] == id;
    boolean joinsRight = i < r.length / 2 && r[2 * i] == id + 1;
    if (joinsLeft && joinsRight) {
      int[] out = new int[r.length - 2];
      System.arraycopy(r, 0, out, 0, 2 * i - 1);
      System.arraycopy(r, 2 * i + 1, out, 2 * i - 1, r.length - 2 * i - 1);
      return out;
    }
    if (joinsLeft || joinsRight) {
      int[] out = r.clone();
      if (joinsLeft) {
        out[2 * i - 1] = id + 1;
      } else {
        out[2 * i] = id;
      }
      return out;
    }
    int[] out = new int[r.length + 2];
    System.arraycopy(r, 0, out, 0, 2 * i);
    out[2 * i] = id;
    out[2 * i + 1] = id + 1;
    System.arraycopy(r, 2 * i, out, 2 * i + 2, r.length - 2 * i);
    return out;
  }

  private int storeRuns(int[] r) {
    int index;
    if (freeRuns.isEmpty()) {
      index = runs.size();
      runs.add(r);
    } else {
      index = freeRuns.remove(freeRuns.size() - 1);
      runs.set(index, r);
    }
    return -1 - index;
  }

  private int slot(long key) {
    int mask = keys.length - 1;
    int i = mix(key) & mask;
    while (keys[i] != EMPTY && keys[i] != key) {
      i = (i + 1) & mask;
    }
    return i;
  }

  private void grow() {
    long[] oldKeys = keys;
    int[] oldValues = values;
    keys = newKeys(oldKeys.length * 2);
    values = new int[oldKeys.length * 2];
    for (int i = 0; i < oldKeys.length; i++) {
      if (oldKeys[i] != EMPTY) {
        int s = slot(oldKeys[i]);
        keys[s] = oldKeys[i];
        values[s] = oldValues[i];
      }
    }
  }

  private static long[] newKeys(int capacity) {
    long[] k = new long[capacity];
    Arrays.fill(k, EMPTY);
    return k;
  }

  private static int mix(long key) {
    long h = key * 0x9E3779B97F4A7C15L;
    return (int) (h ^ (h >>> 32));
  }

  /**
   * Bytes of the arrays held: the table (12 a slot), each gapped (partition, map)'s runs (4 an int
   * plus a 16-byte array header) and the list that holds them (8 a reference). Deterministic: it
   * depends only on the ids added, so tests can bound it.
   */
  long footprintBytes() {
    long bytes = 12L * keys.length + 8L * (runs.size() + freeRuns.size());
    for (int[] r : runs) {
      if (r != null) {
        bytes += 16 + 4L * r.length;
      }
    }
    return bytes;
  }
}
