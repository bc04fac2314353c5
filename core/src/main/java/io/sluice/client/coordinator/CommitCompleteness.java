package io.sluice.client.coordinator;

import io.sluice.protocol.IndexRanges;
import io.sluice.protocol.proto.CommittedSplit;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The coordinator's check that a commit returned everything writers were promised: a server
 * acknowledges a batch only once it holds it, and every acknowledged batch of a map attempt that
 * ended is in a committed split of its partition (duplicates and losing attempts only add bytes).
 * So for every partition
 *
 * <pre>  bytes of its committed splits  >=  bytes acknowledged to ended attempts (their records)
 * </pre>
 *
 * and a partition below that lost acknowledged data (a server that crashed or lost power and came
 * back without a split it had taken, a file removed on disk before the commit): it is reported
 * lost, so its readers fail and the engine reruns its maps, instead of a commit that looks
 * complete. The check counts every ended attempt, not a winner, so it holds whichever attempt the
 * engine counts. Attempts that report no records (clients without them) add nothing.
 */
final class CommitCompleteness {
  /** The most partitions a reason names one by one. */
  private static final int MAX_NAMED = 8;

  private CommitCompleteness() {}

  /**
   * Per partition, the bytes its committed splits hold: for each (partition, epoch) the longest of
   * its copies (two with sluice.replication.factor 2; each holds every acknowledged batch of that
   * epoch), summed over epochs.
   */
  private static long[] committedBytes(List<CommittedSplit> splits, int numPartitions) {
    Map<Long, Long> longestCopy = new HashMap<>();
    for (CommittedSplit s : splits) {
      int p = s.getPartitionId();
      if (p >= 0 && p < numPartitions) {
        long key = ((long) p << 32) | (s.getEpoch() & 0xFFFFFFFFL);
        longestCopy.merge(key, s.getLength(), Math::max);
      }
    }
    long[] committed = new long[numPartitions];
    for (Map.Entry<Long, Long> e : longestCopy.entrySet()) {
      committed[(int) (e.getKey() >>> 32)] += e.getValue();
    }
    return committed;
  }

  /**
   * Adds to {@code lost} every partition not already in it whose committed splits hold fewer bytes
   * than {@code acknowledged} says.
   *
   * @return why, naming the first partitions and their bytes; empty when none is short
   */
  static String check(List<CommittedSplit> splits, long[] acknowledged, BitSet lost) {
    long[] committed = committedBytes(splits, acknowledged.length);
    BitSet shortOf = new BitSet();
    StringBuilder named = new StringBuilder();
    for (int p = 0; p < acknowledged.length; p++) {
      if (committed[p] >= acknowledged[p] || lost.get(p)) {
        continue;
      }
      if (shortOf.cardinality() < MAX_NAMED) {
        named
            .append(named.length() == 0 ? "" : ", ")
            .append("partition ")
            .append(p)
            .append(" (")
            .append(committed[p])
            .append(" of ")
            .append(acknowledged[p])
            .append(" bytes)");
      }
      shortOf.set(p);
    }
    if (shortOf.isEmpty()) {
      return "";
    }
    lost.or(shortOf);
    return "the servers committed fewer bytes than they acknowledged to map attempts that ended, in "
        + shortOf.cardinality()
        + " partition(s) "
        + IndexRanges.of(shortOf, 0, acknowledged.length, 16)
        + ": "
        + named
        + (shortOf.cardinality() > MAX_NAMED ? ", ..." : "")
        + "; a server lost acknowledged data";
  }
}
