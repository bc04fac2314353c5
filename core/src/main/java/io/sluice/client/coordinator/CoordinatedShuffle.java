package io.sluice.client.coordinator;

import io.sluice.client.ClientContext;
import io.sluice.client.PartitionLocations;
import io.sluice.protocol.IndexRanges;
import io.sluice.protocol.StatusException;
import io.sluice.protocol.proto.CommittedSplit;
import io.sluice.protocol.proto.PartitionLocation;
import io.sluice.protocol.proto.ServerAddress;
import io.sluice.protocol.proto.Status;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * The coordinator's record of one shuffle: where each partition is written now, every server that
 * ever held one of its splits, which attempt of each map won, and the commit. Thread safe (all
 * methods synchronized; the commit future completes outside the lock).
 *
 * <p>Memory is O(servers + moves + maps), never O(partitions): the locations are the placement rule
 * ({@link PartitionLocations}) plus the partitions that moved, and the partitions of a server are
 * computed from the rule and the moves when a failed commit asks for them ({@link #partitionsOn}).
 */
final class CoordinatedShuffle {
  private final int shuffleId;
  private final int numMaps;
  private final PartitionLocations placement;
  // the newest location of every partition that moved off the placement rule
  private final Map<Integer, PartitionLocation> moves = new HashMap<>();
  // for each server a partition moved to, those partitions (any epoch above 0)
  private final Map<ServerAddress, Set<Integer>> movedOnto = new LinkedHashMap<>();
  // placement plus moves, built when asked after a move
  private PartitionLocations current;
  private final int[] winningAttempts;
  // servers that acknowledged data to any attempt that ended: the engine, not this coordinator,
  // decides which attempt of a map counts, so a failed commit on any of them may lose counted data
  private final Set<ServerAddress> serversWithEndedData = new HashSet<>();
  // the integrity records of ended attempts (has its own lock)
  private final MapRecordStore records;
  private int completedMaps;
  private final CompletableFuture<ShuffleCommit> committed = new CompletableFuture<>();
  private boolean commitStarted;
  // servers asked to commit that have not answered yet
  private final Set<ServerAddress> commitUnanswered = new LinkedHashSet<>();

  /** A shuffle whose partitions start where the placement rule {@code placement} puts them. */
  CoordinatedShuffle(int shuffleId, int numMaps, PartitionLocations placement) {
    if (placement.numMoves() > 0) {
      throw new IllegalArgumentException(
          "shuffle " + shuffleId + " starts at epoch 0 everywhere, not with moved partitions");
    }
    this.shuffleId = shuffleId;
    this.numMaps = numMaps;
    this.placement = placement;
    this.winningAttempts = new int[numMaps];
    this.records = new MapRecordStore(numMaps);
    Arrays.fill(winningAttempts, -1);
  }

  int shuffleId() {
    return shuffleId;
  }

  int numMaps() {
    return numMaps;
  }

  int numPartitions() {
    return placement.numPartitions();
  }

  /** 1, or 2 when its partitions have replicas. */
  int replicationFactor() {
    return placement.replicationFactor();
  }

  /** Where every partition is written now: O(servers + moves). */
  synchronized PartitionLocations locations() {
    if (current == null) {
      current = placement.withMoves(moves.values());
    }
    return current;
  }

  synchronized PartitionLocation current(int partitionId) {
    PartitionLocation moved = moves.get(partitionId);
    return moved != null ? moved : placement.location(partitionId);
  }

  /** Records a new location; returns false (changing nothing) if the partition moved on already. */
  synchronized boolean moveTo(PartitionLocation next) {
    PartitionLocation now = current(next.getPartitionId());
    if (now.getEpoch() >= next.getEpoch()) {
      return false;
    }
    moves.put(next.getPartitionId(), next);
    movedOnto.computeIfAbsent(next.getServer(), s -> new HashSet<>()).add(next.getPartitionId());
    if (next.hasReplica()) {
      movedOnto.computeIfAbsent(next.getReplica(), s -> new HashSet<>()).add(next.getPartitionId());
    }
    current = null;
    return true;
  }

  /**
   * Records a map completion; the first attempt to report wins.
   *
   * @return true when this completion was the last one missing (the stage ended)
   */
  synchronized boolean mapperEnded(int mapIndex, int attempt, List<ServerAddress> serversWritten) {
    serversWithEndedData.addAll(serversWritten);
    if (winningAttempts[mapIndex] >= 0) {
      return false;
    }
    winningAttempts[mapIndex] = attempt;
    completedMaps++;
    return completedMaps == numMaps;
  }

  /** Starts the commit once; returns false if it has started already. */
  synchronized boolean startCommit() {
    if (commitStarted) {
      return false;
    }
    commitStarted = true;
    return true;
  }

  synchronized boolean isCommitStarted() {
    return commitStarted;
  }

  /** Records that the commit was sent to {@code servers}, which have not answered yet. */
  synchronized void commitSentTo(List<ServerAddress> servers) {
    commitUnanswered.addAll(servers);
  }

  /** Records that {@code server} answered the commit (with its splits or an error). */
  synchronized void commitAnswered(ServerAddress server) {
    commitUnanswered.remove(server);
  }

  /**
   * What the commit waits for now, for errors: "3 of 8 maps never reported their end (MapperEnd):
   * maps [2, 4), 7" before it started, "... [h:p, ...] did not answer it" while it runs.
   */
  synchronized String awaited() {
    if (committed.isDone()) {
      return "nothing (the commit is complete)";
    }
    if (!commitStarted) {
      BitSet missing = new BitSet(numMaps);
      for (int m = 0; m < numMaps; m++) {
        if (winningAttempts[m] < 0) {
          missing.set(m);
        }
      }
      return (numMaps - completedMaps)
          + " of "
          + numMaps
          + " maps never reported their end (MapperEnd): maps "
          + IndexRanges.of(missing, 0, numMaps, 16);
    }
    List<String> servers = new ArrayList<>();
    for (ServerAddress s : commitUnanswered) {
      servers.add(ClientContext.format(s));
    }
    return "the commit was sent to every server holding a split; "
        + (servers.isEmpty() ? "its result is being assembled" : servers + " did not answer it");
  }

  /**
   * Fails the commit, for the readers that wait for it, when it will never complete (the shuffle
   * was unregistered, the coordinator stops); does nothing once it completed.
   */
  void abandon(String why) {
    committed.completeExceptionally(new StatusException(Status.SHUFFLE_NOT_REGISTERED, why));
  }

  /** Every server that was given a partition of this shuffle at some epoch. */
  synchronized List<ServerAddress> servers() {
    Set<ServerAddress> all = new LinkedHashSet<>(placement.serversWithPartitions());
    all.addAll(movedOnto.keySet());
    return new ArrayList<>(all);
  }

  /**
   * The partitions that had a location (primary or replica) on {@code server} at some epoch.
   * Computed from the placement rule and the moves: a transient BitSet (partitions/8 bytes), for a
   * failed commit.
   */
  synchronized BitSet partitionsOn(ServerAddress server) {
    BitSet partitions = placement.placedOn(server);
    for (int p : movedOnto.getOrDefault(server, Set.of())) {
      partitions.set(p);
    }
    return partitions;
  }

  /** True when {@code server} acknowledged data to a map attempt that ended (any attempt). */
  synchronized boolean holdsEndedData(ServerAddress server) {
    return serversWithEndedData.contains(server);
  }

  /** The integrity records of the shuffle's ended map attempts. */
  MapRecordStore records() {
    return records;
  }

  synchronized int[] winningAttempts() {
    return winningAttempts.clone();
  }

  CompletableFuture<ShuffleCommit> committed() {
    return committed;
  }

  /**
   * Completes the commit with every split the servers reported and the partitions lost with a
   * failed server.
   */
  void completeCommit(List<CommittedSplit> splits, BitSet lost, String lostReason) {
    committed.complete(
        new ShuffleCommit(numMaps, winningAttempts(), splits, lost, lostReason, records));
  }
}
