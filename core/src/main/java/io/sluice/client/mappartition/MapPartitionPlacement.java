package io.sluice.client.mappartition;

import io.netty.util.concurrent.DefaultThreadFactory;
import io.sluice.client.ClientContext;
import io.sluice.client.ServerHeartbeats;
import io.sluice.client.ServerRequests;
import io.sluice.common.Ids;
import io.sluice.protocol.MapPartitionId;
import io.sluice.protocol.StatusException;
import io.sluice.protocol.proto.ServerAddress;
import java.io.Closeable;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lifecycle side of map partitions for one application (hosted by Flink's ShuffleMaster, one
 * per job): places new map partitions on servers, registers shuffles there, heartbeats the
 * application so servers keep its files, releases partitions, and reports a server that stops
 * answering (its partitions are lost). Thread safe.
 *
 * <p>Placement is round robin over the servers that answer: every placement registers the shuffle
 * on the chosen server (idempotent on the server), so a server that is down is noticed at once,
 * reported lost and skipped for {@code sluice.coordinator.excludeDuration}.
 */
public final class MapPartitionPlacement implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(MapPartitionPlacement.class);

  private final ClientContext context;
  private final String appId;
  private final List<InetSocketAddress> servers;
  private final Consumer<InetSocketAddress> serverLost;
  private final ExecutorService placer;
  private final ServerHeartbeats heartbeats;
  private final AtomicInteger next = new AtomicInteger();
  private final Set<InetSocketAddress> used = ConcurrentHashMap.newKeySet();
  private final Map<InetSocketAddress, Long> excludedUntil = new ConcurrentHashMap<>();

  /**
   * @param servers the servers to place on
   * @param serverLost called with a server that stopped answering
   */
  public MapPartitionPlacement(
      ClientContext context,
      String appId,
      List<InetSocketAddress> servers,
      Consumer<InetSocketAddress> serverLost) {
    if (servers.isEmpty()) {
      throw new IllegalArgumentException("no Sluice servers to place map partitions on");
    }
    this.context = context;
    this.appId = Ids.checkAppId(appId);
    this.servers = List.copyOf(servers);
    this.serverLost = serverLost;
    this.placer =
        Executors.newSingleThreadExecutor(new DefaultThreadFactory("sluice-placement", true));
    this.heartbeats =
        new ServerHeartbeats(
            context,
            appId,
            () -> used.stream().map(MapPartitionPlacement::address).collect(Collectors.toList()),
            (server, why) -> {
              for (InetSocketAddress s : used) {
                if (address(s).equals(server)) {
                  lost(s, why);
                }
              }
            });
  }

  public String appId() {
    return appId;
  }

  /**
   * Picks a server for a new map partition of {@code shuffleId} and registers the shuffle there
   * with its shape: {@code numMaps} producers of {@code numSubpartitions} subpartitions each.
   */
  public CompletableFuture<InetSocketAddress> place(
      int shuffleId, int numMaps, int numSubpartitions) {
    return CompletableFuture.supplyAsync(
        () -> placeNow(shuffleId, numMaps, numSubpartitions), placer);
  }

  private InetSocketAddress placeNow(int shuffleId, int numMaps, int numSubpartitions) {
    List<InetSocketAddress> candidates = new ArrayList<>();
    long now = System.currentTimeMillis();
    for (InetSocketAddress s : servers) {
      Long until = excludedUntil.get(s);
      if (until == null || until <= now) {
        candidates.add(s);
      }
    }
    if (candidates.isEmpty()) {
      // placing somewhere beats failing the job
      candidates.addAll(servers);
    }
    int start = Math.floorMod(next.getAndIncrement(), candidates.size());
    List<String> failures = new ArrayList<>();
    for (int i = 0; i < candidates.size(); i++) {
      InetSocketAddress s = candidates.get((start + i) % candidates.size());
      try {
        context.call(
            appId,
            address(s),
            ServerRequests.registerShuffle(appId, shuffleId, numMaps, numSubpartitions));
        used.add(s);
        return s;
      } catch (IOException | StatusException e) {
        failures.add(format(s) + ": " + e.getMessage());
        lost(s, e.getMessage());
      }
    }
    throw new IllegalStateException(
        "no Sluice server could take a map partition of "
            + Ids.shuffle(appId, shuffleId)
            + ": "
            + String.join("; ", failures));
  }

  /** Deletes one map partition's files on its server; best effort, asynchronous. */
  public void release(MapPartitionId id, InetSocketAddress server) {
    context
        .callAsync(appId, address(server), ServerRequests.releaseMapPartition(id.ref()))
        .whenComplete(
            (m, e) -> {
              if (m != null) {
                m.release();
              } else {
                LOG.debug("Could not release {} on {}: {}", id, format(server), e.toString());
              }
            });
  }

  /** Leaves a server out of placement for a while and reports it lost (once per exclusion). */
  private void lost(InetSocketAddress s, String reason) {
    long until = System.currentTimeMillis() + context.conf().excludeDurationMillis();
    Long before = excludedUntil.put(s, until);
    if (before == null || before <= System.currentTimeMillis()) {
      LOG.warn(
          "Sluice server {} does not answer for application {}; its map partitions are lost and"
              + " it gets no new ones for {} ms: {}",
          format(s),
          appId,
          context.conf().excludeDurationMillis(),
          reason);
      if (used.remove(s)) {
        try {
          serverLost.accept(s);
        } catch (RuntimeException e) {
          LOG.error("Reporting lost server {} failed", format(s), e);
        }
      }
    }
  }

  private static ServerAddress address(InetSocketAddress s) {
    return ClientContext.address(s.getHostString(), s.getPort());
  }

  private static String format(InetSocketAddress s) {
    return s.getHostString() + ":" + s.getPort();
  }

  /**
   * Drops every file of the application on every server it used; best effort and asynchronous, so a
   * server that is down never holds up the caller (a job's end). A server that misses it expires
   * the application after {@code sluice.app.timeout} without heartbeats.
   */
  @Override
  public void close() {
    heartbeats.close();
    placer.shutdownNow();
    for (InetSocketAddress s : used) {
      context
          .callAsync(appId, address(s), ServerRequests.unregisterApplication(appId))
          .whenComplete(
              (m, e) -> {
                if (m != null) {
                  m.release();
                } else {
                  LOG.warn(
                      "Could not unregister application {} on {}: {}",
                      appId,
                      format(s),
                      e.getMessage());
                }
              });
    }
    used.clear();
  }
}
