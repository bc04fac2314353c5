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

  private int[] starts;
  private int[] ends;
  private int runs;

  public MapIndexSet() {
    starts = new int[4];
    ends = new int[4];
  }

  private MapIndexSet(int[] starts, int[] ends, int runs) {
    this.starts = starts;
    this.ends = ends;
    this.runs = runs;
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
    if (i >= 0 && mapIndex < ends[i]) {
      return;
    }
    boolean joinsLeft = i >= 0 && ends[i] == mapIndex;
    boolean joinsRight = i + 1 < runs && starts[i + 1] == mapIndex + 1;
    if (joinsLeft && joinsRight) {
      ends[i] = ends[i + 1];
      remove(i + 1);
    } else if (joinsLeft) {
      ends[i] = mapIndex + 1;
    } else if (joinsRight) {
      starts[i + 1] = mapIndex;
    } else {
      insert(i + 1, mapIndex, mapIndex + 1);
      if (runs > MAX_RUNS) {
        mergeClosestRuns();
      }
    }
  }

  /** The run whose start is the largest at or below {@code value}; -1 when none. */
  private int floor(int value) {
    if (runs > 0 && starts[runs - 1] <= value) {
      return runs - 1; // maps mostly arrive in increasing order
    }
    int found = Arrays.binarySearch(starts, 0, runs, value);
    return found >= 0 ? found : -found - 2;
  }

  private void insert(int at, int start, int end) {
    if (runs == starts.length) {
      starts = Arrays.copyOf(starts, runs * 2);
      ends = Arrays.copyOf(ends, runs * 2);
    }
    System.arraycopy(starts, at, starts, at + 1, runs - at);
    System.arraycopy(ends, at, ends, at + 1, runs - at);
    starts[at] = start;
    ends[at] = end;
    runs++;
  }

  private void remove(int at) {
    System.arraycopy(starts, at + 1, starts, at, runs - at - 1);
    System.arraycopy(ends, at + 1, ends, at, runs - at - 1);
    runs--;
  }

  private void mergeClosestRuns() {
    int best = 0;
    long bestGap = Long.MAX_VALUE;
    for (int j = 0; j + 1 < runs; j++) {
      long gap = (long) starts[j + 1] - ends[j];
      if (gap < bestGap) {
        bestGap = gap;
        best = j;
      }
    }
    ends[best] = ends[best + 1];
    remove(best + 1);
  }

  public boolean isEmpty() {
    return runs == 0;
  }

  /** The smallest index; -1 when empty. */
  public int first() {
    return runs == 0 ? -1 : starts[0];
  }

  /** The largest index; -1 when empty. */
  public int last() {
    return runs == 0 ? -1 : ends[runs - 1] - 1;
  }

  public int runCount() {
    return runs;
  }

  /** True when the set holds {@code mapIndex} (or claims it, after runs merged). */
  public boolean contains(int mapIndex) {
    int i = floor(mapIndex);
    return i >= 0 && mapIndex < ends[i];
  }

  /** The runs as {@code start0, end0, start1, end1, ...}, ends exclusive. */
  public int[] toRuns() {
    int[] out = new int[runs * 2];
    for (int i = 0; i < runs; i++) {
      out[2 * i] = starts[i];
      out[2 * i + 1] = ends[i];
    }
    return out;
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
    int[] starts = new int[Math.max(4, n)];
    int[] ends = new int[Math.max(4, n)];
    int previousEnd = -1;
    for (int i = 0; i < n; i++) {
      int start = flat[2 * i];
      int end = flat[2 * i + 1];
      if (start < 0 || end <= start || start <= previousEnd) {
        throw new IllegalArgumentException(
            "map index run [" + start + ", " + end + ") is empty, negative or out of order");
      }
      starts[i] = start;
      ends[i] = end;
      previousEnd = end;
    }
    MapIndexSet set = new MapIndexSet(starts, ends, n);
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
    return new MapIndexSet(
        Arrays.copyOf(starts, starts.length), Arrays.copyOf(ends, ends.length), runs);
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof MapIndexSet)) {
      return false;
    }
    MapIndexSet other = (MapIndexSet) o;
    return runs == other.runs
        && Arrays.equals(starts, 0, runs, other.starts, 0, runs)
        && Arrays.equals(ends, 0, runs, other.ends, 0, runs);
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
          .append(starts[i])
          .append(", ")
          .append(ends[i])
          .append(')');
    }
    return b.append(runs > 8 ? ", ...}" : "}").toString();
  }
}
