package io.sluice.client.mappartition;

import io.netty.util.concurrent.DefaultThreadFactory;
import io.sluice.client.ClientContext;
import io.sluice.client.ReplicaRule;
import io.sluice.client.ServerHeartbeats;
import io.sluice.client.ServerRacks;
import io.sluice.client.ServerRequests;
import io.sluice.client.ServerRestartWait;
import io.sluice.common.Futures;
import io.sluice.common.Ids;
import io.sluice.protocol.MapPartitionId;
import io.sluice.protocol.StatusException;
import io.sluice.protocol.proto.ServerAddress;
import io.sluice.protocol.proto.Status;
import java.io.Closeable;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Collection;
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
 * reported lost and skipped for {@code sluice.coordinator.excludeDuration}. When no server takes a
 * partition because those that could are away or stopping (a restart), placement waits for them, up
 * to {@code sluice.client.serverRestartWait}, instead of failing the producer's deployment.
 *
 * <p><b>Replicas.</b> With two copies ({@code sluice.replication.factor} 2) a map partition gets a
 * primary, chosen round robin as above, and a replica by {@link ReplicaRule}, the rule of {@code
 * PartitionLocations} for reduce partitions: the first server after it in the list that is on
 * another rack and answers (racks from {@code sluice.topology.script}, resolved once per host),
 * else the first after it on another host that answers, else the first after it that answers. With
 * a single server that answers, the partition gets one copy. A lost server is reported as before;
 * which partitions it costs is the caller's business (those with no other copy).
 */
public final class MapPartitionPlacement implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(MapPartitionPlacement.class);

  private final ClientContext context;
  private final String appId;
  private final List<InetSocketAddress> servers;
  private final ServerRacks racks;
  private final Consumer<InetSocketAddress> serverLost;
  private final ExecutorService placer;
  private final ServerHeartbeats heartbeats;
  private final AtomicInteger next = new AtomicInteger();
  private final Set<InetSocketAddress> used = ConcurrentHashMap.newKeySet();
  private final Map<InetSocketAddress, Long> excludedUntil = new ConcurrentHashMap<>();
  // servers that refused connections, while this application waits for them to come back
  private final Set<InetSocketAddress> awaited = ConcurrentHashMap.newKeySet();

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
    this.racks =
        context.racks(
            servers.stream().map(InetSocketAddress::getHostString).collect(Collectors.toList()));
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
                  unreachable(s, why);
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
    return place(shuffleId, numMaps, numSubpartitions, 1).thenApply(copies -> copies.get(0));
  }

  /**
   * Like {@link #place(int, int, int)} with {@code copies} (1 or 2) servers: the primary, then the
   * replica (see the class comment), each registered. Fewer when fewer servers answer.
   */
  public CompletableFuture<List<InetSocketAddress>> place(
      int shuffleId, int numMaps, int numSubpartitions, int copies) {
    if (copies < 1 || copies > 2) {
      throw new IllegalArgumentException("a map partition has one or two copies, not " + copies);
    }
    return CompletableFuture.supplyAsync(
        () -> placeNow(shuffleId, numMaps, numSubpartitions, copies), placer);
  }

  private List<InetSocketAddress> placeNow(
      int shuffleId, int numMaps, int numSubpartitions, int copies) {
    ServerRestartWait.Wait wait = null;
    while (true) {
      Failures failures = new Failures();
      List<InetSocketAddress> placed =
          tryPlace(shuffleId, numMaps, numSubpartitions, copies, failures);
      if (placed != null) {
        return placed;
      }
      String why =
          "no Sluice server could take a map partition of "
              + Ids.shuffle(appId, shuffleId)
              + ": "
              + String.join("; ", failures.messages);
      if (!failures.awayOrStopping) {
        throw new IllegalStateException(why);
      }
      if (wait == null) {
        wait = context.restarts().start();
        LOG.warn(
            "{}; waiting up to {} ms for them to come back (sluice.client.serverRestartWait)",
            why,
            context.restarts().waitMillis());
      }
      try {
        if (!wait.pause()) {
          throw new IllegalStateException(
              why + " (waited " + context.restarts().waitMillis() + " ms for a restart)");
        }
      } catch (InterruptedIOException e) {
        throw new IllegalStateException(why + " (placement stopped)", e);
      }
    }
  }

  /** Why the servers tried refused, and whether any of them is away or stopping. */
  private static final class Failures {
    final List<String> messages = new ArrayList<>();
    boolean awayOrStopping;

    void add(InetSocketAddress s, Throwable failure) {
      messages.add(format(s) + ": " + failure.getMessage());
      awayOrStopping |= ServerRestartWait.awayOrStopping(failure);
    }
  }

  /** One round over the servers; null when none took the partition. */
  private List<InetSocketAddress> tryPlace(
      int shuffleId, int numMaps, int numSubpartitions, int copies, Failures failures) {
    List<InetSocketAddress> candidates = new ArrayList<>();
    for (InetSocketAddress s : servers) {
      if (!excluded(s)) {
        candidates.add(s);
      }
    }
    if (candidates.isEmpty()) {
      // placing somewhere beats failing the job
      candidates.addAll(servers);
    }
    int start = Math.floorMod(next.getAndIncrement(), candidates.size());
    for (int i = 0; i < candidates.size(); i++) {
      InetSocketAddress s = candidates.get((start + i) % candidates.size());
      if (register(s, shuffleId, numMaps, numSubpartitions, failures)) {
        List<InetSocketAddress> placed = new ArrayList<>(copies);
        placed.add(s);
        if (copies > 1) {
          InetSocketAddress replica =
              replica(
                  candidates,
                  (start + i) % candidates.size(),
                  shuffleId,
                  numMaps,
                  numSubpartitions);
          if (replica != null) {
            placed.add(replica);
          } else {
            LOG.warn(
                "No second Sluice server answers for a replica of a map partition of {}; it gets"
                    + " one copy, on {}",
                Ids.shuffle(appId, shuffleId),
                format(s));
          }
        }
        return placed;
      }
    }
    return null;
  }

  /**
   * The replica of a partition placed on {@code candidates[primary]}: the first candidate in {@link
   * ReplicaRule#order} that registers the shuffle; null if none.
   */
  private InetSocketAddress replica(
      List<InetSocketAddress> candidates,
      int primary,
      int shuffleId,
      int numMaps,
      int numSubpartitions) {
    List<String> hosts = new ArrayList<>(candidates.size());
    List<String> candidateRacks = new ArrayList<>(candidates.size());
    for (InetSocketAddress c : candidates) {
      hosts.add(c.getHostString());
      candidateRacks.add(racks.rack(c.getHostString()));
    }
    Failures failures = new Failures();
    for (int j : ReplicaRule.order(hosts, candidateRacks, primary)) {
      InetSocketAddress s = candidates.get(j);
      if (!excluded(s) && register(s, shuffleId, numMaps, numSubpartitions, failures)) {
        return s;
      }
    }
    return null;
  }

  /** Registers the shuffle on {@code s}; on failure notes why, reports it lost, returns false. */
  private boolean register(
      InetSocketAddress s, int shuffleId, int numMaps, int numSubpartitions, Failures failures) {
    try {
      context.call(
          appId,
          address(s),
          ServerRequests.registerShuffle(
              appId, shuffleId, numMaps, numSubpartitions, context.conf()));
      used.add(s);
      return true;
    } catch (StatusException e) {
      failures.add(s, e);
      if (e.status() == Status.DECOMMISSIONING) {
        // taken out for maintenance: what it holds is still served, so nothing is lost
        decommissioned(s, e.getMessage());
      } else {
        lost(s, e.getMessage());
      }
      return false;
    } catch (IOException e) {
      failures.add(s, e);
      unreachable(s, e);
      return false;
    }
  }

  /**
   * A server could not be reached. One that refuses or drops connections may be restarting ({@link
   * ServerRestartWait}): it gets no new partitions, and its partitions count as lost only if it has
   * not answered again within {@code sluice.client.serverRestartWait} (its readers wait as long).
   * Any other failure, or no wait, reports it lost now.
   */
  private void unreachable(InetSocketAddress s, IOException failure) {
    if (!ServerRestartWait.mayBeRestarting(failure) || context.restarts().waitMillis() == 0) {
      lost(s, failure.getMessage());
      return;
    }
    excludedUntil.put(s, System.currentTimeMillis() + context.conf().excludeDurationMillis());
    if (!awaited.add(s)) {
      return; // already waiting for it
    }
    LOG.warn(
        "Sluice server {} does not take connections for application {}; it gets no new map"
            + " partitions, and the copies on it count as lost unless it is back within {} ms"
            + " (sluice.client.serverRestartWait): {}",
        format(s),
        appId,
        context.restarts().waitMillis(),
        failure.getMessage());
    context
        .restarts()
        .retryAsync(
            address(s),
            "a heartbeat of application " + appId,
            () -> context.pingAsync(appId, address(s), context.conf().heartbeatIntervalMillis()))
        .whenComplete(
            (ok, error) -> {
              awaited.remove(s);
              if (error != null && !(Futures.cause(error) instanceof StatusException)) {
                excludedUntil.remove(s); // so that lost() reports it
                lost(s, Futures.cause(error).getMessage());
              } else {
                LOG.info("Sluice server {} answers application {} again", format(s), appId);
              }
            });
  }

  private boolean excluded(InetSocketAddress s) {
    Long until = excludedUntil.get(s);
    return until != null && until > System.currentTimeMillis();
  }

  /**
   * Heartbeats {@code servers} for this application, as if it had placed partitions there: a new
   * coordinator taking over an application (a JobManager failover) keeps what the one before
   * placed.
   */
  public void adopt(Collection<InetSocketAddress> servers) {
    used.addAll(servers);
  }

  /**
   * Stops heartbeating and placing, and leaves the application's files on the servers: a
   * coordinator that hands its application over (a JobManager losing leadership) calls this instead
   * of {@link #close}. A successor that {@link #adopt}s the servers within {@code
   * sluice.app.timeout} keeps the files; otherwise the servers expire the application and delete
   * them.
   */
  public void detach() {
    stop();
  }

  /** Stops heartbeating and placing; returns the servers used, which it forgets. */
  private List<InetSocketAddress> stop() {
    heartbeats.close();
    placer.shutdownNow();
    List<InetSocketAddress> servers = List.copyOf(used);
    used.clear();
    return servers;
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

  /** Leaves a decommissioned server out of placement for a while; its partitions stay readable. */
  private void decommissioned(InetSocketAddress s, String reason) {
    long until = System.currentTimeMillis() + context.conf().excludeDurationMillis();
    Long before = excludedUntil.put(s, until);
    if (before == null || before <= System.currentTimeMillis()) {
      LOG.info(
          "Sluice server {} is being decommissioned; application {} places no new map partitions"
              + " on it for {} ms: {}",
          format(s),
          appId,
          context.conf().excludeDurationMillis(),
          reason);
    }
  }

  /** Leaves a server out of placement for a while and reports it lost (once per exclusion). */
  private void lost(InetSocketAddress s, String reason) {
    long until = System.currentTimeMillis() + context.conf().excludeDurationMillis();
    Long before = excludedUntil.put(s, until);
    if (before == null || before <= System.currentTimeMillis()) {
      LOG.warn(
          "Sluice server {} does not answer for application {}; the map partition copies on it"
              + " are lost and it gets no new ones for {} ms: {}",
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
    for (InetSocketAddress s : stop()) {
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
  }
}
