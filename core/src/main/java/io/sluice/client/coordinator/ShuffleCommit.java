package io.sluice.client.coordinator;

import io.sluice.protocol.IndexRanges;
import io.sluice.protocol.SplitPages;
import io.sluice.protocol.proto.CommittedShuffle;
import io.sluice.protocol.proto.CommittedSplit;
import io.sluice.protocol.proto.RecordCursor;
import io.sluice.protocol.proto.SplitCursor;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.function.Function;

/**
 * The outcome of a shuffle's commit, as the coordinator holds it: the winning attempt of every map,
 * every committed split in (partition, epoch) order, and the partitions lost with a server that
 * failed to commit (a BitSet: partitions/8 bytes at most, and only when a commit failed).
 *
 * <p>Readers get it page by page ({@link #answer}): an answer holds at most {@link
 * SplitPages#MAX_PAGE_BYTES} of splits, and its first page also the winning attempts (num_maps
 * varints) and at most {@link #MAX_LOST_RANGES} ranges of lost partitions, with their count. So no
 * answer grows with partitions or with partitions x maps. Immutable.
 */
public final class ShuffleCommit {
  /** The most ranges of lost partitions an answer lists (the first ones; the count is exact). */
  public static final int MAX_LOST_RANGES = 1024;

  /** Room left on a page for its records_next cursor and the frame around the answer. */
  private static final int RECORD_CURSOR_BYTES = 64;

  private final int numMaps;
  private final int[] winningAttempts;
  private final List<CommittedSplit> splits;
  private final BitSet lost;
  private final String lostReason;
  private final MapRecordStore records;

  ShuffleCommit(
      int numMaps,
      int[] winningAttempts,
      List<CommittedSplit> splits,
      BitSet lost,
      String lostReason) {
    this(numMaps, winningAttempts, splits, lost, lostReason, new MapRecordStore(numMaps));
  }

  /** A commit whose readers also get the maps' integrity records from {@code records}. */
  ShuffleCommit(
      int numMaps,
      int[] winningAttempts,
      List<CommittedSplit> splits,
      BitSet lost,
      String lostReason,
      MapRecordStore records) {
    this.records = records;
    this.numMaps = numMaps;
    this.winningAttempts = winningAttempts.clone();
    List<CommittedSplit> sorted = new ArrayList<>(splits);
    sorted.sort(Comparator.comparingLong(SplitPages::key));
    this.splits = Collections.unmodifiableList(sorted);
    this.lost = (BitSet) lost.clone();
    this.lostReason = lost.isEmpty() ? "" : lostReason;
  }

  public int numMaps() {
    return numMaps;
  }

  /** {@code winningAttempts()[mapIndex]}: the attempt whose data counts. */
  public int[] winningAttempts() {
    return winningAttempts.clone();
  }

  /** Every committed split, in (partition, epoch) order. */
  public List<CommittedSplit> splits() {
    return splits;
  }

  /** The partitions whose data cannot be served (empty when the commit is whole). */
  public BitSet lostPartitions() {
    return (BitSet) lost.clone();
  }

  /** Why partitions were lost; empty when none was. */
  public String lostReason() {
    return lostReason;
  }

  /**
   * One page of the committed splits of partitions [start, end): the first one when {@code resume}
   * is null, else the one starting at {@code resume} (the {@code next} of the page before). See
   * {@link CommittedShuffle} in sluice.proto.
   *
   * @throws IllegalArgumentException when {@code resume} is outside the range
   */
  CommittedShuffle answer(int start, int end, SplitCursor resume, int maxPageBytes) {
    return answer(start, end, 0, numMaps, resume, null, maxPageBytes);
  }

  /**
   * One page of the committed splits of partitions [start, end) and of the integrity records of
   * maps [startMap, endMap) in them ({@link MapRecordStore#page}), at most {@code maxPageBytes}
   * (but at least one split). The first page (both cursors null) has the winners, the lost
   * partitions and the attempts that reported records. Splits come first, from {@code resume}; the
   * page that ends them fills its room with records from the first one, and later pages carry
   * records only, from {@code recordsResume}.
   */
  CommittedShuffle answer(
      int start,
      int end,
      int startMap,
      int endMap,
      SplitCursor resume,
      RecordCursor recordsResume,
      int maxPageBytes) {
    boolean first = resume == null && recordsResume == null;
    if (resume != null && (resume.getPartitionId() < start || resume.getPartitionId() >= end)) {
      throw new IllegalArgumentException(
          "cannot resume an answer for partitions ["
              + start
              + ", "
              + end
              + ") at partition "
              + resume.getPartitionId());
    }
    if (recordsResume != null
        && (recordsResume.getMapIndex() < startMap || recordsResume.getMapIndex() >= endMap)) {
      throw new IllegalArgumentException(
          "cannot resume the records of maps ["
              + startMap
              + ", "
              + endMap
              + ") at map "
              + recordsResume.getMapIndex());
    }
    CommittedShuffle.Builder b = CommittedShuffle.newBuilder().setNumMaps(numMaps);
    if (first) {
      for (int a : winningAttempts) {
        b.addWinningAttempts(a);
      }
      int lostInRange = lost.isEmpty() ? 0 : lost.get(start, end).cardinality();
      if (lostInRange > 0) {
        IndexRanges.of(lost, start, end, MAX_LOST_RANGES).encodeTo(b::addLostRanges);
        b.setNumLostPartitions(lostInRange).setLostReason(lostReason);
      }
      records.addRecorded(b, startMap, endMap);
    }
    if (first || resume != null) {
      long fromKey = resume == null ? SplitPages.key(start, 0) : SplitPages.key(resume);
      int from = SplitPages.firstAtOrAfter(splits, SplitPages::key, fromKey);
      int to = SplitPages.firstAtOrAfter(splits, SplitPages::key, SplitPages.key(end, 0));
      SplitPages.Page page = SplitPages.page(splits, from, to, Function.identity(), maxPageBytes);
      b.addAllSplits(page.splits());
      if (page.next() != null) {
        // the records start on the page that ends the splits
        return b.setNext(page.next()).build();
      }
    }
    int room = maxPageBytes - b.build().getSerializedSize() - RECORD_CURSOR_BYTES;
    records.page(b, start, end, startMap, endMap, recordsResume, room);
    return b.build();
  }
}
