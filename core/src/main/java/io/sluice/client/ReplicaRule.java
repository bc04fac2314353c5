package io.sluice.client;

import java.util.ArrayList;
import java.util.List;

/**
 * Where the second copy of a partition goes, the one rule every placement uses (reduce partitions
 * at epoch 0 in {@link PartitionLocations}, moved partitions in the coordinator, Flink's map
 * partitions in {@code MapPartitionPlacement}).
 *
 * <p>Given the candidates in placement order and the primary among them, the replica is the first
 * candidate after the primary (wrapping) on <b>another rack</b>, when the primary's rack is known
 * and some candidate is on another known rack; else the first one after it on <b>another host</b>;
 * else the next one. A rack that is unknown ({@code ""}) is never "another rack": with no rack
 * information the rule is the host rule. {@link #order} lists the candidates in that order of
 * preference, for callers that skip candidates that do not answer.
 */
public final class ReplicaRule {
  private ReplicaRule() {}

  /**
   * The indexes of {@code hosts} other than {@code primary} in the order a replica of the copy on
   * {@code hosts.get(primary)} tries them: those on another rack, then those on another host, then
   * the rest; each group in placement order after the primary, wrapping.
   *
   * @param hosts the candidates' hosts, in placement order
   * @param racks the candidates' racks, parallel to {@code hosts}; {@code ""}: unknown
   */
  public static List<Integer> order(List<String> hosts, List<String> racks, int primary) {
    if (hosts.size() != racks.size() || primary < 0 || primary >= hosts.size()) {
      throw new IllegalArgumentException(
          "replica of candidate "
              + primary
              + " of "
              + hosts.size()
              + " with "
              + racks.size()
              + " racks");
    }
    int n = hosts.size();
    List<Integer> order = new ArrayList<>(Math.max(0, n - 1));
    for (int preference = 0; preference < 3; preference++) {
      for (int i = 1; i < n; i++) {
        int j = (primary + i) % n;
        if (preference(hosts, racks, primary, j) == preference) {
          order.add(j);
        }
      }
    }
    return order;
  }

  /**
   * The replica of the copy on {@code hosts.get(primary)}: the first of {@link #order}, or -1 when
   * there is no other candidate.
   */
  public static int choose(List<String> hosts, List<String> racks, int primary) {
    List<Integer> order = order(hosts, racks, primary);
    return order.isEmpty() ? -1 : order.get(0);
  }

  /** 0: another known rack; 1: another host; 2: the primary's host. */
  private static int preference(List<String> hosts, List<String> racks, int primary, int j) {
    String rack = racks.get(primary);
    if (!rack.isEmpty() && !racks.get(j).isEmpty() && !rack.equals(racks.get(j))) {
      return 0;
    }
    return hosts.get(j).equals(hosts.get(primary)) ? 2 : 1;
  }
}
