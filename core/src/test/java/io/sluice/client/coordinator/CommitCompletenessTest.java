package io.sluice.client.coordinator;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.protocol.proto.CommittedSplit;
import java.util.BitSet;
import java.util.List;
import org.junit.jupiter.api.Test;

class CommitCompletenessTest {
  private static CommittedSplit split(int partition, int epoch, long length) {
    return CommittedSplit.newBuilder()
        .setPartitionId(partition)
        .setEpoch(epoch)
        .setLength(length)
        .build();
  }

  @Test
  void aPartitionWhoseSplitsHoldAtLeastWhatWasAcknowledgedIsWhole() {
    BitSet lost = new BitSet();
    String why =
        CommitCompleteness.check(
            List.of(split(0, 0, 100), split(0, 1, 50), split(1, 0, 300)),
            new long[] {150, 200, 0},
            lost);
    assertThat(why).isEmpty();
    assertThat(lost.isEmpty()).isTrue();
  }

  @Test
  void aPartitionShortOfItsAcknowledgedBytesIsLostAndNamed() {
    BitSet lost = new BitSet();
    String why =
        CommitCompleteness.check(
            List.of(split(0, 0, 100), split(2, 0, 10)), new long[] {150, 0, 10, 5}, lost);
    assertThat(lost.stream()).containsExactly(0, 3);
    assertThat(why)
        .contains("2 partition(s)")
        .contains("partition 0 (100 of 150 bytes)")
        .contains("partition 3 (0 of 5 bytes)");
  }

  @Test
  void partitionsLostAlreadyAreNotNamedAgain() {
    BitSet lost = new BitSet();
    lost.set(0);
    assertThat(CommitCompleteness.check(List.of(), new long[] {10, 0}, lost)).isEmpty();
    assertThat(lost.stream()).containsExactly(0);
  }
}
