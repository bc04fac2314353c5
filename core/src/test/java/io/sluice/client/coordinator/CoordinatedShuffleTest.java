package io.sluice.client.coordinator;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.client.ClientContext;
import io.sluice.client.PartitionLocations;
import io.sluice.protocol.IndexRanges;
import io.sluice.protocol.proto.CommittedShuffle;
import io.sluice.protocol.proto.PartitionLocation;
import io.sluice.protocol.proto.ServerAddress;
import java.util.BitSet;
import java.util.List;
import org.junit.jupiter.api.Test;

class CoordinatedShuffleTest {
  private static final ServerAddress A = ClientContext.address("a", 1);
  private static final ServerAddress B = ClientContext.address("b", 1);
  private static final ServerAddress C = ClientContext.address("c", 1);

  private static PartitionLocation loc(int p, int epoch, ServerAddress s) {
    return PartitionLocation.newBuilder().setPartitionId(p).setEpoch(epoch).setServer(s).build();
  }

  private static CoordinatedShuffle shuffle(int maps, int partitions, ServerAddress... servers) {
    return new CoordinatedShuffle(
        1, maps, PartitionLocations.roundRobin(1, partitions, List.of(servers), 0));
  }

  @Test
  void firstReportedAttemptWinsAndTheLastMapEndsTheStage() {
    CoordinatedShuffle s = shuffle(2, 2, A, B);
    assertThat(s.mapperEnded(0, 3, List.of(A))).isFalse();
    assertThat(s.mapperEnded(0, 1, List.of(B))).as("a later attempt of map 0").isFalse();
    assertThat(s.mapperEnded(1, 0, List.of())).isTrue();
    assertThat(s.winningAttempts()).containsExactly(3, 0);
    assertThat(s.holdsEndedData(A)).isTrue();
    assertThat(s.holdsEndedData(B))
        .as("only a later attempt wrote to B, but the engine may count that one")
        .isTrue();
    assertThat(s.startCommit()).isTrue();
    assertThat(s.startCommit()).isFalse();
  }

  @Test
  void movesOnlyForwardAndRemembersEveryServer() {
    CoordinatedShuffle s = shuffle(1, 1, A);
    assertThat(s.moveTo(loc(0, 1, B))).isTrue();
    assertThat(s.moveTo(loc(0, 1, A))).as("same epoch again").isFalse();
    assertThat(s.current(0).getServer()).isEqualTo(B);
    assertThat(s.locations().location(0)).isEqualTo(loc(0, 1, B));
    assertThat(s.servers()).containsExactly(A, B);
    assertThat(s.partitionsOn(A).get(0)).isTrue();
    assertThat(s.partitionsOn(B).get(0)).isTrue();
  }

  @Test
  void partitionsOfAServerComeFromTheRuleAndTheMoves() {
    CoordinatedShuffle s = shuffle(1, 7, A, B, C);
    s.moveTo(loc(4, 1, A)); // placed on B
    s.moveTo(loc(4, 2, C));
    BitSet onA = new BitSet();
    onA.set(0);
    onA.set(3);
    onA.set(4);
    onA.set(6);
    assertThat(s.partitionsOn(A)).isEqualTo(onA);
    assertThat(s.partitionsOn(B).stream()).containsExactly(1, 4);
    assertThat(s.partitionsOn(C).stream()).containsExactly(2, 4, 5);
    assertThat(s.locations().location(4)).isEqualTo(loc(4, 2, C));
    assertThat(s.locations().numMoves()).isEqualTo(1);
  }

  @Test
  void fewerPartitionsThanServersCommitOnlyWhereTheyAre() {
    CoordinatedShuffle s =
        new CoordinatedShuffle(1, 1, PartitionLocations.roundRobin(1, 2, List.of(A, B, C), 2));
    assertThat(s.servers()).containsExactly(C, A);
  }

  @Test
  void sixteenMillionPartitionsCostNoMoreThanTen() {
    int partitions = 16_777_217;
    CoordinatedShuffle s = shuffle(2, partitions, A, B, C);
    s.moveTo(loc(partitions - 1, 1, A));
    PartitionLocations l = s.locations();
    assertThat(l.toProto().getSerializedSize()).isLessThan(100);
    assertThat(l.location(partitions - 2)).isEqualTo(loc(partitions - 2, 0, A));
    assertThat(l.location(partitions - 1)).isEqualTo(loc(partitions - 1, 1, A));
    assertThat(s.partitionsOn(A).cardinality()).isEqualTo(partitions / 3 + 2);
  }

  @Test
  void commitResultListsLostPartitions() throws Exception {
    CoordinatedShuffle s = shuffle(1, 2, A);
    s.mapperEnded(0, 0, List.of(A));
    BitSet lost = new BitSet();
    lost.set(1);
    s.completeCommit(List.of(), lost, "a:1 failed");
    CommittedShuffle c = s.committed().get().answer(0, 2, null, 1 << 20);
    assertThat(c.getNumLostPartitions()).isEqualTo(1);
    assertThat(IndexRanges.decode(c.getLostRangesList(), "lost").toBitSet()).isEqualTo(lost);
    assertThat(c.getLostReason()).isEqualTo("a:1 failed");
    assertThat(c.getWinningAttemptsList()).containsExactly(0);
  }
}
