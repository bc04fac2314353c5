package io.sluice.protocol;

import io.sluice.protocol.proto.CommittedSplit;
import java.util.BitSet;

/**
 * The maps that have batches in a committed split, as {@link CommittedSplit} carries them: at most
 * {@link #MAX_RANGES} ranges of map indexes ({@link IndexRanges}), or "every map". It is a hint:
 * readers skip a split that holds none of the maps they read, and the server filters batches by map
 * range on read, so naming more maps than the split holds is always safe. Sent as a bitmap it would
 * cost maps/8 bytes for every split (125 MB for 10,000 splits of 100,000 maps); capped, a split
 * costs at most {@link #MAX_WIRE_BYTES}.
 */
public final class MapRanges {
  /** Splits whose maps need more ranges than this are sent as every map. */
  public static final int MAX_RANGES = 128;

  /**
   * The most the map fields of a split take on the wire: the packed ranges (tag, length, two
   * varints of at most 5 bytes a range) and the every-map flag.
   */
  public static final int MAX_WIRE_BYTES = 1 + 2 + 2 * MAX_RANGES * 5 + 2;

  private MapRanges() {}

  /** Sets the map fields of {@code split} from the maps that have batches in it. */
  public static CommittedSplit.Builder write(CommittedSplit.Builder split, BitSet maps) {
    return write(split, IndexRanges.of(maps, 0, Integer.MAX_VALUE, MAX_RANGES));
  }

  /**
   * Sets the map fields of {@code split} from the runs {@code start0, end0, ...} (ends exclusive)
   * of the maps that have batches in it.
   */
  public static CommittedSplit.Builder write(CommittedSplit.Builder split, int[] runs) {
    return write(split, IndexRanges.ofBounds(runs, MAX_RANGES));
  }

  private static CommittedSplit.Builder write(CommittedSplit.Builder split, IndexRanges ranges) {
    split.clearMapRanges();
    if (ranges.isComplete()) {
      ranges.encodeTo(split::addMapRanges);
      split.setEveryMap(false);
    } else {
      split.setEveryMap(true);
    }
    return split;
  }

  /** The split's maps as ranges, or null when it may hold any map. */
  public static IndexRanges read(CommittedSplit split) {
    if (split.getEveryMap()) {
      return null;
    }
    return IndexRanges.decode(
        split.getMapRangesList(),
        "map ranges of partition " + split.getPartitionId() + " epoch " + split.getEpoch());
  }

  /** False only when the split surely holds no map in [startMapIndex, endMapIndex). */
  public static boolean mayHold(CommittedSplit split, int startMapIndex, int endMapIndex) {
    IndexRanges ranges = read(split);
    return ranges == null || ranges.intersects(startMapIndex, endMapIndex);
  }
}
