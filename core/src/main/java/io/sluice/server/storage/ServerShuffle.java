package io.sluice.server.storage;

import io.sluice.common.CrashPoints;
import io.sluice.common.Ids;
import io.sluice.protocol.MapPartitionId;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A registered shuffle on this server and its splits. Once commit starts, no new split is created
 * and pushes are answered STAGE_ENDED. Thread safe.
 *
 * <p><b>Restarts.</b> Every new split and every commit is told to the {@link ShuffleStateListener}
 * (the state store) before it is acknowledged. When the server stops, each open split is sealed
 * (new data is answered HARD_SPLIT) and committed; after a restart the shuffle comes back with
 * those committed splits ({@link #restoreCommittedSplit}), which refuse new data (HARD_SPLIT) and
 * are part of the result of the stage commit. A shuffle that lost acknowledged data in a crash
 * ({@link #markLost}) fails its stage commit, naming the partitions, rather than report fewer
 * splits.
 */
public final class ServerShuffle {
  private static final Logger LOG = LoggerFactory.getLogger(ServerShuffle.class);

  private final String appId;
  private final int shuffleId;
  private final ShuffleShape shape;
  private final DataDirectories dirs;
  private final SplitTable splits = new SplitTable();

  /** Splits committed before this server started, from the state store. */
  private final Map<Long, CommittedSplitFile> restored = new ConcurrentHashMap<>();

  /**
   * Map partitions (Flink), by map index and attempt. Committed ones are recorded in the state
   * store and served again after a restart; ones still being written are dropped at a stop.
   */
  private final Map<Long, MapPartitionFile> mapPartitions = new ConcurrentHashMap<>();

  /**
   * Each split's commit, placement and record, by split id: made once, by whichever of the early
   * commit (decommission, stop) and the stage commit comes first, and answered to both. A second
   * placement would copy a local file the first one moved away.
   */
  private final Map<Long, CompletableFuture<CommittedSplitFile>> placements =
      new ConcurrentHashMap<>();

  private final ShuffleStateListener state;

  /** Whether the server takes new splits and map partitions (decommissioned, stopping). */
  private final Admission admission;

  /** Bytes its splits and map partitions took, replicas included (see ShuffleRegistry). */
  private final LongAdder pushedBytes = new LongAdder();

  private final LongAdder restoredBytes = new LongAdder();

  /** The application asked that every split go to the distributed tier (see DataDirectories). */
  private volatile boolean everySplitToDistributedTier;

  // guarded by this
  private CompletableFuture<List<CommittedSplitFile>> commit;
  private boolean discarded;
  private String lostReason;

  ServerShuffle(String appId, int shuffleId, ShuffleShape shape, DataDirectories dirs) {
    this(appId, shuffleId, shape, dirs, ShuffleStateListener.NONE, new Admission());
  }

  ServerShuffle(
      String appId,
      int shuffleId,
      ShuffleShape shape,
      DataDirectories dirs,
      ShuffleStateListener state,
      Admission admission) {
    this.appId = appId;
    this.shuffleId = shuffleId;
    this.shape = shape;
    this.dirs = dirs;
    this.state = state;
    this.admission = admission;
  }

  /**
   * The application asked (at registration) that every split of this shuffle go to the distributed
   * tier at commit, whatever its size; without that tier the splits stay local.
   */
  public void sendEverySplitToDistributedTier() {
    everySplitToDistributedTier = true;
  }

  public String appId() {
    return appId;
  }

  /** Bytes pushed to this shuffle that its splits or map partitions took. */
  public long pushedBytes() {
    return pushedBytes.sum();
  }

  /**
   * Bytes this server stores for the shuffle as its application's limits count them (a cheap sum,
   * read on every push while sluice.app.maxStoredBytes is set): what was pushed since the server
   * started, and the committed files it restored at start.
   */
  public long countedBytes() {
    return pushedBytes.sum() + restoredBytes.sum();
  }

  void countPushed(long bytes) {
    pushedBytes.add(bytes);
  }

  public int shuffleId() {
    return shuffleId;
  }

  /** What the shuffle registered: requests are checked against it. */
  public ShuffleShape shape() {
    return shape;
  }

  /** The id of split (partition, epoch) in {@link SplitTable}; of map (index, attempt) too. */
  static long splitId(int partitionId, int epoch) {
    return ((long) partitionId << 32) | (epoch & 0xffffffffL);
  }

  /**
   * The split to append to, created on first use; null once the shuffle is committed.
   *
   * @throws StorageUnavailableException when the split is new and no directory can take it, when
   *     the server is stopping or decommissioned, or when the split was committed before the server
   *     restarted: the push goes to a new location (HARD_SPLIT)
   */
  public ReducePartitionSplit splitForPush(int partitionId, int epoch) {
    long id = splitId(partitionId, epoch);
    ReducePartitionSplit split = splits.get(id);
    return split != null ? split : openSplit(partitionId, epoch, id);
  }

  /**
   * {@link #splitForPush} for a split not in the table yet: a method of its own, so the lookup
   * every pushed batch makes stays small when compiled, without the split's creation inlined into
   * it.
   */
  private synchronized ReducePartitionSplit openSplit(int partitionId, int epoch, long id) {
    if (commit != null || discarded) {
      return null;
    }
    if (restored.containsKey(id)) {
      throw new StorageUnavailableException(
          Ids.split(appId, shuffleId, partitionId, epoch)
              + " was committed when this server last stopped and takes no more data;"
              + " push to a new location");
    }
    SplitKey key = new SplitKey(appId, shuffleId, partitionId, epoch);
    String refusal = admission.newSplitRefusal(key);
    if (refusal != null) {
      throw new StorageUnavailableException(refusal + "; push to a new location");
    }
    ReducePartitionSplit split = splits.get(id); // another thread may have added it meanwhile
    if (split == null) {
      split = dirs.newSplit(key);
      state.splitOpened(key);
      splits.add(id, split);
    }
    return split;
  }

  /**
   * The map partition region {@code regionIndex} of map {@code mapIndex} attempt {@code attempt}
   * goes to; region 0 creates it.
   *
   * @throws IllegalArgumentException naming the partition when a later region names a partition
   *     this server does not have, or the shuffle was dropped
   * @throws StorageUnavailableException when the server is stopping or no directory can take it
   */
  public MapPartitionFile mapPartitionForRegion(
      int mapIndex, int attempt, int numSubpartitions, int regionIndex) {
    long id = splitId(mapIndex, attempt);
    MapPartitionFile file = mapPartitions.get(id);
    if (file != null) {
      return file;
    }
    MapPartitionId key = new MapPartitionId(appId, shuffleId, mapIndex, attempt);
    if (regionIndex != 0) {
      throw new IllegalArgumentException(
          "region "
              + regionIndex
              + " of "
              + key
              + " names a partition this server does not have (released, or the server"
              + " restarted since region 0)");
    }
    synchronized (this) {
      if (discarded) {
        throw new IllegalArgumentException(this + " was unregistered; " + key + " is refused");
      }
      if (admission.isStopping()) {
        throw new StorageUnavailableException(
            "this server is stopping and takes no new map partition (" + key + ")");
      }
      return mapPartitions.computeIfAbsent(id, k -> dirs.newMapPartition(key, numSubpartitions));
    }
  }

  /**
   * Commits a map partition; the state store records it before the commit completes, so a restarted
   * server serves it again.
   */
  public CompletableFuture<CommittedMapPartition> commitMapPartition(
      MapPartitionFile file, int numRegions) {
    return file.commit(numRegions)
        .thenCompose(
            c -> {
              state.mapPartitionCommitted(c);
              return state.recorded().thenApply(v -> c);
            });
  }

  /** Restart: a map partition committed before the server stopped, whose files were found whole. */
  public void restoreMapPartition(CommittedMapPartition committed) {
    MapPartitionId key = committed.key();
    if (!key.appId().equals(appId) || key.shuffleId() != shuffleId) {
      throw new IllegalArgumentException(key + " does not belong to " + this);
    }
    mapPartitions.put(splitId(key.mapIndex(), key.attempt()), dirs.restoredMapPartition(committed));
    restoredBytes.add(committed.length());
  }

  /** A map partition of this shuffle, or null. */
  public MapPartitionFile mapPartition(int mapIndex, int attempt) {
    return mapPartitions.get(splitId(mapIndex, attempt));
  }

  /** Drops a map partition and deletes its files; completes at once when there is none. */
  public CompletableFuture<Void> releaseMapPartition(int mapIndex, int attempt) {
    MapPartitionFile file = mapPartitions.remove(splitId(mapIndex, attempt));
    if (file == null) {
      return CompletableFuture.completedFuture(null);
    }
    state.mapPartitionRemoved(file.key());
    return file.discard();
  }

  /** Map partitions of this shuffle on this server. */
  public int mapPartitionCount() {
    return mapPartitions.size();
  }

  /** Map partitions of this shuffle being written that took data after {@code sinceNanos}. */
  int mapPartitionsBeingWrittenSince(long sinceNanos) {
    int n = 0;
    for (MapPartitionFile m : mapPartitions.values()) {
      if (m.isBeingWrittenSince(sinceNanos)) {
        n++;
      }
    }
    return n;
  }

  /**
   * Restart: a split committed before the server stopped, whose file was found whole (in the
   * distributed tier at {@code remotePath} when not null). Called before the server serves.
   */
  public void restoreCommittedSplit(
      SplitKey key,
      Path path,
      long length,
      List<Long> chunkOffsets,
      MapIndexSet mapIndexes,
      String remotePath) {
    if (!key.appId().equals(appId) || key.shuffleId() != shuffleId) {
      throw new IllegalArgumentException(key + " does not belong to " + this);
    }
    restored.put(
        splitId(key.partitionId(), key.epoch()),
        new CommittedSplitFile(key, path, length, chunkOffsets, mapIndexes, remotePath));
    restoredBytes.add(length);
  }

  /** Restart: the stage commit had finished; it completes again with the restored splits. */
  public synchronized void restoreStageCommitted() {
    if (commit == null) {
      commit = CompletableFuture.completedFuture(inSplitOrder(restored.values()));
    }
  }

  /**
   * Restart: acknowledged data of this shuffle was lost (a crash before its split was committed, or
   * a committed file gone). Its stage commit fails with {@code reason} instead of reporting fewer
   * splits.
   */
  public synchronized void markLost(String reason) {
    lostReason = reason;
  }

  /** Splits restored from the state store at start. */
  public int restoredSplitCount() {
    return restored.size();
  }

  /** Adds every split of this shuffle to {@code out}. */
  void collectSplits(List<ReducePartitionSplit> out) {
    out.addAll(splits.values());
  }

  /** True once {@link #commit()} has been called. */
  public synchronized boolean isCommitStarted() {
    return commit != null;
  }

  /** The committed file of a split, or null if there is none (yet). */
  public CommittedSplitFile committedSplit(int partitionId, int epoch) {
    CompletableFuture<List<CommittedSplitFile>> c;
    synchronized (this) {
      c = commit;
    }
    if (c == null || !c.isDone() || c.isCompletedExceptionally()) {
      return null;
    }
    // in (partition, epoch) order (see commit): a reducer's open of one of thousands of splits
    // must not walk them all
    List<CommittedSplitFile> files = c.join();
    int low = 0;
    int high = files.size() - 1;
    while (low <= high) {
      int mid = (low + high) >>> 1;
      SplitKey k = files.get(mid).key();
      int order =
          k.partitionId() != partitionId
              ? Integer.compare(k.partitionId(), partitionId)
              : Integer.compare(k.epoch(), epoch);
      if (order == 0) {
        return files.get(mid);
      }
      if (order < 0) {
        low = mid + 1;
      } else {
        high = mid - 1;
      }
    }
    return null;
  }

  /**
   * Commits every split. Idempotent: a second call returns the first call's future. Completes with
   * the committed splits in (partition, epoch) order, so that the commit answer can be paged (see
   * {@code io.sluice.protocol.SplitPages}); exceptionally, naming the splits, when any split fails
   * to commit.
   */
  public CompletableFuture<List<CommittedSplitFile>> commit() {
    Collection<ReducePartitionSplit> toCommit;
    String lost;
    synchronized (this) {
      if (commit != null) {
        return commit;
      }
      commit = new CompletableFuture<>();
      toCommit = new ArrayList<>(splits.values());
      lost = lostReason;
    }
    CompletableFuture<List<CommittedSplitFile>> result = commit;
    if (lost != null) {
      // what was pushed since the restart cannot make the shuffle whole: drop it (memory and
      // files) before answering, rather than hold it until the application goes
      List<CompletableFuture<Void>> discards = new ArrayList<>();
      for (ReducePartitionSplit s : toCommit) {
        discards.add(s.discard());
      }
      CompletableFuture.allOf(discards.toArray(new CompletableFuture<?>[0]))
          .whenComplete((v, e) -> result.completeExceptionally(new IOException(lost)));
      return result;
    }
    List<CompletableFuture<CommittedSplitFile>> futures = new ArrayList<>();
    for (ReducePartitionSplit s : toCommit) {
      futures.add(commitAndRecord(s));
    }
    CompletableFuture.allOf(futures.toArray(new CompletableFuture<?>[0]))
        .whenComplete(
            (v, error) -> {
              if (error != null) {
                result.completeExceptionally(error);
                return;
              }
              List<CommittedSplitFile> files = new ArrayList<>(restored.values());
              for (CompletableFuture<CommittedSplitFile> f : futures) {
                files.add(f.join());
              }
              state.shuffleCommitted(appId, shuffleId, shape);
              state.recorded().thenRun(() -> result.complete(inSplitOrder(files)));
            });
    return result;
  }

  private static List<CommittedSplitFile> inSplitOrder(Collection<CommittedSplitFile> files) {
    List<CommittedSplitFile> sorted = new ArrayList<>(files);
    sorted.sort(
        Comparator.comparingInt((CommittedSplitFile f) -> f.key().partitionId())
            .thenComparingInt(f -> f.key().epoch()));
    return List.copyOf(sorted);
  }

  /**
   * Commits a split, moves it to the distributed tier when the storage policy sends it there, and
   * has the state store record where it is (synced with {@code sluice.commit.fsync}) before the
   * commit completes. Nothing waits: the completion follows the copy and the store's writer. Done
   * once per split: a later call (the stage commit after a decommission committed the split early)
   * returns the first call's future.
   */
  private CompletableFuture<CommittedSplitFile> commitAndRecord(ReducePartitionSplit split) {
    SplitKey key = split.key();
    CompletableFuture<CommittedSplitFile> mine = new CompletableFuture<>();
    CompletableFuture<CommittedSplitFile> earlier =
        placements.putIfAbsent(splitId(key.partitionId(), key.epoch()), mine);
    if (earlier != null) {
      return earlier;
    }
    placeAndRecord(split)
        .whenComplete(
            (file, error) -> {
              if (error != null) {
                mine.completeExceptionally(error);
              } else {
                mine.complete(file);
              }
            });
    return mine;
  }

  private CompletableFuture<CommittedSplitFile> placeAndRecord(ReducePartitionSplit split) {
    return split
        .commit()
        .thenCompose(file -> dirs.place(file, everySplitToDistributedTier))
        .thenCompose(
            file -> {
              if (file.remotePath() != null && isDiscarded()) {
                // unregistered while it was copied: its shuffle's files are already deleted
                dirs.deleteRemoteFile(file.remotePath());
              }
              state.splitCommitted(file);
              return state
                  .recorded()
                  .thenApply(
                      v -> {
                        CrashPoints.reach(CrashPoints.SPLIT_AFTER_RECORD);
                        return file;
                      });
            });
  }

  /**
   * Server stop or decommission: seals every split (new data is answered HARD_SPLIT) and commits it
   * with all it accepted. A split that fails to commit is logged, naming it, and left to {@link
   * #discardUncommittedSplits()}.
   *
   * @param sealMapPartitions a stop: map partitions still being written are refused from now on (a
   *     decommission lets them finish)
   * @return completes, never exceptionally, with the splits committed now
   */
  CompletableFuture<List<CommittedSplitFile>> sealAndCommitSplits(boolean sealMapPartitions) {
    List<ReducePartitionSplit> open;
    synchronized (this) {
      open = new ArrayList<>(splits.values());
    }
    if (sealMapPartitions) {
      // a map partition is committed by its writer only; one still being written is refused from
      // now on and dropped below, and the engine reruns its producer
      for (MapPartitionFile m : mapPartitions.values()) {
        m.seal();
      }
    }
    List<CompletableFuture<CommittedSplitFile>> futures = new ArrayList<>();
    for (ReducePartitionSplit s : open) {
      s.seal();
      if (s.isCommitted()) {
        continue;
      }
      futures.add(
          commitAndRecord(s)
              .exceptionally(
                  e -> {
                    LOG.error(
                        "Could not commit {} early (server stopping or decommissioned); its data"
                            + " is lost: {}",
                        s.key(),
                        e.getMessage());
                    return null;
                  }));
    }
    return CompletableFuture.allOf(futures.toArray(new CompletableFuture<?>[0]))
        .thenApply(
            v -> {
              List<CommittedSplitFile> files = new ArrayList<>();
              for (CompletableFuture<CommittedSplitFile> f : futures) {
                CommittedSplitFile file = f.join();
                if (file != null) {
                  files.add(file);
                }
              }
              return files;
            });
  }

  /** Splits still taking data or committing. */
  public int openSplitCount() {
    int n = 0;
    for (ReducePartitionSplit s : splits.values()) {
      if (!s.isCommitted()) {
        n++;
      }
    }
    return n;
  }

  /** Committed splits, including those restored at start. */
  public int committedSplitCount() {
    int n = restored.size();
    for (ReducePartitionSplit s : splits.values()) {
      if (s.isCommitted()) {
        n++;
      }
    }
    return n;
  }

  /** Bytes this shuffle holds on this server: accepted by its splits and map partitions. */
  public long storedBytes() {
    long bytes = 0;
    for (CommittedSplitFile f : restored.values()) {
      bytes += f.length();
    }
    for (ReducePartitionSplit s : splits.values()) {
      bytes += s.acceptedBytes();
    }
    for (MapPartitionFile m : mapPartitions.values()) {
      bytes += m.acceptedBytes();
    }
    return bytes;
  }

  /** Server stop: deletes the files of the splits that are not committed. */
  CompletableFuture<Void> discardUncommittedSplits() {
    List<CompletableFuture<Void>> futures = new ArrayList<>();
    for (ReducePartitionSplit s : splits.values()) {
      if (!s.isCommitted()) {
        futures.add(s.discard());
      }
    }
    for (MapPartitionFile m : mapPartitions.values()) {
      if (!m.isCommitted()) {
        futures.add(m.discard());
      }
    }
    return CompletableFuture.allOf(futures.toArray(new CompletableFuture<?>[0]));
  }

  private synchronized boolean isDiscarded() {
    return discarded;
  }

  /** Discards every split and deletes the shuffle's directories once their flushers are done. */
  public CompletableFuture<Void> discard() {
    synchronized (this) {
      discarded = true;
    }
    List<CompletableFuture<Void>> futures = new ArrayList<>();
    for (ReducePartitionSplit s : splits.values()) {
      futures.add(s.discard());
    }
    for (MapPartitionFile m : mapPartitions.values()) {
      futures.add(m.discard());
    }
    return CompletableFuture.allOf(futures.toArray(new CompletableFuture<?>[0]))
        .thenCompose(v -> dirs.deleteShuffleDirs(appId, shuffleId));
  }

  @Override
  public String toString() {
    return Ids.shuffle(appId, shuffleId);
  }
}
