package io.sluice.client.coordinator;

import io.sluice.protocol.proto.CommittedShuffle;
import io.sluice.protocol.proto.CommittedSplit;
import io.sluice.protocol.proto.PartitionLocation;
import io.sluice.protocol.proto.ServerAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * The coordinator's record of one shuffle: where each partition is written now, every server that
 * ever held one of its splits, which attempt of each map won, and the commit. Thread safe (all
 * methods synchronized; the commit future completes outside the lock).
 */
final class CoordinatedShuffle {
  private final int shuffleId;
  private final int numMaps;
  private final PartitionLocation[] current;
  private final Map<ServerAddress, BitSet> partitionsByServer = new LinkedHashMap<>();
  private final int[] winningAttempts;
  private final Set<ServerAddress> serversWithWinningData = new HashSet<>();
  private int completedMaps;
  private final CompletableFuture<CommittedShuffle> committed = new CompletableFuture<>();
  private boolean commitStarted;

  CoordinatedShuffle(int shuffleId, int numMaps, List<PartitionLocation> initial) {
    this.shuffleId = shuffleId;
    this.numMaps = numMaps;
    this.current = initial.toArray(new PartitionLocation[0]);
    this.winningAttempts = new int[numMaps];
    Arrays.fill(winningAttempts, -1);
    for (PartitionLocation l : initial) {
      record(l);
    }
  }

  int shuffleId() {
    return shuffleId;
  }

  int numMaps() {
    return numMaps;
  }

  int numPartitions() {
    return current.length;
  }

  private void record(PartitionLocation l) {
    partitionsByServer.computeIfAbsent(l.getServer(), s -> new BitSet()).set(l.getPartitionId());
  }

  synchronized List<PartitionLocation> locations() {
    return List.of(current);
  }

  synchronized PartitionLocation current(int partitionId) {
    return current[partitionId];
  }

  /** Records a new location; returns false (changing nothing) if the partition moved on already. */
  synchronized boolean moveTo(PartitionLocation next) {
    PartitionLocation now = current[next.getPartitionId()];
    if (now.getEpoch() >= next.getEpoch()) {
      return false;
    }
    current[next.getPartitionId()] = next;
    record(next);
    return true;
  }

  /**
   * Records a map completion; the first attempt to report wins.
   *
   * @return true when this completion was the last one missing (the stage ended)
   */
  synchronized boolean mapperEnded(int mapIndex, int attempt, List<ServerAddress> serversWritten) {
    if (winningAttempts[mapIndex] >= 0) {
      return false;
    }
    winningAttempts[mapIndex] = attempt;
    serversWithWinningData.addAll(serversWritten);
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

  synchronized List<ServerAddress> servers() {
    return new ArrayList<>(partitionsByServer.keySet());
  }

  synchronized BitSet partitionsOn(ServerAddress server) {
    return (BitSet) partitionsByServer.getOrDefault(server, new BitSet()).clone();
  }

  /** True when a winning map attempt had data acknowledged by {@code server}. */
  synchronized boolean holdsWinningData(ServerAddress server) {
    return serversWithWinningData.contains(server);
  }

  synchronized int[] winningAttempts() {
    return winningAttempts.clone();
  }

  CompletableFuture<CommittedShuffle> committed() {
    return committed;
  }

  /**
   * Completes the commit with every split the servers reported and the partitions lost with a
   * failed server.
   */
  void completeCommit(List<CommittedSplit> splits, BitSet lost, String lostReason) {
    CommittedShuffle.Builder b = CommittedShuffle.newBuilder().setNumMaps(numMaps);
    for (int a : winningAttempts()) {
      b.addWinningAttempts(a);
    }
    b.addAllSplits(splits);
    lost.stream().forEach(b::addLostPartitions);
    if (!lost.isEmpty()) {
      b.setLostReason(lostReason);
    }
    committed.complete(b.build());
  }
}
