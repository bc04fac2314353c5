package io.sluice.server.storage;

import java.util.Arrays;
import java.util.BitSet;

/**
 * The map indexes that have batches in a split, as sorted disjoint runs {@code [start, end)}. It
 * costs memory by the runs it holds, never by how large an index is, and holds at most {@link
 * #MAX_RUNS}: past that, the two runs with the smallest gap between them merge. The set then claims
 * maps it does not have, which is safe: it only lets readers and range reads skip splits and sorts,
 * and the batches themselves are still filtered by map (its first and last index are always exact).
 * Not thread safe.
 */
public final class MapIndexSet {
  /** Runs kept before nearby runs merge: 8 KiB per split at most. */
  public static final int MAX_RUNS = 1024;

  /**
   * Run i is {@code [bounds[2i], bounds[2i + 1])}: one array, so the check every pushed batch makes
   * (does its map extend the last run?) touches one cache line of it, not two.
   */
  private int[] bounds;

  private int runs;

  public MapIndexSet() {
    bounds = new int[8];
  }

  private MapIndexSet(int[] bounds, int runs) {
    this.bounds = bounds;
    this.runs = runs;
  }

  private int start(int run) {
    return bounds[2 * run];
  }

  private int end(int run) {
    return bounds[2 * run + 1];
  }

  /**
   * Adds {@code mapIndex}.
   *
   * @throws IllegalArgumentException when it is negative or {@link Integer#MAX_VALUE}
   */
  public void add(int mapIndex) {
    if (mapIndex < 0 || mapIndex == Integer.MAX_VALUE) {
      throw new IllegalArgumentException("map index " + mapIndex + " is out of range");
    }
    int i = floor(mapIndex);
    if (i >= 0 && mapIndex < end(i)) {
      return;
    }
    boolean joinsLeft = i >= 0 && end(i) == mapIndex;
    boolean joinsRight = i + 1 < runs && start(i + 1) == mapIndex + 1;
    if (joinsLeft && joinsRight) {
      bounds[2 * i + 1] = end(i + 1);
      remove(i + 1);
    } else if (joinsLeft) {
      bounds[2 * i + 1] = mapIndex + 1;
    } else if (joinsRight) {
      bounds[2 * (i + 1)] = mapIndex;
    } else {
      insert(i + 1, mapIndex, mapIndex + 1);
      if (runs > MAX_RUNS) {
        mergeClosestRuns();
      }
    }
  }

  /** The run whose start is the largest at or below {@code value}; -1 when none. */
  private int floor(int value) {
    // maps mostly arrive in increasing order, a few tasks at a time: the last run or the one
    // before it
    if (runs > 0 && start(runs - 1) <= value) {
      return runs - 1;
    }
    if (runs > 1 && start(runs - 2) <= value) {
      return runs - 2;
    }
    int low = 0;
    int high = runs - 1;
    while (low <= high) {
      int mid = (low + high) >>> 1;
      int start = start(mid);
      if (start < value) {
        low = mid + 1;
      } else if (start > value) {
        high = mid - 1;
      } else {
        return mid;
      }
    }
    return low - 1;
  }

  private void insert(int at, int start, int end) {
    if (2 * runs == bounds.length) {
      bounds = Arrays.copyOf(bounds, bounds.length * 2);
    }
    System.arraycopy(bounds, 2 * at, bounds, 2 * at + 2, 2 * (runs - at));
    bounds[2 * at] = start;
    bounds[2 * at + 1] = end;
    runs++;
  }

  private void remove(int at) {
    System.arraycopy(bounds, 2 * at + 2, bounds, 2 * at, 2 * (runs - at - 1));
    runs--;
  }

  private void mergeClosestRuns() {
    int best = 0;
    long bestGap = Long.MAX_VALUE;
    for (int j = 0; j + 1 < runs; j++) {
      long gap = (long) start(j + 1) - end(j);
      if (gap < bestGap) {
        bestGap = gap;
        best = j;
      }
    }
    bounds[2 * best + 1] = end(best + 1);
    remove(best + 1);
  }

  public boolean isEmpty() {
    return runs == 0;
  }

  /** The smallest index; -1 when empty. */
  public int first() {
    return runs == 0 ? -1 : start(0);
  }

  /** The largest index; -1 when empty. */
  public int last() {
    return runs == 0 ? -1 : end(runs - 1) - 1;
  }

  public int runCount() {
    return runs;
  }

  /** True when the set holds {@code mapIndex} (or claims it, after runs merged). */
  public boolean contains(int mapIndex) {
    int i = floor(mapIndex);
    return i >= 0 && mapIndex < end(i);
  }

  /** The runs as {@code start0, end0, start1, end1, ...}, ends exclusive. */
  public int[] toRuns() {
    return Arrays.copyOf(bounds, 2 * runs);
  }

  /**
   * The set {@link #toRuns()} wrote.
   *
   * @throws IllegalArgumentException when the runs are not sorted, disjoint and non-empty
   */
  public static MapIndexSet fromRuns(int[] flat) {
    if (flat.length % 2 != 0) {
      throw new IllegalArgumentException("map index runs need an even count, got " + flat.length);
    }
    int n = flat.length / 2;
    int previousEnd = -1;
    for (int i = 0; i < n; i++) {
      int start = flat[2 * i];
      int end = flat[2 * i + 1];
      if (start < 0 || end <= start || start <= previousEnd) {
        throw new IllegalArgumentException(
            "map index run [" + start + ", " + end + ") is empty, negative or out of order");
      }
      previousEnd = end;
    }
    MapIndexSet set = new MapIndexSet(Arrays.copyOf(flat, Math.max(8, flat.length)), n);
    while (set.runs > MAX_RUNS) {
      set.mergeClosestRuns();
    }
    return set;
  }

  /** The set of a {@link BitSet} (state records written before runs were). */
  public static MapIndexSet of(BitSet bits) {
    MapIndexSet set = new MapIndexSet();
    for (int i = bits.nextSetBit(0); i >= 0 && i < Integer.MAX_VALUE; i = bits.nextSetBit(i + 1)) {
      set.add(i);
    }
    return set;
  }

  public MapIndexSet copy() {
    return new MapIndexSet(Arrays.copyOf(bounds, bounds.length), runs);
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof MapIndexSet)) {
      return false;
    }
    MapIndexSet other = (MapIndexSet) o;
    return runs == other.runs && Arrays.equals(bounds, 0, 2 * runs, other.bounds, 0, 2 * runs);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(toRuns());
  }

  @Override
  public String toString() {
    StringBuilder b = new StringBuilder("{");
    for (int i = 0; i < runs && i < 8; i++) {
      b.append(i == 0 ? "" : ", ")
          .append('[')
          .append(start(i))
          .append(", ")
          .append(end(i))
          .append(')');
    }
    return b.append(runs > 8 ? ", ...}" : "}").toString();
  }
}
