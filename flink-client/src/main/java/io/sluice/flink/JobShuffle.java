package io.sluice.flink;

import io.sluice.client.mappartition.MapPartitionPlacement;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.flink.runtime.io.network.partition.ResultPartitionID;
import org.apache.flink.runtime.jobgraph.IntermediateDataSetID;
import org.apache.flink.runtime.shuffle.JobShuffleContext;

/**
 * What the shuffle master keeps for one registered job: its Sluice application (the placement), the
 * shuffle id of each intermediate data set, and the servers of every partition placed and not yet
 * released (one, or the primary and the replica), so a lost server can be turned into the list of
 * lost partitions: those with no copy left on a server not lost. A partition that loses one of two
 * copies keeps being tracked with the other. Thread safe.
 */
final class JobShuffle {
  private final String appId;
  private final JobShuffleContext context;
  private final MapPartitionPlacement placement;
  private final Map<IntermediateDataSetID, Integer> shuffleIds = new HashMap<>();
  private final Map<ResultPartitionID, List<InetSocketAddress>> servers = new HashMap<>();

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

  /** The shuffle id of {@code dataSet}, numbered from 0 in the order the job's data sets appear. */
  synchronized int shuffleId(IntermediateDataSetID dataSet) {
    return shuffleIds.computeIfAbsent(dataSet, d -> shuffleIds.size());
  }

  /** Tracks a partition placed on {@code copies}, primary first. */
  synchronized void placed(ResultPartitionID partition, List<InetSocketAddress> copies) {
    servers.put(partition, new ArrayList<>(copies));
  }

  /**
   * Forgets a partition; returns the servers of its copies not lost, or an empty list when it was
   * not (or no longer) tracked.
   */
  synchronized List<InetSocketAddress> released(ResultPartitionID partition) {
    List<InetSocketAddress> copies = servers.remove(partition);
    return copies == null ? List.of() : copies;
  }

  /**
   * Forgets the copies on {@code server}; forgets and returns every partition that had no other.
   */
  synchronized List<ResultPartitionID> lostOn(InetSocketAddress server) {
    List<ResultPartitionID> lost = new ArrayList<>();
    Iterator<Map.Entry<ResultPartitionID, List<InetSocketAddress>>> it =
        servers.entrySet().iterator();
    while (it.hasNext()) {
      Map.Entry<ResultPartitionID, List<InetSocketAddress>> e = it.next();
      e.getValue().removeIf(copy -> sameServer(copy, server));
      if (e.getValue().isEmpty()) {
        lost.add(e.getKey());
        it.remove();
      }
    }
    return lost;
  }

  /** Compares by host string and port, so resolved and unresolved forms of one server match. */
  static boolean sameServer(InetSocketAddress a, InetSocketAddress b) {
    return a.getPort() == b.getPort() && a.getHostString().equals(b.getHostString());
  }
}
