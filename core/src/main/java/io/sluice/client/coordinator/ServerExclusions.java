package io.sluice.client.coordinator;

import io.sluice.client.ClientContext;
import io.sluice.common.Clock;
import io.sluice.protocol.proto.ServerAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Servers that failed (could not be reached, or failed a request) are left out of placement for
 * {@code sluice.coordinator.excludeDuration}, so new shuffles and moved partitions go to the others
 * instead of waiting on a dead server again. The other coordinators in this JVM (the other jobs of
 * a Flink JobManager, a Spark driver's next application) leave it out too, for a quarter of that: a
 * server one application found dead is likely dead for the next, but the evidence is second-hand.
 * When every server is excluded, all are used again: placing somewhere beats failing the job.
 * Thread safe.
 */
final class ServerExclusions {
  private static final Logger LOG = LoggerFactory.getLogger(ServerExclusions.class);

  private final long durationMillis;
  private final Clock clock;
  private final Map<ServerAddress, Long> excludedUntil = new ConcurrentHashMap<>();

  /** What every coordinator of this JVM excluded, each for a quarter of its own duration. */
  private static final Map<ServerAddress, Long> HOST_WIDE = new ConcurrentHashMap<>();

  ServerExclusions(long durationMillis, Clock clock) {
    this.durationMillis = durationMillis;
    this.clock = clock;
  }

  /** Forgets what the coordinators of this JVM excluded (tests with clocks of their own). */
  static void forgetHostWide() {
    HOST_WIDE.clear();
  }

  void exclude(ServerAddress server, String reason) {
    if (durationMillis <= 0) {
      return;
    }
    HOST_WIDE.merge(server, clock.millis() + durationMillis / 4, Math::max);
    Long before = excludedUntil.put(server, clock.millis() + durationMillis);
    if (before == null || before < clock.millis()) {
      LOG.warn(
          "Leaving Sluice server {} out of placement for {} ms: {}",
          ClientContext.format(server),
          durationMillis,
          reason);
    }
  }

  boolean isExcluded(ServerAddress server) {
    return durationMillis > 0 && (isIn(excludedUntil, server) || isIn(HOST_WIDE, server));
  }

  private boolean isIn(Map<ServerAddress, Long> excluded, ServerAddress server) {
    Long until = excluded.get(server);
    if (until == null) {
      return false;
    }
    if (until <= clock.millis()) {
      excluded.remove(server, until);
      return false;
    }
    return true;
  }

  /** The servers not excluded now, in order; all of them when every one is excluded. */
  List<ServerAddress> usable(List<ServerAddress> servers) {
    List<ServerAddress> usable = new ArrayList<>(servers.size());
    for (ServerAddress s : servers) {
      if (!isExcluded(s)) {
        usable.add(s);
      }
    }
    return usable.isEmpty() ? servers : usable;
  }
}
