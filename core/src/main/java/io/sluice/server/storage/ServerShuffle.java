package io.sluice.server.storage;

import io.sluice.common.Ids;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A registered shuffle on this server and its splits. Once commit starts, no new split is created
 * and pushes are answered STAGE_ENDED. Thread safe.
 */
public final class ServerShuffle {
  private final String appId;
  private final int shuffleId;
  private final DataDirectories dirs;
  private final Map<Long, ReducePartitionSplit> splits = new ConcurrentHashMap<>();
  // guarded by this
  private CompletableFuture<List<CommittedSplitFile>> commit;
  private boolean discarded;

  ServerShuffle(String appId, int shuffleId, DataDirectories dirs) {
    this.appId = appId;
    this.shuffleId = shuffleId;
    this.dirs = dirs;
  }

  public String appId() {
    return appId;
  }

  public int shuffleId() {
    return shuffleId;
  }

  private static long splitId(int partitionId, int epoch) {
    return ((long) partitionId << 32) | (epoch & 0xffffffffL);
  }

  /**
   * The split to append to, created on first use; null once the shuffle is committed.
   *
   * @throws StorageUnavailableException when the split is new and no directory can take it
   */
  public ReducePartitionSplit splitForPush(int partitionId, int epoch) {
    long id = splitId(partitionId, epoch);
    ReducePartitionSplit split = splits.get(id);
    if (split != null) {
      return split;
    }
    synchronized (this) {
      if (commit != null || discarded) {
        return null;
      }
      return splits.computeIfAbsent(
          id, k -> dirs.newSplit(new SplitKey(appId, shuffleId, partitionId, epoch)));
    }
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
    for (CommittedSplitFile f : c.join()) {
      if (f.key().partitionId() == partitionId && f.key().epoch() == epoch) {
        return f;
      }
    }
    return null;
  }

  /**
   * Commits every split. Idempotent: a second call returns the first call's future. Completes
   * exceptionally, naming the splits, when any split fails to commit.
   */
  public CompletableFuture<List<CommittedSplitFile>> commit() {
    Collection<ReducePartitionSplit> toCommit;
    synchronized (this) {
      if (commit != null) {
        return commit;
      }
      commit = new CompletableFuture<>();
      toCommit = new ArrayList<>(splits.values());
    }
    CompletableFuture<List<CommittedSplitFile>> result = commit;
    List<CompletableFuture<CommittedSplitFile>> futures = new ArrayList<>();
    for (ReducePartitionSplit s : toCommit) {
      futures.add(s.commit());
    }
    CompletableFuture.allOf(futures.toArray(new CompletableFuture<?>[0]))
        .whenComplete(
            (v, error) -> {
              if (error != null) {
                result.completeExceptionally(error);
                return;
              }
              List<CommittedSplitFile> files = new ArrayList<>();
              for (CompletableFuture<CommittedSplitFile> f : futures) {
                files.add(f.join());
              }
              result.complete(files);
            });
    return result;
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
    return CompletableFuture.allOf(futures.toArray(new CompletableFuture<?>[0]))
        .thenRun(() -> dirs.deleteShuffleDirs(appId, shuffleId));
  }

  @Override
  public String toString() {
    return Ids.shuffle(appId, shuffleId);
  }
}
