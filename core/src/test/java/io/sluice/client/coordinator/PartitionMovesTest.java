package io.sluice.client.coordinator;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.client.ClientContext;
import io.sluice.client.ClientMetrics;
import io.sluice.client.PartitionLocations;
import io.sluice.client.ServerRacks;
import io.sluice.common.Clock;
import io.sluice.protocol.proto.PartitionLocation;
import io.sluice.protocol.proto.ServerAddress;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Where moved partitions' replicas go: another rack than the surviving copy when racks are known.
 * Four servers, A and B on rack r1, C and D on r2; every server accepts the shuffle.
 */
class PartitionMovesTest {
  private static final ServerAddress A = ClientContext.address("10.9.0.1", 9290);
  private static final ServerAddress B = ClientContext.address("10.9.0.2", 9290);
  private static final ServerAddress C = ClientContext.address("10.9.0.3", 9290);
  private static final ServerAddress D = ClientContext.address("10.9.0.4", 9290);
  private static final List<ServerAddress> SERVERS = List.of(A, B, C, D);

  private CoordinatedShuffle shuffle;

  private PartitionMoves moves(ServerRacks racks) {
    shuffle =
        new CoordinatedShuffle(0, 1, PartitionLocations.roundRobin(0, 4, SERVERS, 0, 2, racks));
    return new PartitionMoves(
        "app-moves",
        SERVERS,
        racks,
        new ServerExclusions(60_000, Clock.SYSTEM),
        (server, shuffleId, numMaps, numPartitions) -> {},
        new ClientMetrics());
  }

  private static ServerRacks twoRacks() {
    return ServerRacks.of(
        Map.of("10.9.0.1", "/r1", "10.9.0.2", "/r1", "10.9.0.3", "/r2", "10.9.0.4", "/r2"));
  }

  @BeforeEach
  @AfterEach
  void forget() {
    ServerExclusions.forgetHostWide();
  }

  @Test
  void aLostReplicaIsReplacedOnAnotherRackThanThePrimary() throws Exception {
    PartitionMoves moves = moves(twoRacks());
    assertThat(shuffle.current(0).getReplica()).isEqualTo(C);
    moves.reviveAfterServerFailure(shuffle, 0, 0, "test: C lost", true);
    PartitionLocation now = shuffle.current(0);
    assertThat(now.getServer()).isEqualTo(A);
    assertThat(now.getReplica()).as("B is next but on A's rack").isEqualTo(D);
  }

  @Test
  void whenThePrimaryIsLostTheNewReplicaIsOnAnotherRackThanTheSurvivingCopy() throws Exception {
    PartitionMoves moves = moves(twoRacks());
    moves.reviveAfterServerFailure(shuffle, 0, 0, "test: A lost", false);
    PartitionLocation now = shuffle.current(0);
    assertThat(now.getServer()).as("the surviving copy").isEqualTo(C);
    assertThat(now.getReplica()).as("D is next but on C's rack").isEqualTo(B);
  }

  @Test
  void aSplitMovesWithItsReplicaOnAnotherRack() throws Exception {
    PartitionMoves moves = moves(twoRacks());
    PartitionLocation next = moves.revive(shuffle, 1, 0, "test: split full");
    assertThat(next.getServer()).isEqualTo(C);
    assertThat(next.getReplica()).as("D is next but on C's rack").isEqualTo(A);
  }

  @Test
  void withoutRacksTheNextServerOnAnotherHostTakesTheReplica() throws Exception {
    PartitionMoves moves = moves(ServerRacks.UNKNOWN);
    PartitionLocation next = moves.revive(shuffle, 1, 0, "test: split full");
    assertThat(next.getServer()).isEqualTo(C);
    assertThat(next.getReplica()).isEqualTo(D);
  }
}
