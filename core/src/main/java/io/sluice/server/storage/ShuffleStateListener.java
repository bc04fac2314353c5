package io.sluice.server.storage;

import io.sluice.protocol.MapPartitionId;
import java.util.concurrent.CompletableFuture;

/**
 * Told of every change to what the server holds that must survive a restart, so that a state store
 * can record it (see {@code io.sluice.server.state.ServerStateStore}).
 *
 * <p>Contract: each method is called on the thread that makes the change (network threads for
 * registrations and new splits, flusher threads for commits), before the change is acknowledged to
 * a client, and possibly concurrently and more than once for the same change; implementations are
 * thread safe, fast and idempotent. They never throw: a listener that cannot record a change logs
 * it, naming the application, shuffle and split, and counts it.
 */
public interface ShuffleStateListener {
  /** Records nothing. */
  ShuffleStateListener NONE = new ShuffleStateListener() {};

  /**
   * Completes when every change told so far is recorded so that it survives a crash of the process;
   * a listener that records synchronously (or not at all) completes at once.
   */
  default CompletableFuture<Void> recorded() {
    return CompletableFuture.completedFuture(null);
  }

  /** An application was registered; {@code authKey} is its key (sluice.auth.enabled) or null. */
  default void applicationRegistered(String appId, byte[] authKey) {}

  default void shuffleRegistered(String appId, int shuffleId, ShuffleShape shape) {}

  /** A split was created; its data is in memory or in an {@code .inprogress} file. */
  default void splitOpened(SplitKey key) {}

  /** A split's file was completed and renamed; a reader may be sent to it from now on. */
  default void splitCommitted(CommittedSplitFile file) {}

  /** A map partition's files were completed and renamed; readers may open it from now on. */
  default void mapPartitionCommitted(CommittedMapPartition partition) {}

  /** A map partition and its files are being deleted. */
  default void mapPartitionRemoved(MapPartitionId key) {}

  /** The shuffle's stage commit finished: it takes no new split any more. */
  default void shuffleCommitted(String appId, int shuffleId, ShuffleShape shape) {}

  /** The shuffle and its files are being deleted. */
  default void shuffleRemoved(String appId, int shuffleId) {}

  /** The application, its shuffles and their files are being deleted. */
  default void applicationRemoved(String appId) {}
}
