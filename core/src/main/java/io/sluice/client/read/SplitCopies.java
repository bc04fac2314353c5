package io.sluice.client.read;

import io.sluice.client.ServerRestartWait;
import io.sluice.protocol.proto.CommittedSplit;
import java.io.InterruptedIOException;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;

/**
 * The copies of the split a reader reads, and which one to read when the current one fails: the
 * split's other copy, not tried yet (replication); once every copy failed, and the last because its
 * server refused or dropped the connection as a restarting server does, the copies again in their
 * order after a pause, until {@code sluice.client.serverRestartWait} has passed since the first
 * such pause ({@link ServerRestartWait}). Not thread safe.
 */
final class SplitCopies {
  private final ServerRestartWait restarts;
  private List<CommittedSplit> all = List.of();
  private final Deque<CommittedSplit> untried = new ArrayDeque<>();
  private CommittedSplit current;
  private ServerRestartWait.Wait wait;

  SplitCopies(ServerRestartWait restarts) {
    this.restarts = restarts;
  }

  /** Starts a split: {@code copies} in the order to try them; returns the first. */
  CommittedSplit start(List<CommittedSplit> copies) {
    all = List.copyOf(copies);
    untried.clear();
    untried.addAll(all);
    current = untried.poll();
    wait = null;
    return current;
  }

  /** No split is being read. */
  void clear() {
    current = null;
  }

  /** The copy read last (it stays set when opening it failed); null between splits. */
  CommittedSplit current() {
    return current;
  }

  /**
   * The copy to read after the current one failed with {@code failure}, as the class says; null
   * when the read fails with it.
   *
   * @throws InterruptedIOException when interrupted during a pause
   */
  CommittedSplit next(Throwable failure) throws InterruptedIOException {
    if (current == null) {
      return null;
    }
    if (untried.isEmpty()) {
      if (wait == null) {
        wait = restarts.start();
      }
      if (!wait.pauseBeforeRetry(failure)) {
        return null;
      }
      untried.addAll(all);
    }
    current = untried.poll();
    return current;
  }

  /** Pauses for the servers of this split so far (0 when no copy was retried after a pause). */
  int pauses() {
    return wait == null ? 0 : wait.retries();
  }
}
