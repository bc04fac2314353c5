package io.sluice.client.coordinator;

import io.sluice.protocol.PartitionRecords;
import io.sluice.protocol.proto.CommittedShuffle;
import io.sluice.protocol.proto.MapRecords;
import io.sluice.protocol.proto.RecordCursor;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The integrity records ({@link PartitionRecords}) of a shuffle's ended map attempts, as the
 * coordinator holds them for readers: per map, each attempt that ended with records (usually one; a
 * speculative copy or a retry that also ended adds one, since the engine, not the coordinator, may
 * pick which attempt a reader reads), and per attempt only the partitions it wrote to, packed (24
 * bytes a record). So memory grows with the (map attempt, partition) pairs that hold data, which
 * the servers hold at least a 24-byte batch header of each, never with maps x partitions. Pages of
 * records still coming (an attempt with more than {@link
 * CoordinatorClient#MAX_RECORDS_PER_MAPPER_END} records) wait in {@link #pending} until the
 * attempt's last MapperEnd.
 *
 * <p>Readers get the records of their partition and map range only, in the pages of {@link
 * ShuffleCommit#answer} ({@link #page}). Thread safe.
 */
final class MapRecordStore {
  /** Bytes counted for one MapRecords entry besides its records (tags, lengths, map, attempt). */
  static final int ENTRY_OVERHEAD = 24;

  /** One ended attempt's records; a map's attempts form a list in increasing attempt order. */
  private static final class Ended {
    final int attempt;
    final PartitionRecords records;
    Ended next;

    Ended(int attempt, PartitionRecords records) {
      this.attempt = attempt;
      this.records = records;
    }
  }

  private final Ended[] byMap;
  private final Map<Long, List<PartitionRecords>> pending = new HashMap<>();

  MapRecordStore(int numMaps) {
    this.byMap = new Ended[numMaps];
  }

  /**
   * Takes a page of an attempt's records.
   *
   * @param more true when more pages of the attempt follow: the attempt has not ended yet
   */
  synchronized void add(int mapIndex, int attempt, PartitionRecords page, boolean more) {
    long key = ((long) mapIndex << 32) | (attempt & 0xFFFFFFFFL);
    List<PartitionRecords> pages = pending.computeIfAbsent(key, k -> new ArrayList<>());
    pages.add(page);
    if (more) {
      return;
    }
    pending.remove(key);
    PartitionRecords all = PartitionRecords.concat(pages);
    Ended previous = null;
    Ended e = byMap[mapIndex];
    while (e != null && e.attempt < attempt) {
      previous = e;
      e = e.next;
    }
    if (e != null && e.attempt == attempt) {
      return; // a repeated MapperEnd: the first one counts
    }
    Ended added = new Ended(attempt, all);
    added.next = e;
    if (previous == null) {
      byMap[mapIndex] = added;
    } else {
      previous.next = added;
    }
  }

  /**
   * Adds to {@code answer} every attempt of maps [startMap, endMap) that ended with records
   * (CommittedShuffle.recorded_maps and recorded_attempts).
   */
  synchronized void addRecorded(CommittedShuffle.Builder answer, int startMap, int endMap) {
    int previous = 0;
    for (int m = Math.max(0, startMap); m < Math.min(endMap, byMap.length); m++) {
      for (Ended e = byMap[m]; e != null; e = e.next) {
        answer.addRecordedMaps(m - previous).addRecordedAttempts(e.attempt);
        previous = m;
      }
    }
  }

  /**
   * Adds to {@code answer} the records of partitions [start, end) of maps [startMap, endMap), from
   * {@code resume} on (or the first), in at most {@code maxBytes} (counting {@link
   * PartitionRecords#MAX_WIRE_BYTES} a record); sets records_next when more remain, also when none
   * fit.
   */
  synchronized void page(
      CommittedShuffle.Builder answer,
      int start,
      int end,
      int startMap,
      int endMap,
      RecordCursor resume,
      int maxBytes) {
    long used = 0;
    int fromMap = resume == null ? Math.max(0, startMap) : resume.getMapIndex();
    for (int m = fromMap; m < Math.min(endMap, byMap.length); m++) {
      for (Ended e = byMap[m]; e != null; e = e.next) {
        boolean resumed = resume != null && m == resume.getMapIndex();
        if (resumed && e.attempt < resume.getAttempt()) {
          continue;
        }
        int fromPartition =
            resumed && e.attempt == resume.getAttempt()
                ? Math.max(start, resume.getPartitionId())
                : start;
        int from = e.records.firstAtOrAfter(fromPartition);
        int to = e.records.firstAtOrAfter(end);
        if (from >= to) {
          continue;
        }
        long fit = (maxBytes - used - ENTRY_OVERHEAD) / PartitionRecords.MAX_WIRE_BYTES;
        if (fit <= 0) {
          answer.setRecordsNext(cursor(m, e.attempt, e.records.partition(from)));
          return;
        }
        int upTo = (int) Math.min(to, from + fit);
        answer.addMapRecords(
            MapRecords.newBuilder()
                .setMapIndex(m)
                .setAttempt(e.attempt)
                .setRecords(e.records.encode(from, upTo)));
        used += ENTRY_OVERHEAD + (long) PartitionRecords.MAX_WIRE_BYTES * (upTo - from);
        if (upTo < to) {
          answer.setRecordsNext(cursor(m, e.attempt, e.records.partition(upTo)));
          return;
        }
      }
    }
  }

  private static RecordCursor cursor(int map, int attempt, int partition) {
    return RecordCursor.newBuilder()
        .setMapIndex(map)
        .setAttempt(attempt)
        .setPartitionId(partition)
        .build();
  }

  /**
   * Per partition of {@code [0, numPartitions)}, the bytes the servers acknowledged to every
   * attempt that ended with records, summed: what the committed splits of that partition must hold
   * at least ({@link CommitCompleteness}).
   */
  synchronized long[] acknowledgedBytes(int numPartitions) {
    long[] bytes = new long[numPartitions];
    for (Ended e : byMap) {
      for (; e != null; e = e.next) {
        for (int i = 0; i < e.records.size(); i++) {
          int p = e.records.partition(i);
          if (p >= 0 && p < numPartitions) {
            bytes[p] += e.records.bytes(i);
          }
        }
      }
    }
    return bytes;
  }

  /** Bytes held by the records of ended attempts (for tests and logs). */
  synchronized long footprintBytes() {
    long bytes = 8L * byMap.length;
    for (Ended e : byMap) {
      for (; e != null; e = e.next) {
        bytes += 32 + e.records.footprintBytes();
      }
    }
    return bytes;
  }
}
