package io.sluice.flink;

import io.sluice.client.mappartition.MapPartitionPlacement;
import io.sluice.protocol.MapPartitionId;
import java.io.Serializable;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.flink.runtime.io.network.partition.ResultPartitionID;
import org.apache.flink.runtime.jobgraph.IntermediateDataSetID;
import org.apache.flink.runtime.shuffle.JobShuffleContext;

/**
 * What the shuffle master keeps for one registered job: its Sluice application (the placement), the
 * shuffle id of each intermediate data set, and every partition placed and not yet released with
 * the servers of its copies (one, or the primary and the replica), so a lost server can be turned
 * into the list of lost partitions: those with no copy left on a server not lost. A partition that
 * loses one of two copies keeps being tracked with the other. Thread safe.
 *
 * <p><b>JobManager failover.</b> {@link #snapshot} captures all of it but the placement; a new
 * JobManager's shuffle master {@link #restore}s it, so the job keeps its shuffle ids and finds the
 * partitions of producers that finished before. The new JobManager numbers its attempts from 0
 * again, so the partitions it places carry the next <em>epoch</em> in their Sluice attempt ({@link
 * #attempt}): a rerun never meets the half-written file of an attempt of the JobManager before.
 */
final class JobShuffle {
  /** Flink attempt numbers a JobManager epoch has room for in a Sluice attempt. */
  static final int ATTEMPTS_PER_EPOCH = 1 << 16;

  private final String appId;
  private final JobShuffleContext context;
  private final MapPartitionPlacement placement;
  private final Map<IntermediateDataSetID, Integer> shuffleIds = new HashMap<>();
  private final Map<ResultPartitionID, Placed> placed = new LinkedHashMap<>();
  private final Set<ResultPartitionID> restored = new HashSet<>();
  private int epoch;

  /** A partition placed and not released: its descriptor and the servers of its copies left. */
  private static final class Placed implements Serializable {
    private static final long serialVersionUID = 1L;
    final SluiceShuffleDescriptor descriptor;
    final List<InetSocketAddress> copies;

    Placed(SluiceShuffleDescriptor descriptor, List<InetSocketAddress> copies) {
      this.descriptor = descriptor;
      this.copies = new ArrayList<>(copies);
    }
  }

  /** What a JobManager failover carries over: everything above but the placement. */
  static final class State implements Serializable {
    private static final long serialVersionUID = 1L;
    final Map<IntermediateDataSetID, Integer> shuffleIds;
    final List<Placed> placed;
    final int epoch;

    private State(Map<IntermediateDataSetID, Integer> shuffleIds, List<Placed> placed, int epoch) {
      this.shuffleIds = shuffleIds;
      this.placed = placed;
      this.epoch = epoch;
    }

    int partitions() {
      return placed.size();
    }
  }

  JobShuffle(String appId, JobShuffleContext context, MapPartitionPlacement placement) {
    this.appId = appId;
    this.context = context;
    this.placement = placement;
  }

  String appId() {
    return appId;
  }

  JobShuffleContext context() {
    return context;
  }

  MapPartitionPlacement placement() {
    return placement;
  }

  /** Whether no partition is tracked: every one placed was released (or none was placed). */
  synchronized boolean tracksNothing() {
    return placed.isEmpty();
  }

  /** Whether nothing was placed or restored yet: the state of a job that just registered. */
  synchronized boolean isUntouched() {
    return shuffleIds.isEmpty() && placed.isEmpty() && epoch == 0;
  }

  /** The shuffle id of {@code dataSet}, numbered from 0 in the order the job's data sets appear. */
  synchronized int shuffleId(IntermediateDataSetID dataSet) {
    return shuffleIds.computeIfAbsent(dataSet, d -> shuffleIds.size());
  }

  /**
   * The Sluice attempt of Flink attempt {@code attemptNumber}: the attempt number in this
   * JobManager's epoch (0 until a failover).
   */
  synchronized int attempt(int attemptNumber) {
    if (attemptNumber < 0 || attemptNumber >= ATTEMPTS_PER_EPOCH) {
      throw new IllegalStateException(
          "Flink attempt "
              + attemptNumber
              + " of a producer of Sluice application "
              + appId
              + " is outside [0, "
              + ATTEMPTS_PER_EPOCH
              + "), the attempts a JobManager can number");
    }
    return epoch * ATTEMPTS_PER_EPOCH + attemptNumber;
  }

  /** Tracks a partition placed on {@code copies}, primary first. */
  synchronized void placed(SluiceShuffleDescriptor descriptor, List<InetSocketAddress> copies) {
    placed.put(descriptor.getResultPartitionID(), new Placed(descriptor, copies));
  }

  /** The descriptor of a tracked partition; null when it is not (or no longer) tracked. */
  synchronized SluiceShuffleDescriptor descriptor(ResultPartitionID partition) {
    Placed p = placed.get(partition);
    return p == null ? null : p.descriptor;
  }

  /**
   * Forgets a partition; returns the servers of its copies not lost, or an empty list when it was
   * not (or no longer) tracked.
   */
  synchronized List<InetSocketAddress> released(ResultPartitionID partition) {
    Placed p = placed.remove(partition);
    return p == null ? List.of() : p.copies;
  }

  /**
   * Forgets the copies on {@code server}; forgets and returns every partition that had no other.
   */
  synchronized List<ResultPartitionID> lostOn(InetSocketAddress server) {
    List<ResultPartitionID> lost = new ArrayList<>();
    Iterator<Map.Entry<ResultPartitionID, Placed>> it = placed.entrySet().iterator();
    while (it.hasNext()) {
      Map.Entry<ResultPartitionID, Placed> e = it.next();
      e.getValue().copies.removeIf(copy -> sameServer(copy, server));
      if (e.getValue().copies.isEmpty()) {
        lost.add(e.getKey());
        it.remove();
      }
    }
    return lost;
  }

  synchronized State snapshot() {
    List<Placed> copy = new ArrayList<>(placed.size());
    for (Placed p : placed.values()) {
      copy.add(new Placed(p.descriptor, p.copies));
    }
    return new State(new HashMap<>(shuffleIds), copy, epoch);
  }

  /**
   * Takes over what a JobManager before tracked: its shuffle ids and partitions; this JobManager's
   * attempts go to the next epoch. Returns the servers those partitions are on.
   */
  synchronized List<InetSocketAddress> restore(State state) {
    shuffleIds.putAll(state.shuffleIds);
    List<InetSocketAddress> servers = new ArrayList<>();
    for (Placed p : state.placed) {
      placed.put(p.descriptor.getResultPartitionID(), new Placed(p.descriptor, p.copies));
      restored.add(p.descriptor.getResultPartitionID());
      for (InetSocketAddress s : p.copies) {
        if (servers.stream().noneMatch(known -> sameServer(known, s))) {
          servers.add(s);
        }
      }
    }
    epoch = Math.max(epoch, state.epoch + 1);
    return servers;
  }

  /**
   * Ends the takeover: of the partitions restored, those Flink kept ({@code kept}) stay tracked;
   * the others (their producers had not finished, or their files are gone) are forgotten and
   * returned with the servers of their copies, for their files to be deleted: Flink will never ask
   * for them.
   */
  synchronized Map<MapPartitionId, List<InetSocketAddress>> keepRestored(
      Set<ResultPartitionID> kept) {
    Map<MapPartitionId, List<InetSocketAddress>> dropped = new HashMap<>();
    for (ResultPartitionID id : restored) {
      if (!kept.contains(id)) {
        Placed p = placed.remove(id);
        if (p != null) {
          dropped.put(p.descriptor.mapPartitionId(), p.copies);
        }
      }
    }
    restored.clear();
    return dropped;
  }

  /** Compares by host string and port, so resolved and unresolved forms of one server match. */
  static boolean sameServer(InetSocketAddress a, InetSocketAddress b) {
    return a.getPort() == b.getPort() && a.getHostString().equals(b.getHostString());
  }
}
