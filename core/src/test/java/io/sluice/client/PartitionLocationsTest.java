package io.sluice.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.protocol.proto.PartitionLocation;
import io.sluice.protocol.proto.ServerAddress;
import io.sluice.protocol.proto.ShuffleLocations;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class PartitionLocationsTest {
  private static final ServerAddress A = ClientContext.address("10.0.0.1", 9290);
  private static final ServerAddress B = ClientContext.address("10.0.0.2", 9290);
  private static final ServerAddress C = ClientContext.address("10.0.0.3", 9290);
  private static final ServerAddress D = ClientContext.address("10.0.0.4", 9290);

  private static PartitionLocation loc(int p, int epoch, ServerAddress s) {
    return PartitionLocation.newBuilder().setPartitionId(p).setEpoch(epoch).setServer(s).build();
  }

  @Test
  void placesRoundRobinFromTheStartServer() {
    PartitionLocations l = PartitionLocations.roundRobin(4, 7, List.of(A, B, C), 1);
    assertThat(l.location(0)).isEqualTo(loc(0, 0, B));
    assertThat(l.location(1)).isEqualTo(loc(1, 0, C));
    assertThat(l.location(2)).isEqualTo(loc(2, 0, A));
    assertThat(l.location(6)).isEqualTo(loc(6, 0, B));
    assertThat(l.placedOn(A).stream()).containsExactly(2, 5);
    assertThat(l.placedOn(B).stream()).containsExactly(0, 3, 6);
    assertThat(l.placedOn(D).isEmpty()).isTrue();
    assertThat(l.serversWithPartitions()).containsExactly(B, C, A);
    assertThat(l.shuffleId()).isEqualTo(4);
  }

  @Test
  void movesOverrideTheRuleAndRoundTripThroughTheWire() {
    PartitionLocations l =
        PartitionLocations.roundRobin(4, 100, List.of(A, B, C), 2)
            .withMoves(List.of(loc(99, 3, D), loc(0, 1, A), loc(50, 2, B)));
    PartitionLocations back = PartitionLocations.fromProto(l.toProto());
    for (int p = 0; p < 100; p++) {
      assertThat(back.location(p)).isEqualTo(l.location(p));
    }
    assertThat(back.location(0)).isEqualTo(loc(0, 1, A));
    assertThat(back.location(99)).isEqualTo(loc(99, 3, D));
    assertThat(back.location(98)).isEqualTo(loc(98, 0, B));
    assertThat(back.numMoves()).isEqualTo(3);
    assertThat(back.placementServers()).containsExactly(A, B, C);
    ShuffleLocations wire = l.toProto();
    assertThat(wire.getMovedPartitionsList()).containsExactly(0, 50, 49);
    assertThat(wire.getServersList()).containsExactly(A, B, C, D);
    assertThat(wire.getMovedServersList()).containsExactly(0, 1, 3);
  }

  @Test
  void randomMovesAgreeWithAPlainList() {
    Random random = new Random(7);
    List<ServerAddress> servers = List.of(A, B, C);
    int partitions = 1000;
    List<PartitionLocation> expected = new ArrayList<>();
    for (int p = 0; p < partitions; p++) {
      expected.add(loc(p, 0, servers.get((1 + p) % 3)));
    }
    List<PartitionLocation> moves = new ArrayList<>();
    for (int p = 0; p < partitions; p++) {
      if (random.nextInt(5) == 0) {
        PartitionLocation m =
            loc(p, 1 + random.nextInt(4), List.of(A, B, C, D).get(random.nextInt(4)));
        moves.add(m);
        expected.set(p, m);
      }
    }
    PartitionLocations l =
        PartitionLocations.fromProto(
            PartitionLocations.roundRobin(0, partitions, servers, 1).withMoves(moves).toProto());
    for (int p = 0; p < partitions; p++) {
      assertThat(l.location(p)).isEqualTo(expected.get(p));
      assertThat(l.server(p)).isEqualTo(expected.get(p).getServer());
      assertThat(l.epoch(p)).isEqualTo(expected.get(p).getEpoch());
    }
  }

  @Test
  void sixteenMillionPartitionsTakeAFewDozenBytes() {
    int partitions = 16_777_217;
    PartitionLocations l = PartitionLocations.roundRobin(0, partitions, List.of(A, B, C), 2);
    ShuffleLocations wire = l.toProto();
    assertThat(wire.getSerializedSize()).isLessThan(100);
    PartitionLocations back = PartitionLocations.fromProto(wire);
    assertThat(back.location(partitions - 1)).isEqualTo(loc(partitions - 1, 0, A));
    assertThat(back.placedOn(C).cardinality()).isEqualTo(5_592_406);
  }

  @Test
  void partitionsOutOfRangeAreRefusedNamingTheShuffle() {
    PartitionLocations l = PartitionLocations.roundRobin(9, 3, List.of(A), 0);
    assertThatThrownBy(() -> l.location(3))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("partition 3")
        .hasMessageContaining("shuffle 9");
    assertThatThrownBy(() -> l.withMoves(List.of(loc(1, 0, B))))
        .hasMessageContaining("moved to epoch 0");
    assertThatThrownBy(() -> l.withMoves(List.of(loc(1, 1, B), loc(1, 2, A))))
        .hasMessageContaining("moved twice");
  }

  @Test
  void inconsistentWireFormsAreRefused() {
    ShuffleLocations good =
        PartitionLocations.roundRobin(5, 10, List.of(A, B), 1)
            .withMoves(List.of(loc(3, 1, C)))
            .toProto();
    assertThatThrownBy(
            () -> PartitionLocations.fromProto(good.toBuilder().setPlacementServers(0).build()))
        .hasMessageContaining("shuffle 5");
    assertThatThrownBy(() -> PartitionLocations.fromProto(good.toBuilder().setStart(2).build()))
        .hasMessageContaining("shuffle 5");
    assertThatThrownBy(
            () -> PartitionLocations.fromProto(good.toBuilder().setMovedPartitions(0, 10).build()))
        .hasMessageContaining("moved partition 10");
    assertThatThrownBy(
            () -> PartitionLocations.fromProto(good.toBuilder().setMovedServers(0, 3).build()))
        .hasMessageContaining("server 3");
    assertThatThrownBy(
            () -> PartitionLocations.fromProto(good.toBuilder().addMovedEpochs(1).build()))
        .hasMessageContaining("inconsistent locations of shuffle 5");
  }
}
