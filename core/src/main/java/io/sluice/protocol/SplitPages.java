package io.sluice.protocol;

import com.google.protobuf.CodedOutputStream;
import io.sluice.protocol.proto.CommittedSplit;
import io.sluice.protocol.proto.SplitCursor;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.Function;
import java.util.function.ToLongFunction;

/**
 * Pages of committed splits. An answer that lists splits (a server's {@code CommitResult}, the
 * coordinator's {@code CommittedShuffle}) lists them in (partition, epoch) order and holds at most
 * {@link #MAX_PAGE_BYTES} of them, however many partitions and maps the shuffle has: it stops
 * before the first split that would not fit (a page holds at least one split) and names that split
 * as its {@code next} cursor; the caller asks again from there. A split costs a few dozen bytes
 * plus its chunk offsets and at most {@link MapRanges#MAX_WIRE_BYTES} of map ranges.
 */
public final class SplitPages {
  /** The most bytes of splits one answer holds. */
  public static final int MAX_PAGE_BYTES = 256 << 10;

  private SplitPages() {}

  /** One page: its splits and where the next page starts (null when this is the last). */
  public static final class Page {
    private final List<CommittedSplit> splits;
    private final SplitCursor next;

    Page(List<CommittedSplit> splits, SplitCursor next) {
      this.splits = Collections.unmodifiableList(splits);
      this.next = next;
    }

    public List<CommittedSplit> splits() {
      return splits;
    }

    /** The first split not in this page, or null when the page ends the answer. */
    public SplitCursor next() {
      return next;
    }
  }

  /** The sort key of a split: (partition, epoch) in one long, ordered as the pair. */
  public static long key(int partitionId, int epoch) {
    return ((long) partitionId << 32) | (epoch & 0xffffffffL);
  }

  public static long key(SplitCursor cursor) {
    return key(cursor.getPartitionId(), cursor.getEpoch());
  }

  public static long key(CommittedSplit split) {
    return key(split.getPartitionId(), split.getEpoch());
  }

  /** The index of the first element of {@code sorted} whose key is at least {@code key}. */
  public static <T> int firstAtOrAfter(List<T> sorted, ToLongFunction<T> keyOf, long key) {
    int lo = 0;
    int hi = sorted.size();
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (keyOf.applyAsLong(sorted.get(mid)) < key) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  /**
   * The page of {@code sorted[from, to)} that starts at {@code from} and holds at most {@code
   * maxBytes} of splits (at least one split when the slice is not empty). Elements are turned into
   * splits only as the page takes them.
   */
  public static <T> Page page(
      List<T> sorted, int from, int to, Function<T, CommittedSplit> toSplit, int maxBytes) {
    List<CommittedSplit> splits = new ArrayList<>();
    long bytes = 0;
    int i = from;
    for (; i < to; i++) {
      CommittedSplit split = toSplit.apply(sorted.get(i));
      int size = wireSize(split);
      if (!splits.isEmpty() && bytes + size > maxBytes) {
        return new Page(splits, cursor(split));
      }
      splits.add(split);
      bytes += size;
    }
    return new Page(splits, null);
  }

  /** What a split adds to the answer that lists it: tag, length and message. */
  static int wireSize(CommittedSplit split) {
    return CodedOutputStream.computeMessageSize(1, split);
  }

  public static SplitCursor cursor(CommittedSplit split) {
    return SplitCursor.newBuilder()
        .setPartitionId(split.getPartitionId())
        .setEpoch(split.getEpoch())
        .build();
  }
}
