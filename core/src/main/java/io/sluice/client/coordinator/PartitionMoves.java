package io.sluice.client.coordinator;

import io.sluice.client.ClientContext;
import io.sluice.client.ClientMetrics;
import io.sluice.client.PartitionLocations;
import io.sluice.client.ReplicaRule;
import io.sluice.client.ServerRacks;
import io.sluice.client.ServerRestartWait;
import io.sluice.common.Ids;
import io.sluice.protocol.StatusException;
import io.sluice.protocol.proto.PartitionLocation;
import io.sluice.protocol.proto.ServerAddress;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The coordinator's decisions about where a partition goes when its location fails: a new epoch on
 * another server, with a replica on yet another one when the shuffle has replicas: the first usable
 * server after the primary on another rack than the primary (the surviving copy, when one survives)
 * if racks are known and there is one, else on another host, else any other ({@link ReplicaRule}).
 * A full split moves alone; a failed server moves every partition of the shuffle it held in one
 * round, keeping the surviving copy. Each shuffle's moves run under its lock; the servers are asked
 * to register the shuffle once per round. Called on the coordinator's own threads, never on an
 * event loop.
 */
final class PartitionMoves {
  private static final Logger LOG = LoggerFactory.getLogger(PartitionMoves.class);

  /** Registers a shuffle on a server (it may already be registered there). */
  interface Registrar {
    void register(ServerAddress server, int shuffleId, int numMaps, int numPartitions)
        throws IOException, StatusException;
  }

  private final String appId;
  private final List<ServerAddress> servers;
  private final ServerRacks racks;
  private final ServerExclusions exclusions;
  private final Registrar registrar;
  private final ClientMetrics metrics;

  PartitionMoves(
      String appId,
      List<ServerAddress> servers,
      ServerRacks racks,
      ServerExclusions exclusions,
      Registrar registrar,
      ClientMetrics metrics) {
    this.appId = appId;
    this.metrics = metrics;
    this.servers = servers;
    this.racks = racks;
    this.exclusions = exclusions;
    this.registrar = registrar;
  }

  /**
   * Moves a partition off the location that failed at {@code failedEpoch} (a split that is full, or
   * refused more data): the next epoch goes to another server (the same one if it is the only one),
   * with a new replica when the shuffle has replicas. Concurrent calls for the same failure get the
   * same new location.
   */
  PartitionLocation revive(CoordinatedShuffle s, int partitionId, int failedEpoch, String reason)
      throws IOException {
    int shuffleId = s.shuffleId();
    checkPartition(s, partitionId);
    synchronized (s) {
      checkNotCommitted(s, partitionId);
      PartitionLocation now = s.current(partitionId);
      if (now.getEpoch() > failedEpoch) {
        return now;
      }
      List<ServerAddress> candidates = exclusions.usable(servers);
      int from = candidates.indexOf(now.getServer());
      ServerAddress primary = candidates.get(Math.floorMod(from + 1, candidates.size()));
      PartitionLocation next = moveOne(s, now, primary, Set.of(), new HashMap<>());
      metrics.partitionsMoved(1);
      LOG.info(
          "Moved {} partition {} from {} (epoch {}) to {} (epoch {}): {}",
          Ids.shuffle(appId, shuffleId),
          partitionId,
          ClientContext.format(now.getServer()),
          now.getEpoch(),
          describe(next),
          next.getEpoch(),
          reason);
      return next;
    }
  }

  /**
   * A server failed under a partition's location at {@code failedEpoch} (it could not be reached or
   * failed the request; {@code replicaFailed}: the location's replica, else its primary). The
   * server gets no new partitions for {@code sluice.coordinator.excludeDuration}, and every
   * partition of the shuffle that it holds now, as primary or replica, moves in this one round
   * (batch revive): writers of other partitions on it learn their new locations from this answer
   * instead of each failing and asking. A surviving copy stays in the new location (the replica
   * becomes the primary when the primary failed), so its server keeps taking the partition.
   *
   * @return every location of the shuffle now
   */
  PartitionLocations reviveAfterServerFailure(
      CoordinatedShuffle s, int partitionId, int failedEpoch, String reason, boolean replicaFailed)
      throws IOException {
    int shuffleId = s.shuffleId();
    checkPartition(s, partitionId);
    synchronized (s) {
      checkNotCommitted(s, partitionId);
      PartitionLocation now = s.current(partitionId);
      if (now.getEpoch() > failedEpoch) {
        return s.locations();
      }
      if (replicaFailed && !now.hasReplica()) {
        throw new IllegalArgumentException(
            "partition "
                + partitionId
                + " of "
                + Ids.shuffle(appId, shuffleId)
                + " has no replica");
      }
      ServerAddress failed = replicaFailed ? now.getReplica() : now.getServer();
      exclusions.exclude(failed, reason);
      List<ServerAddress> candidates = exclusions.usable(servers);
      Set<ServerAddress> avoid = candidates.size() > 1 ? Set.of(failed) : Set.of();
      Map<ServerAddress, IOException> registered = new HashMap<>();
      int moved = 0;
      for (int p = 0; p < s.numPartitions(); p++) {
        PartitionLocation at = s.current(p);
        boolean onPrimary = at.getServer().equals(failed);
        boolean onReplica = at.hasReplica() && at.getReplica().equals(failed);
        if (!onPrimary && !onReplica) {
          continue;
        }
        // the surviving copy's server stays; otherwise spread the partitions over the others
        ServerAddress primary =
            onPrimary
                ? (at.hasReplica() && !onReplica ? at.getReplica() : pick(candidates, p, avoid))
                : at.getServer();
        moveOne(s, at, primary, avoid, registered);
        moved++;
      }
      metrics.serverFailed();
      metrics.partitionsMoved(moved);
      LOG.warn(
          "Server {} failed under {} partition {} (epoch {}): moved its {} partition(s) of the"
              + " shuffle in one round: {}",
          ClientContext.format(failed),
          Ids.shuffle(appId, shuffleId),
          partitionId,
          failedEpoch,
          moved,
          reason);
      return s.locations();
    }
  }

  private void checkPartition(CoordinatedShuffle s, int partitionId) {
    if (partitionId < 0 || partitionId >= s.numPartitions()) {
      throw new IllegalArgumentException(
          "partition " + partitionId + " is out of range for " + Ids.shuffle(appId, s.shuffleId()));
    }
  }

  private void checkNotCommitted(CoordinatedShuffle s, int partitionId) {
    if (s.isCommitStarted()) {
      // a server taking data now would never commit it: the writer is a late attempt
      throw new IllegalArgumentException(
          "cannot move partition "
              + partitionId
              + " of "
              + Ids.shuffle(appId, s.shuffleId())
              + ": the shuffle is committed; a rerun writes to a new generation");
    }
  }

  /** The candidate for partition {@code p}: spread by partition, not in {@code avoid}. */
  private static ServerAddress pick(
      List<ServerAddress> candidates, int p, Set<ServerAddress> avoid) {
    for (int i = 0; i < candidates.size(); i++) {
      ServerAddress c = candidates.get(Math.floorMod(p + i, candidates.size()));
      if (!avoid.contains(c)) {
        return c;
      }
    }
    return candidates.get(Math.floorMod(p, candidates.size()));
  }

  /**
   * Moves {@code now} to the next epoch on {@code primary} (or the next usable server that accepts
   * the shuffle), with a replica on another server (another rack, else another host, when possible)
   * when the shuffle has replicas. Registers the shuffle on each server once per round ({@code
   * registered}: the servers tried, with the failure of those that refused).
   */
  private PartitionLocation moveOne(
      CoordinatedShuffle s,
      PartitionLocation now,
      ServerAddress primary,
      Set<ServerAddress> avoid,
      Map<ServerAddress, IOException> registered)
      throws IOException {
    List<ServerAddress> candidates = exclusions.usable(servers);
    ServerAddress chosen = accepting(s, primary, candidates, avoid, null, registered);
    PartitionLocation.Builder next =
        PartitionLocation.newBuilder()
            .setPartitionId(now.getPartitionId())
            .setEpoch(now.getEpoch() + 1)
            .setServer(chosen);
    if (s.replicationFactor() > 1 && candidates.size() > 1) {
      ServerAddress replica = replicaFor(chosen, candidates, avoid);
      if (replica != null) {
        ServerAddress r = accepting(s, replica, candidates, avoid, chosen, registered);
        if (!r.equals(chosen)) {
          next.setReplica(r);
        }
      }
    }
    PartitionLocation moved = next.build();
    s.moveTo(moved);
    return moved;
  }

  /**
   * The replica of a copy on {@code primary}: by {@link ReplicaRule} over the candidates after it
   * (in order, wrapping) but {@code avoid}; null if none.
   */
  private ServerAddress replicaFor(
      ServerAddress primary, List<ServerAddress> candidates, Set<ServerAddress> avoid) {
    int at = candidates.indexOf(primary);
    List<ServerAddress> order = new ArrayList<>();
    order.add(primary);
    for (int i = 1; i <= candidates.size(); i++) {
      ServerAddress c = candidates.get(Math.floorMod(at + i, candidates.size()));
      if (!c.equals(primary) && !avoid.contains(c)) {
        order.add(c);
      }
    }
    int replica = ReplicaRule.choose(hosts(order), racks.racksOf(order), 0);
    return replica < 0 ? null : order.get(replica);
  }

  private static List<String> hosts(List<ServerAddress> servers) {
    List<String> hosts = new ArrayList<>(servers.size());
    for (ServerAddress s : servers) {
      hosts.add(s.getHost());
    }
    return hosts;
  }

  /**
   * {@code wanted} if the shuffle is registered on it (registering it there once per round), else
   * the next candidate that accepts it, never {@code notThis}.
   *
   * @throws ServersAwayException when every candidate refused because it is away or stopping (the
   *     partition may wait for them to come back)
   */
  private ServerAddress accepting(
      CoordinatedShuffle s,
      ServerAddress wanted,
      List<ServerAddress> candidates,
      Set<ServerAddress> avoid,
      ServerAddress notThis,
      Map<ServerAddress, IOException> registered)
      throws IOException {
    int from = Math.max(0, candidates.indexOf(wanted));
    IOException lastError = null;
    boolean allAway = true;
    for (int i = 0; i <= candidates.size(); i++) {
      ServerAddress c = i == 0 ? wanted : candidates.get((from + i) % candidates.size());
      if ((i > 0 && avoid.contains(c)) || c.equals(notThis)) {
        continue;
      }
      if (!registered.containsKey(c)) {
        IOException error = null;
        try {
          registrar.register(c, s.shuffleId(), s.numMaps(), s.numPartitions());
        } catch (IOException | StatusException e) {
          exclusions.exclude(
              c, "registering " + Ids.shuffle(appId, s.shuffleId()) + ": " + e.getMessage());
          error = new IOException(e.getMessage(), e);
        }
        registered.put(c, error);
      }
      if (registered.get(c) == null) {
        return c;
      }
      lastError = registered.get(c);
      allAway &= ServerRestartWait.awayOrStopping(lastError);
    }
    String message =
        "No Sluice server can take a partition of "
            + Ids.shuffle(appId, s.shuffleId())
            + ": "
            + lastError;
    if (allAway) {
      throw new ServersAwayException(
          message + " (every server is away or stopping: ask again while they restart)", lastError);
    }
    throw new IOException(message, lastError);
  }

  private static String describe(PartitionLocation l) {
    return ClientContext.format(l.getServer())
        + (l.hasReplica() ? " (replica " + ClientContext.format(l.getReplica()) + ")" : "");
  }
}
