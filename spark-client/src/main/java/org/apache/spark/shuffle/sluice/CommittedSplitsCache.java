package org.apache.spark.shuffle.sluice;

import io.sluice.client.coordinator.CoordinatorClient;
import io.sluice.common.Ids;
import io.sluice.protocol.PartitionRecords;
import io.sluice.protocol.StatusException;
import io.sluice.protocol.proto.CommittedShuffle;
import io.sluice.protocol.proto.CommittedSplit;
import io.sluice.protocol.proto.MapRecords;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * An executor's answers from the coordinator on where a committed shuffle's data is, so that its
 * reduce tasks do not each ask the driver. A reduce task of partitions [start, end) gets the answer
 * for the aligned block of partitions around them, every map included, from the first task of the
 * executor that asked for that block; it then reads the part of it for its own range, exactly what
 * the coordinator would have answered for that range. A generation's commit never changes once
 * made, so an answer stays right for as long as the shuffle lives.
 *
 * <p>Without it, every reduce task waits for the driver's answer, most of that wait for the
 * driver's and the executor's threads to be scheduled: on a job of many short reduce tasks, a
 * visible share of each task (docs/performance.md, "Scale 3").
 *
 * <p>Bounds: a block holds at most {@link #RECORDS_PER_BLOCK} integrity records (maps ×
 * partitions), so a task's own part is cheap to take out of it; the cache holds at most {@link
 * #MAX_BYTES} of answers and drops the least recently used past that, and a shuffle's answers when
 * Spark unregisters it. An answer naming lost partitions is not used: the reader asks for its own
 * range, as it did without the cache, and gets the coordinator's error for it. Thread safe.
 */
final class CommittedSplitsCache {
  static final int RECORDS_PER_BLOCK = 1 << 16;
  static final long MAX_BYTES = 64L << 20;

  private final long maxBytes;

  /** Answers, least recently used first; guarded by this. */
  private final LinkedHashMap<Key, Entry> entries = new LinkedHashMap<>(16, 0.75f, true);

  private long bytes; // guarded by this
  private long fetches; // guarded by this

  CommittedSplitsCache() {
    this(MAX_BYTES);
  }

  CommittedSplitsCache(long maxBytes) {
    this.maxBytes = maxBytes;
  }

  /** A block of partitions, by the coordinator and generation it comes from. */
  private static final class Key {
    final CoordinatorClient coordinator;
    final int generation;
    final int start;
    final int end;

    Key(CoordinatorClient coordinator, int generation, int start, int end) {
      this.coordinator = coordinator;
      this.generation = generation;
      this.start = start;
      this.end = end;
    }

    @Override
    public boolean equals(Object o) {
      if (!(o instanceof Key)) {
        return false;
      }
      Key k = (Key) o;
      return coordinator == k.coordinator
          && generation == k.generation
          && start == k.start
          && end == k.end;
    }

    @Override
    public int hashCode() {
      return Objects.hash(System.identityHashCode(coordinator), generation, start, end);
    }
  }

  private static final class Entry {
    final int sparkShuffleId;
    final CompletableFuture<Block> answer = new CompletableFuture<>();
    long size; // guarded by the cache
    boolean dropped; // guarded by the cache

    Entry(int sparkShuffleId) {
      this.sparkShuffleId = sparkShuffleId;
    }
  }

  /** The partitions a block holds when a shuffle has {@code numMaps} maps. */
  static int blockPartitions(int numMaps) {
    return Math.max(1, RECORDS_PER_BLOCK / Math.max(1, numMaps));
  }

  /**
   * The committed splits of generation {@code generation} of Spark shuffle {@code sparkShuffleId}
   * for partitions [start, end), to read maps [startMap, endMap) of them: from this executor's
   * block, the coordinator's answer for the range and every map (a {@link
   * io.sluice.client.read.PartitionReader} of the maps leaves the others' records out); asked
   * directly, as {@link CoordinatorClient#committedSplits(int, int, int, boolean, int, int)}
   * answers it. Either commits the shuffle now if need be.
   */
  CommittedShuffle committedSplits(
      CoordinatorClient coordinator,
      int sparkShuffleId,
      int generation,
      int numPartitions,
      int numMaps,
      int start,
      int end,
      int startMap,
      int endMap)
      throws IOException, StatusException {
    int per = blockPartitions(numMaps);
    int blockStart = start / per * per;
    int blockEnd = (int) Math.min(numPartitions, ((long) end + per - 1) / per * per);
    if (start >= end || blockStart > start || blockEnd < end) {
      return coordinator.committedSplits(generation, start, end, true, startMap, endMap);
    }
    Block block = block(coordinator, sparkShuffleId, generation, numMaps, blockStart, blockEnd);
    if (block == null || block.base.getNumLostPartitions() > 0) {
      return coordinator.committedSplits(generation, start, end, true, startMap, endMap);
    }
    return block.part(start, end);
  }

  /** The answer for a whole block, asked for once; null when asking failed (the caller asks). */
  private Block block(
      CoordinatorClient coordinator,
      int sparkShuffleId,
      int generation,
      int numMaps,
      int blockStart,
      int blockEnd)
      throws IOException, StatusException {
    Key key = new Key(coordinator, generation, blockStart, blockEnd);
    Entry entry;
    boolean asks;
    synchronized (this) {
      entry = entries.get(key);
      asks = entry == null;
      if (asks) {
        entry = new Entry(sparkShuffleId);
        entries.put(key, entry);
        fetches++;
      }
    }
    if (!asks) {
      try {
        return entry.answer.get();
      } catch (ExecutionException e) {
        return null;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("interrupted while another task asked the coordinator", e);
      }
    }
    Block answer = null;
    try {
      answer =
          new Block(
              coordinator.committedSplits(generation, blockStart, blockEnd, true, 0, numMaps),
              Ids.shuffle(coordinator.appId(), generation));
      return answer;
    } finally {
      if (answer == null) {
        synchronized (this) {
          entries.remove(key, entry);
        }
        entry.answer.completeExceptionally(new IOException("asking for the block failed"));
      } else {
        entry.answer.complete(answer);
        added(entry, answer.footprintBytes());
      }
    }
  }

  private synchronized void added(Entry entry, long size) {
    if (entry.dropped) {
      return; // its shuffle was unregistered meanwhile
    }
    entry.size = size;
    bytes += size;
    for (Iterator<Entry> oldest = entries.values().iterator();
        bytes > maxBytes && oldest.hasNext(); ) {
      Entry e = oldest.next();
      if (e != entry && e.answer.isDone()) {
        bytes -= e.size;
        e.dropped = true;
        oldest.remove();
      }
    }
  }

  /** Drops the answers of Spark shuffle {@code sparkShuffleId} (it was unregistered). */
  synchronized void forget(int sparkShuffleId) {
    Iterator<Entry> all = entries.values().iterator();
    while (all.hasNext()) {
      Entry e = all.next();
      if (e.sparkShuffleId == sparkShuffleId) {
        bytes -= e.size;
        e.dropped = true;
        all.remove();
      }
    }
  }

  /** How many blocks were asked for: the coordinator calls this cache saved are the rest. */
  synchronized long fetches() {
    return fetches;
  }

  synchronized long bytes() {
    return bytes;
  }

  /**
   * A block's answer, its integrity records decoded once for all the tasks that take their part of
   * it.
   */
  static final class Block {
    /** The answer without its splits and records. */
    final CommittedShuffle base;

    /** Its splits, in (partition, epoch) order as the coordinator lists them. */
    private final List<CommittedSplit> splits;

    private final List<MapRecords> maps = new ArrayList<>();
    private final List<PartitionRecords> records = new ArrayList<>();
    private final long footprint;

    /** Decodes {@code answer}, the coordinator's for {@code shuffle} (named in its errors). */
    Block(CommittedShuffle answer, String shuffle) throws IOException {
      base = answer.toBuilder().clearSplits().clearMapRecords().build();
      splits = answer.getSplitsList();
      long bytes = answer.getSerializedSize();
      for (MapRecords m : answer.getMapRecordsList()) {
        PartitionRecords decoded = PartitionRecords.fromCoordinator(m, shuffle);
        maps.add(m.toBuilder().clearRecords().build());
        records.add(decoded);
        bytes += decoded.footprintBytes();
      }
      footprint = bytes;
    }

    long footprintBytes() {
      return footprint;
    }

    /**
     * The part of the answer for partitions [start, end): their splits, and every map's records of
     * those partitions; what the coordinator answers for that range and every map.
     */
    CommittedShuffle part(int start, int end) {
      CommittedShuffle.Builder b = base.toBuilder();
      for (int i = firstSplitAtOrAfter(start); i < splits.size(); i++) {
        CommittedSplit s = splits.get(i);
        if (s.getPartitionId() >= end) {
          break;
        }
        b.addSplits(s);
      }
      for (int i = 0; i < maps.size(); i++) {
        PartitionRecords r = records.get(i);
        int from = r.firstAtOrAfter(start);
        int to = r.firstAtOrAfter(end);
        if (from < to) {
          b.addMapRecords(maps.get(i).toBuilder().setRecords(r.encode(from, to)));
        }
      }
      return b.build();
    }

    private int firstSplitAtOrAfter(int partition) {
      int low = 0;
      int high = splits.size();
      while (low < high) {
        int mid = (low + high) >>> 1;
        if (splits.get(mid).getPartitionId() < partition) {
          low = mid + 1;
        } else {
          high = mid;
        }
      }
      return low;
    }
  }
}
