package io.sluice.client;

import io.sluice.protocol.proto.ServerAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The racks of server hosts, as far as they are known (from YARN's node reports or {@code
 * sluice.topology.script}, see {@link TopologyScript}): the input of {@link ReplicaRule}. A host
 * without a rack reads as {@code ""}, rack unknown. Immutable.
 */
public final class ServerRacks {
  /** No rack known: placement uses hosts only. */
  public static final ServerRacks UNKNOWN = new ServerRacks(Map.of());

  private final Map<String, String> rackOfHost;

  private ServerRacks(Map<String, String> rackOfHost) {
    this.rackOfHost = rackOfHost;
  }

  /** Host to rack; blank racks and null ones are left out (unknown). */
  public static ServerRacks of(Map<String, String> rackOfHost) {
    Map<String, String> known = new HashMap<>();
    rackOfHost.forEach(
        (host, rack) -> {
          if (host != null && rack != null && !rack.isBlank()) {
            known.put(host, rack.trim());
          }
        });
    return known.isEmpty() ? UNKNOWN : new ServerRacks(Map.copyOf(known));
  }

  /** The rack of {@code host}, or {@code ""} when it is unknown. */
  public String rack(String host) {
    return rackOfHost.getOrDefault(host, "");
  }

  /** Whether {@code host} has a known rack. */
  public boolean knows(String host) {
    return rackOfHost.containsKey(host);
  }

  /** The racks of {@code servers}, in order ({@code ""}: unknown). */
  public List<String> racksOf(List<ServerAddress> servers) {
    List<String> racks = new ArrayList<>(servers.size());
    for (ServerAddress s : servers) {
      racks.add(rack(s.getHost()));
    }
    return racks;
  }

  /** These racks, and {@code other}'s for hosts these do not know. */
  public ServerRacks orElse(ServerRacks other) {
    Map<String, String> merged = new HashMap<>(other.rackOfHost);
    merged.putAll(rackOfHost);
    return of(merged);
  }

  @Override
  public String toString() {
    return rackOfHost.isEmpty() ? "no racks" : new TreeMap<>(rackOfHost).toString();
  }
}
