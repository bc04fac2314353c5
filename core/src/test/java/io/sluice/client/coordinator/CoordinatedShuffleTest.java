package io.sluice.client.coordinator;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.client.ClientContext;
import io.sluice.protocol.proto.CommittedShuffle;
import io.sluice.protocol.proto.PartitionLocation;
import io.sluice.protocol.proto.ServerAddress;
import java.util.BitSet;
import java.util.List;
import org.junit.jupiter.api.Test;

class CoordinatedShuffleTest {
  private static final ServerAddress A = ClientContext.address("a", 1);
  private static final ServerAddress B = ClientContext.address("b", 1);

  private static PartitionLocation loc(int p, int epoch, ServerAddress s) {
    return PartitionLocation.newBuilder().setPartitionId(p).setEpoch(epoch).setServer(s).build();
  }

  @Test
  void firstReportedAttemptWinsAndTheLastMapEndsTheStage() {
    CoordinatedShuffle s = new CoordinatedShuffle(1, 2, List.of(loc(0, 0, A), loc(1, 0, B)));
    assertThat(s.mapperEnded(0, 3, List.of(A))).isFalse();
    assertThat(s.mapperEnded(0, 1, List.of(B))).as("a later attempt of map 0").isFalse();
    assertThat(s.mapperEnded(1, 0, List.of())).isTrue();
    assertThat(s.winningAttempts()).containsExactly(3, 0);
    assertThat(s.holdsWinningData(A)).isTrue();
    assertThat(s.holdsWinningData(B)).as("only the loser wrote to B").isFalse();
    assertThat(s.startCommit()).isTrue();
    assertThat(s.startCommit()).isFalse();
  }

  @Test
  void movesOnlyForwardAndRemembersEveryServer() {
    CoordinatedShuffle s = new CoordinatedShuffle(1, 1, List.of(loc(0, 0, A)));
    assertThat(s.moveTo(loc(0, 1, B))).isTrue();
    assertThat(s.moveTo(loc(0, 1, A))).as("same epoch again").isFalse();
    assertThat(s.current(0).getServer()).isEqualTo(B);
    assertThat(s.servers()).containsExactly(A, B);
    assertThat(s.partitionsOn(A).get(0)).isTrue();
  }

  @Test
  void commitResultListsLostPartitions() throws Exception {
    CoordinatedShuffle s = new CoordinatedShuffle(1, 1, List.of(loc(0, 0, A), loc(1, 0, A)));
    s.mapperEnded(0, 0, List.of(A));
    BitSet lost = new BitSet();
    lost.set(1);
    s.completeCommit(List.of(), lost, "a:1 failed");
    CommittedShuffle c = s.committed().get();
    assertThat(c.getLostPartitionsList()).containsExactly(1);
    assertThat(c.getLostReason()).isEqualTo("a:1 failed");
    assertThat(c.getWinningAttemptsList()).containsExactly(0);
  }
}
