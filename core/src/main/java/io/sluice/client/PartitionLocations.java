package io.sluice.client;

import io.sluice.protocol.proto.PartitionLocation;
import io.sluice.protocol.proto.ServerAddress;
import io.sluice.protocol.proto.ShuffleLocations;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Where every partition of a shuffle is written now, in O(servers + moves) memory and bytes,
 * whatever the partition count: the coordinator's placement rule, partition p at epoch 0 on {@code
 * placementServers[(start + p) % placementServers.size()]}, plus the partitions that moved since
 * (to a new epoch, on a split or a failed server) with their newest epoch and server. The wire form
 * is {@link ShuffleLocations} (see sluice.proto): 16,777,217 partitions on three servers take a few
 * dozen bytes, where one location per partition took 400 MB. Immutable and thread safe; {@link
 * #location} is a binary search over the moves.
 *
 * <p><b>Replicas.</b> With replication factor 2 every location has a second server. At epoch 0 the
 * replica of the partitions of placement server {@code k} is ({@link ReplicaRule}) the first
 * placement server after {@code k} (in placement order, wrapping) on another rack, when {@code k}'s
 * rack is known and some placement server is on another known rack; else the first one after {@code
 * k} on another host; else {@code k + 1}. With a single placement server there is no replica. The
 * placement servers' racks travel with the locations ({@code ShuffleLocations.placement_racks};
 * none known in a message without them), so both sides compute the rule from the same servers and
 * racks. A moved partition carries its replica explicitly.
 */
public final class PartitionLocations {
  private final int shuffleId;
  private final int numPartitions;
  // placement servers first, then servers only moves name
  private final ServerAddress[] servers;
  private final int placementServers;
  // the rack of each placement server, "" when unknown
  private final String[] placementRacks;
  private final int start;
  // parallel, in increasing partition order
  private final int[] movedPartitions;
  private final int[] movedEpochs;
  private final int[] movedServers;
  private final int replicationFactor;
  // index (in servers) of the replica of each placement server's partitions; -1: none
  private final int[] placementReplicas;
  // parallel to movedPartitions: the replica's index in servers, -1: none
  private final int[] movedReplicas;

  private PartitionLocations(
      int shuffleId,
      int numPartitions,
      ServerAddress[] servers,
      int placementServers,
      String[] placementRacks,
      int start,
      int[] movedPartitions,
      int[] movedEpochs,
      int[] movedServers,
      int replicationFactor,
      int[] movedReplicas) {
    this.shuffleId = shuffleId;
    this.numPartitions = numPartitions;
    this.servers = servers;
    this.placementServers = placementServers;
    this.placementRacks = placementRacks;
    this.start = start;
    this.movedPartitions = movedPartitions;
    this.movedEpochs = movedEpochs;
    this.movedServers = movedServers;
    this.replicationFactor = replicationFactor;
    this.placementReplicas =
        replicaRule(servers, placementServers, placementRacks, replicationFactor);
    this.movedReplicas = movedReplicas;
  }

  /** For each placement server, the index of the one that holds its partitions' replicas. */
  private static int[] replicaRule(
      ServerAddress[] servers, int placementServers, String[] racks, int factor) {
    int[] replicas = new int[placementServers];
    Arrays.fill(replicas, -1);
    if (factor < 2 || placementServers < 2) {
      return replicas;
    }
    List<String> hosts = new ArrayList<>(placementServers);
    for (int k = 0; k < placementServers; k++) {
      hosts.add(servers[k].getHost());
    }
    for (int k = 0; k < placementServers; k++) {
      replicas[k] = ReplicaRule.choose(hosts, Arrays.asList(racks), k);
    }
    return replicas;
  }

  /**
   * Partitions placed round robin over {@code servers} at epoch 0, partition 0 on {@code
   * servers.get(start)}.
   */
  public static PartitionLocations roundRobin(
      int shuffleId, int numPartitions, List<ServerAddress> servers, int start) {
    return roundRobin(shuffleId, numPartitions, servers, start, 1);
  }

  /**
   * Like {@link #roundRobin(int, int, List, int)}, each partition with {@code replicationFactor}
   * copies (1 or 2; a single server holds one whatever the factor).
   */
  public static PartitionLocations roundRobin(
      int shuffleId,
      int numPartitions,
      List<ServerAddress> servers,
      int start,
      int replicationFactor) {
    return roundRobin(
        shuffleId, numPartitions, servers, start, replicationFactor, ServerRacks.UNKNOWN);
  }

  /**
   * Like {@link #roundRobin(int, int, List, int, int)}, the replicas placed by the servers' {@code
   * racks} as well as their hosts (see the class comment).
   */
  public static PartitionLocations roundRobin(
      int shuffleId,
      int numPartitions,
      List<ServerAddress> servers,
      int start,
      int replicationFactor,
      ServerRacks racks) {
    if (replicationFactor < 1 || replicationFactor > 2) {
      throw new IllegalArgumentException(
          "shuffle " + shuffleId + ": replication factor must be 1 or 2, not " + replicationFactor);
    }
    if (numPartitions < 0) {
      throw new IllegalArgumentException(
          "shuffle " + shuffleId + " cannot have " + numPartitions + " partitions");
    }
    if (servers.isEmpty() || start < 0 || start >= servers.size()) {
      throw new IllegalArgumentException(
          "shuffle "
              + shuffleId
              + ": cannot place partitions on "
              + servers.size()
              + " servers starting at "
              + start);
    }
    return new PartitionLocations(
        shuffleId,
        numPartitions,
        servers.toArray(new ServerAddress[0]),
        servers.size(),
        racks.racksOf(servers).toArray(new String[0]),
        start,
        new int[0],
        new int[0],
        new int[0],
        replicationFactor,
        new int[0]);
  }

  /**
   * The same placement with {@code moves} (each the newest location of a partition; at most one per
   * partition, epoch above 0) instead of the moves recorded here.
   */
  public PartitionLocations withMoves(Collection<PartitionLocation> moves) {
    List<PartitionLocation> sorted = new ArrayList<>(moves);
    sorted.sort(Comparator.comparingInt(PartitionLocation::getPartitionId));
    Map<ServerAddress, Integer> index = new LinkedHashMap<>();
    for (int i = 0; i < placementServers; i++) {
      index.putIfAbsent(servers[i], i);
    }
    List<ServerAddress> all = new ArrayList<>(Arrays.asList(servers).subList(0, placementServers));
    int[] partitions = new int[sorted.size()];
    int[] epochs = new int[sorted.size()];
    int[] serverIndexes = new int[sorted.size()];
    int[] replicaIndexes = new int[sorted.size()];
    for (int i = 0; i < sorted.size(); i++) {
      PartitionLocation l = sorted.get(i);
      checkPartition(l.getPartitionId());
      if (i > 0 && partitions[i - 1] == l.getPartitionId()) {
        throw new IllegalArgumentException(
            "shuffle " + shuffleId + ": partition " + l.getPartitionId() + " moved twice");
      }
      if (l.getEpoch() <= 0) {
        throw new IllegalArgumentException(
            "shuffle "
                + shuffleId
                + ": partition "
                + l.getPartitionId()
                + " moved to epoch "
                + l.getEpoch());
      }
      partitions[i] = l.getPartitionId();
      epochs[i] = l.getEpoch();
      serverIndexes[i] = indexOf(l.getServer(), index, all);
      replicaIndexes[i] = l.hasReplica() ? indexOf(l.getReplica(), index, all) : -1;
    }
    return new PartitionLocations(
        shuffleId,
        numPartitions,
        all.toArray(new ServerAddress[0]),
        placementServers,
        placementRacks,
        start,
        partitions,
        epochs,
        serverIndexes,
        replicationFactor,
        replicaIndexes);
  }

  private static int indexOf(
      ServerAddress server, Map<ServerAddress, Integer> index, List<ServerAddress> all) {
    return index.computeIfAbsent(
        server,
        s -> {
          all.add(s);
          return all.size() - 1;
        });
  }

  /**
   * Reads the wire form.
   *
   * @throws IllegalArgumentException naming the shuffle when it is inconsistent
   */
  public static PartitionLocations fromProto(ShuffleLocations p) {
    int shuffleId = p.getShuffleId();
    int moves = p.getMovedPartitionsCount();
    if (p.getNumPartitions() < 0
        || p.getPlacementServers() < 1
        || p.getPlacementServers() > p.getServersCount()
        || p.getStart() < 0
        || p.getStart() >= p.getPlacementServers()
        || p.getMovedEpochsCount() != moves
        || p.getMovedServersCount() != moves
        || p.getReplicationFactor() < 0
        || p.getReplicationFactor() > 2
        || (p.getMovedReplicasCount() != 0 && p.getMovedReplicasCount() != moves)
        || (p.getPlacementRacksCount() != 0
            && p.getPlacementRacksCount() != p.getPlacementServers())) {
      throw new IllegalArgumentException(
          "inconsistent locations of shuffle "
              + shuffleId
              + ": "
              + p.getNumPartitions()
              + " partitions, "
              + p.getPlacementServers()
              + " of "
              + p.getServersCount()
              + " servers placed from "
              + p.getStart()
              + ", "
              + moves
              + " moved partitions with "
              + p.getMovedEpochsCount()
              + " epochs and "
              + p.getMovedServersCount()
              + " servers, replication factor "
              + p.getReplicationFactor()
              + " and "
              + p.getMovedReplicasCount()
              + " moved replicas, "
              + p.getPlacementRacksCount()
              + " racks");
    }
    int[] partitions = new int[moves];
    int[] epochs = new int[moves];
    int[] serverIndexes = new int[moves];
    int[] replicaIndexes = new int[moves];
    long at = 0;
    for (int i = 0; i < moves; i++) {
      int delta = p.getMovedPartitions(i);
      at += delta;
      int server = p.getMovedServers(i);
      if ((i > 0 && delta < 1)
          || delta < 0
          || at >= p.getNumPartitions()
          || p.getMovedEpochs(i) < 1
          || server < 0
          || server >= p.getServersCount()) {
        throw new IllegalArgumentException(
            "inconsistent locations of shuffle "
                + shuffleId
                + ": moved partition "
                + at
                + " (delta "
                + delta
                + ") epoch "
                + p.getMovedEpochs(i)
                + " server "
                + server
                + " of "
                + p.getServersCount()
                + " in a shuffle of "
                + p.getNumPartitions()
                + " partitions");
      }
      int replica = p.getMovedReplicasCount() == 0 ? 0 : p.getMovedReplicas(i);
      if (replica < 0 || replica > p.getServersCount()) {
        throw new IllegalArgumentException(
            "inconsistent locations of shuffle "
                + shuffleId
                + ": moved partition "
                + at
                + " has replica "
                + (replica - 1)
                + " of "
                + p.getServersCount()
                + " servers");
      }
      partitions[i] = (int) at;
      epochs[i] = p.getMovedEpochs(i);
      serverIndexes[i] = server;
      replicaIndexes[i] = replica - 1;
    }
    String[] racks = new String[p.getPlacementServers()];
    Arrays.fill(racks, "");
    for (int i = 0; i < p.getPlacementRacksCount(); i++) {
      racks[i] = p.getPlacementRacks(i);
    }
    return new PartitionLocations(
        shuffleId,
        p.getNumPartitions(),
        p.getServersList().toArray(new ServerAddress[0]),
        p.getPlacementServers(),
        racks,
        p.getStart(),
        partitions,
        epochs,
        serverIndexes,
        Math.max(1, p.getReplicationFactor()),
        replicaIndexes);
  }

  /** The wire form; its size is O(servers + moves). */
  public ShuffleLocations toProto() {
    ShuffleLocations.Builder b =
        ShuffleLocations.newBuilder()
            .setShuffleId(shuffleId)
            .setNumPartitions(numPartitions)
            .addAllServers(Arrays.asList(servers))
            .setPlacementServers(placementServers)
            .setStart(start);
    if (replicationFactor > 1) {
      b.setReplicationFactor(replicationFactor);
    }
    if (Arrays.stream(placementRacks).anyMatch(r -> !r.isEmpty())) {
      b.addAllPlacementRacks(Arrays.asList(placementRacks));
    }
    int previous = 0;
    for (int i = 0; i < movedPartitions.length; i++) {
      b.addMovedPartitions(movedPartitions[i] - previous);
      b.addMovedEpochs(movedEpochs[i]);
      b.addMovedServers(movedServers[i]);
      if (replicationFactor > 1) {
        b.addMovedReplicas(movedReplicas[i] + 1);
      }
      previous = movedPartitions[i];
    }
    return b.build();
  }

  /** 1, or 2 when every location has a replica (where there is a second server). */
  public int replicationFactor() {
    return replicationFactor;
  }

  /** The shuffle (or generation) these locations belong to. */
  public int shuffleId() {
    return shuffleId;
  }

  public int numPartitions() {
    return numPartitions;
  }

  /** How many partitions moved off the placement rule. */
  public int numMoves() {
    return movedPartitions.length;
  }

  /**
   * The servers of the placement rule, in order (partition p at epoch 0 is on {@code
   * placementServers().get((start() + p) % placementServers().size())}).
   */
  public List<ServerAddress> placementServers() {
    return List.of(Arrays.copyOf(servers, placementServers));
  }

  /** The racks of {@link #placementServers()}, in order; {@code ""}: unknown. */
  public List<String> placementRacks() {
    return List.of(placementRacks);
  }

  public int start() {
    return start;
  }

  /**
   * The servers that hold partitions (or their replicas) at epoch 0: every placement server, or
   * fewer when there are fewer partitions.
   */
  public List<ServerAddress> serversWithPartitions() {
    Set<ServerAddress> used = new LinkedHashSet<>();
    for (int i = 0; i < Math.min(numPartitions, placementServers); i++) {
      int k = (start + i) % placementServers;
      used.add(servers[k]);
      if (placementReplicas[k] >= 0) {
        used.add(servers[placementReplicas[k]]);
      }
    }
    return new ArrayList<>(used);
  }

  /** The partitions placed at epoch 0 on {@code server}, as primary or replica (moves aside). */
  public BitSet placedOn(ServerAddress server) {
    BitSet partitions = new BitSet();
    for (int k = 0; k < placementServers; k++) {
      boolean primary = servers[k].equals(server);
      boolean replica = placementReplicas[k] >= 0 && servers[placementReplicas[k]].equals(server);
      if (primary || replica) {
        int first = Math.floorMod(k - start, placementServers);
        for (long p = first; p < numPartitions; p += placementServers) {
          partitions.set((int) p);
        }
      }
    }
    return partitions;
  }

  /** The current location of a partition, with its replica when it has one. */
  public PartitionLocation location(int partitionId) {
    PartitionLocation.Builder b =
        PartitionLocation.newBuilder()
            .setPartitionId(partitionId)
            .setEpoch(epoch(partitionId))
            .setServer(server(partitionId));
    ServerAddress replica = replica(partitionId);
    if (replica != null) {
      b.setReplica(replica);
    }
    return b.build();
  }

  /** The server that holds the partition's replica now, or null when it has none. */
  public ServerAddress replica(int partitionId) {
    int m = moved(partitionId);
    int index =
        m >= 0
            ? movedReplicas[m]
            : placementReplicas[(int) ((start + (long) partitionId) % placementServers)];
    return index >= 0 ? servers[index] : null;
  }

  /** The epoch a partition is written at now. */
  public int epoch(int partitionId) {
    int m = moved(partitionId);
    return m >= 0 ? movedEpochs[m] : 0;
  }

  /** The server a partition is written to now. */
  public ServerAddress server(int partitionId) {
    int m = moved(partitionId);
    return m >= 0
        ? servers[movedServers[m]]
        : servers[(int) ((start + (long) partitionId) % placementServers)];
  }

  private int moved(int partitionId) {
    checkPartition(partitionId);
    return movedPartitions.length == 0 ? -1 : Arrays.binarySearch(movedPartitions, partitionId);
  }

  private void checkPartition(int partitionId) {
    if (partitionId < 0 || partitionId >= numPartitions) {
      throw new IllegalArgumentException(
          "partition "
              + partitionId
              + " is out of range for shuffle "
              + shuffleId
              + " with "
              + numPartitions
              + " partitions");
    }
  }

  @Override
  public String toString() {
    return numPartitions
        + " partitions of shuffle "
        + shuffleId
        + " round robin over "
        + placementServers
        + " servers from "
        + start
        + (replicationFactor > 1 ? " with replicas" : "")
        + ", "
        + movedPartitions.length
        + " moved";
  }
}
