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
 * instead of waiting on a dead server again. When every server is excluded, all are used again:
 * placing somewhere beats failing the job. Thread safe.
 */
final class ServerExclusions {
  private static final Logger LOG = LoggerFactory.getLogger(ServerExclusions.class);

  private final long durationMillis;
  private final Clock clock;
  private final Map<ServerAddress, Long> excludedUntil = new ConcurrentHashMap<>();

  ServerExclusions(long durationMillis, Clock clock) {
    this.durationMillis = durationMillis;
    this.clock = clock;
  }

  void exclude(ServerAddress server, String reason) {
    if (durationMillis <= 0) {
      return;
    }
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
    Long until = excludedUntil.get(server);
    if (until == null) {
      return false;
    }
    if (until <= clock.millis()) {
      excludedUntil.remove(server, until);
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
