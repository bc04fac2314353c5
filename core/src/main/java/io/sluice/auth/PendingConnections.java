package io.sluice.auth;

import java.net.InetAddress;
import java.util.HashMap;
import java.util.Map;

/**
 * The connections of one endpoint that are open but have not authenticated yet, counted per peer
 * address, so that one peer cannot hold every connection slot of the endpoint ({@code
 * sluice.network.server.maxConnections}) with connections that never prove anything. Bound: at most
 * {@code maxPerPeer} per address; the map holds only addresses with at least one. Thread safe:
 * connections of one endpoint run on several event loops.
 */
final class PendingConnections {
  private final int maxPerPeer;

  /** Refusals and deadline closes are logged at most once per this many nanoseconds each. */
  private static final long LOG_EVERY_NANOS = 10_000_000_000L;

  // guarded by this
  private final Map<InetAddress, Integer> pending = new HashMap<>();
  private long lastRefusalLog = Long.MIN_VALUE;
  private long refusalsNotLogged;
  private long lastDeadlineLog = Long.MIN_VALUE;
  private long deadlinesNotLogged;

  /**
   * @param maxPerPeer at least 1 ({@code sluice.auth.maxPendingPerPeer})
   */
  PendingConnections(int maxPerPeer) {
    if (maxPerPeer < 1) {
      throw new IllegalArgumentException("maxPerPeer must be at least 1, got " + maxPerPeer);
    }
    this.maxPerPeer = maxPerPeer;
  }

  /**
   * Counts a new unauthenticated connection from {@code peer}.
   *
   * @return false, counting nothing, when {@code peer} already has {@code maxPerPeer}
   */
  synchronized boolean tryAdd(InetAddress peer) {
    int n = pending.getOrDefault(peer, 0);
    if (n >= maxPerPeer) {
      return false;
    }
    pending.put(peer, n + 1);
    return true;
  }

  /** A connection counted by {@link #tryAdd} authenticated or closed; called once for each. */
  synchronized void remove(InetAddress peer) {
    Integer n = pending.get(peer);
    if (n == null) {
      throw new IllegalStateException("no unauthenticated connection of " + peer + " is counted");
    }
    if (n == 1) {
      pending.remove(peer);
    } else {
      pending.put(peer, n - 1);
    }
  }

  /** Unauthenticated connections open from {@code peer}. */
  synchronized int count(InetAddress peer) {
    return pending.getOrDefault(peer, 0);
  }

  /**
   * Whether to log a refused connection now (at most once per 10 s, so a flood cannot flood the
   * log): -1 for no, else how many refusals went unlogged before this one.
   */
  synchronized long refusalToLog(long nowNanos) {
    if (lastRefusalLog != Long.MIN_VALUE && nowNanos - lastRefusalLog < LOG_EVERY_NANOS) {
      refusalsNotLogged++;
      return -1;
    }
    lastRefusalLog = nowNanos;
    long skipped = refusalsNotLogged;
    refusalsNotLogged = 0;
    return skipped;
  }

  /** As {@link #refusalToLog}, for connections closed at the authentication deadline. */
  synchronized long deadlineToLog(long nowNanos) {
    if (lastDeadlineLog != Long.MIN_VALUE && nowNanos - lastDeadlineLog < LOG_EVERY_NANOS) {
      deadlinesNotLogged++;
      return -1;
    }
    lastDeadlineLog = nowNanos;
    long skipped = deadlinesNotLogged;
    deadlinesNotLogged = 0;
    return skipped;
  }

  int maxPerPeer() {
    return maxPerPeer;
  }
}
