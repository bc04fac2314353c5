package io.sluice.protocol;

import java.util.Arrays;
import java.util.BitSet;
import java.util.List;

/**
 * A set of non-negative indexes (map indexes, partition ids) as sorted, disjoint, non-adjacent
 * ranges [start, end), and their wire form: delta-encoded varints, {@code start0, end0 - start0,
 * start1 - end0, end1 - start1, ...}, so that a dense set costs a few bytes whatever its size.
 * Every value but the first is at least 1. Immutable.
 */
public final class IndexRanges {
  /** The empty set. */
  public static final IndexRanges EMPTY = new IndexRanges(new int[0], true);

  // start0, end0, start1, end1, ... (ends exclusive)
  private final int[] bounds;
  private final boolean complete;

  private IndexRanges(int[] bounds, boolean complete) {
    this.bounds = bounds;
    this.complete = complete;
  }

  /**
   * The ranges {@code start0, end0, start1, end1, ...} (sorted, disjoint, ends exclusive), the
   * first {@code maxRanges} of them; {@link #isComplete} says whether they are all of them.
   */
  public static IndexRanges ofBounds(int[] bounds, int maxRanges) {
    int n = Math.min(bounds.length / 2, maxRanges);
    return new IndexRanges(Arrays.copyOf(bounds, 2 * n), n == bounds.length / 2);
  }

  /**
   * The first {@code maxRanges} ranges of {@code set} within [from, to); {@link #isComplete} says
   * whether they are all of them.
   */
  public static IndexRanges of(BitSet set, int from, int to, int maxRanges) {
    int[] bounds = new int[2 * Math.min(maxRanges, 16)];
    int n = 0;
    int start = set.nextSetBit(from);
    while (start >= 0 && start < to) {
      if (n == 2 * maxRanges) {
        return new IndexRanges(Arrays.copyOf(bounds, n), false);
      }
      int end = Math.min(set.nextClearBit(start), to);
      if (n == bounds.length) {
        bounds = Arrays.copyOf(bounds, Math.min(2 * bounds.length, 2 * maxRanges));
      }
      bounds[n++] = start;
      bounds[n++] = end;
      start = end < to ? set.nextSetBit(end) : -1;
    }
    return new IndexRanges(Arrays.copyOf(bounds, n), true);
  }

  /** Every range of {@code set}. */
  public static IndexRanges of(BitSet set) {
    return of(set, 0, Integer.MAX_VALUE, Integer.MAX_VALUE / 2);
  }

  /**
   * Decodes the wire form.
   *
   * @throws IllegalArgumentException naming {@code what} when the values are not a valid encoding
   *     (odd count, a negative start, an empty range or gap, past {@link Integer#MAX_VALUE})
   */
  public static IndexRanges decode(List<Integer> deltas, String what) {
    if (deltas.size() % 2 != 0) {
      throw new IllegalArgumentException(
          what + ": " + deltas.size() + " range values, expected pairs of (gap, length)");
    }
    int[] bounds = new int[deltas.size()];
    long at = 0;
    for (int i = 0; i < bounds.length; i++) {
      int d = deltas.get(i);
      if (d < (i == 0 ? 0 : 1)) {
        throw new IllegalArgumentException(
            what
                + ": range value "
                + i
                + " is "
                + d
                + "; ranges must be sorted, disjoint, non-empty");
      }
      at += d;
      if (at > Integer.MAX_VALUE) {
        throw new IllegalArgumentException(what + ": ranges run past " + Integer.MAX_VALUE);
      }
      bounds[i] = (int) at;
    }
    return new IndexRanges(bounds, true);
  }

  /** The wire form, appended to {@code out}. */
  public void encodeTo(IntSink out) {
    int previous = 0;
    for (int b : bounds) {
      out.add(b - previous);
      previous = b;
    }
  }

  /** Receives the encoded values; a protobuf builder's {@code addX} method fits. */
  @FunctionalInterface
  public interface IntSink {
    void add(int value);
  }

  /** False when the set was cut at a maximum number of ranges (see {@link #of}). */
  public boolean isComplete() {
    return complete;
  }

  public int rangeCount() {
    return bounds.length / 2;
  }

  public boolean isEmpty() {
    return bounds.length == 0;
  }

  /** True when some index in [from, to) is in the set. */
  public boolean intersects(int from, int to) {
    // the first range that ends after from
    int lo = 0;
    int hi = rangeCount();
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (bounds[2 * mid + 1] <= from) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo < rangeCount() && bounds[2 * lo] < to;
  }

  /** How many indexes the ranges hold. */
  public long size() {
    long n = 0;
    for (int i = 0; i < bounds.length; i += 2) {
      n += bounds[i + 1] - bounds[i];
    }
    return n;
  }

  public BitSet toBitSet() {
    BitSet set = new BitSet();
    for (int i = 0; i < bounds.length; i += 2) {
      set.set(bounds[i], bounds[i + 1]);
    }
    return set;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof IndexRanges
        && complete == ((IndexRanges) o).complete
        && Arrays.equals(bounds, ((IndexRanges) o).bounds);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(bounds) * 31 + (complete ? 1 : 0);
  }

  /** "[0, 3), 7, [9, 12)" (a range of one index shows as the index), then "..." if cut. */
  @Override
  public String toString() {
    StringBuilder s = new StringBuilder();
    for (int i = 0; i < bounds.length; i += 2) {
      if (s.length() > 0) {
        s.append(", ");
      }
      if (bounds[i + 1] - bounds[i] == 1) {
        s.append(bounds[i]);
      } else {
        s.append('[').append(bounds[i]).append(", ").append(bounds[i + 1]).append(')');
      }
    }
    if (!complete) {
      s.append(s.length() > 0 ? ", ..." : "...");
    }
    return s.toString();
  }
}
