package io.sluice.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.protocol.proto.ServerAddress;
import io.sluice.protocol.proto.ShuffleLocations;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The replica rule of reduce partitions at epoch 0, with and without racks, and on the wire. */
class ReplicaRuleTest {
  private static final ServerAddress A = ClientContext.address("10.0.0.1", 9290);
  private static final ServerAddress B = ClientContext.address("10.0.0.2", 9290);
  private static final ServerAddress C = ClientContext.address("10.0.0.3", 9290);
  private static final ServerAddress D = ClientContext.address("10.0.0.4", 9290);

  private static ServerRacks racks(String... hostRack) {
    Map<String, String> m = new HashMap<>();
    for (int i = 0; i < hostRack.length; i += 2) {
      m.put(hostRack[i], hostRack[i + 1]);
    }
    return ServerRacks.of(m);
  }

  /** The replica of each placement server's partitions (start 0, one partition per server). */
  private static List<ServerAddress> replicas(PartitionLocations l) {
    return List.of(
        l.placementServers().stream().map(s -> replicaOf(l, s)).toArray(ServerAddress[]::new));
  }

  private static ServerAddress replicaOf(PartitionLocations l, ServerAddress primary) {
    int k = l.placementServers().indexOf(primary);
    return l.replica(Math.floorMod(k - l.start(), l.placementServers().size()));
  }

  private static PartitionLocations place(List<ServerAddress> servers, ServerRacks racks) {
    return PartitionLocations.roundRobin(1, servers.size(), servers, 0, 2, racks);
  }

  @Test
  void withRacksKnownTheReplicaGoesToTheFirstServerOnAnotherRack() {
    ServerRacks racks =
        racks("10.0.0.1", "/r1", "10.0.0.2", "/r1", "10.0.0.3", "/r2", "10.0.0.4", "/r2");
    PartitionLocations l = place(List.of(A, B, C, D), racks);
    assertThat(replicas(l)).containsExactly(C, C, A, A);
    // without racks the same servers get the host rule
    assertThat(replicas(place(List.of(A, B, C, D), ServerRacks.UNKNOWN)))
        .containsExactly(B, C, D, A);
  }

  @Test
  void aServerOfUnknownRackIsNeverAnotherRack() {
    ServerRacks racks = racks("10.0.0.1", "/r1", "10.0.0.3", "/r2");
    PartitionLocations l = place(List.of(A, B, C, D), racks);
    // A (r1): C is the first known other rack; B (unknown): next other host C; C (r2): D is
    // unknown, A is r1; D (unknown): next other host A
    assertThat(replicas(l)).containsExactly(C, C, A, A);
    assertThat(l.placementRacks()).containsExactly("/r1", "", "/r2", "");
  }

  @Test
  void allOnOneRackFallsBackToHostsThenToTheNextServer() {
    ServerAddress a2 = ClientContext.address("10.0.0.1", 9291);
    ServerRacks oneRack = racks("10.0.0.1", "/r1", "10.0.0.2", "/r1");
    assertThat(replicas(place(List.of(A, a2, B), oneRack))).containsExactly(B, B, A);
    ServerAddress a3 = ClientContext.address("10.0.0.1", 9292);
    assertThat(replicas(place(List.of(A, a2, a3), oneRack))).containsExactly(a2, a3, A);
  }

  @Test
  void aSingleServerHasNoReplica() {
    PartitionLocations l = place(List.of(A), racks("10.0.0.1", "/r1"));
    assertThat(l.replica(0)).isNull();
  }

  @Test
  void racksTravelOnTheWireAndMessagesWithoutThemReadAsUnknown() {
    ServerRacks racks =
        racks("10.0.0.1", "/r1", "10.0.0.2", "/r1", "10.0.0.3", "/r2", "10.0.0.4", "/r2");
    PartitionLocations l = PartitionLocations.roundRobin(1, 40, List.of(A, B, C, D), 3, 2, racks);
    ShuffleLocations wire = l.toProto();
    assertThat(wire.getPlacementRacksList()).containsExactly("/r1", "/r1", "/r2", "/r2");
    PartitionLocations back = PartitionLocations.fromProto(wire);
    for (int p = 0; p < 40; p++) {
      assertThat(back.location(p)).isEqualTo(l.location(p));
    }
    // a message that predates racks (or a coordinator that knows none): the host rule
    PartitionLocations old =
        PartitionLocations.fromProto(wire.toBuilder().clearPlacementRacks().build());
    assertThat(old.placementRacks()).containsExactly("", "", "", "");
    assertThat(replicas(old)).containsExactly(B, C, D, A);
    // no racks known: nothing extra on the wire
    assertThat(
            PartitionLocations.roundRobin(1, 40, List.of(A, B), 0, 2, ServerRacks.UNKNOWN)
                .toProto()
                .getPlacementRacksCount())
        .isZero();
    assertThatThrownBy(
            () ->
                PartitionLocations.fromProto(
                    wire.toBuilder().clearPlacementRacks().addPlacementRacks("/r1").build()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("shuffle 1")
        .hasMessageContaining("1 racks");
  }

  @Test
  void orderListsOtherRacksThenOtherHostsThenTheRest() {
    List<String> hosts = List.of("h1", "h1", "h2", "h3", "h4");
    List<String> racks = List.of("/r1", "/r1", "/r1", "", "/r2");
    assertThat(ReplicaRule.order(hosts, racks, 0)).containsExactly(4, 2, 3, 1);
    assertThat(ReplicaRule.order(hosts, racks, 3)).containsExactly(4, 0, 1, 2);
  }
}
