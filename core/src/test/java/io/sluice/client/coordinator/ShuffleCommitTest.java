package io.sluice.client.coordinator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.client.ClientContext;
import io.sluice.protocol.IndexRanges;
import io.sluice.protocol.proto.CommittedShuffle;
import io.sluice.protocol.proto.CommittedSplit;
import io.sluice.protocol.proto.SplitCursor;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

class ShuffleCommitTest {
  private static CommittedSplit split(int p, int epoch) {
    return CommittedSplit.newBuilder()
        .setPartitionId(p)
        .setEpoch(epoch)
        .setLength(10)
        .addChunkOffsets(0)
        .addChunkOffsets(10)
        .setServer(ClientContext.address("127.0.0.1", 9290))
        .build();
  }

  /** Every page of [start, end), as CoordinatorClient asks for them. */
  private static List<CommittedShuffle> pages(ShuffleCommit c, int start, int end, int maxBytes) {
    List<CommittedShuffle> pages = new ArrayList<>();
    SplitCursor resume = null;
    do {
      CommittedShuffle page = c.answer(start, end, resume, maxBytes);
      pages.add(page);
      resume = page.hasNext() ? page.getNext() : null;
    } while (resume != null);
    return pages;
  }

  @Test
  void pagesOfARangeHoldItsSplitsInOrderOnceAndTheWinnersOnlyFirst() {
    List<CommittedSplit> splits = new ArrayList<>();
    for (int p = 0; p < 300; p++) {
      for (int e = 0; e < 1 + p % 3; e++) {
        splits.add(split(p, e));
      }
    }
    List<CommittedSplit> shuffled = new ArrayList<>(splits);
    Collections.shuffle(shuffled);
    ShuffleCommit c = new ShuffleCommit(2, new int[] {0, 5}, shuffled, new BitSet(), "");
    int pageBytes = 30 * split(299, 2).getSerializedSize();
    List<CommittedShuffle> pages = pages(c, 100, 200, pageBytes);
    assertThat(pages.size()).isGreaterThan(5);
    List<CommittedSplit> read = new ArrayList<>();
    for (CommittedShuffle page : pages) {
      assertThat(page.getSerializedSize()).isLessThanOrEqualTo(pageBytes + 20);
      read.addAll(page.getSplitsList());
    }
    List<CommittedSplit> expected = new ArrayList<>();
    for (CommittedSplit s : splits) {
      if (s.getPartitionId() >= 100 && s.getPartitionId() < 200) {
        expected.add(s);
      }
    }
    assertThat(read).isEqualTo(expected);
    assertThat(pages.get(0).getWinningAttemptsList()).containsExactly(0, 5);
    assertThat(pages.get(1).getWinningAttemptsList()).isEmpty();
  }

  @Test
  void anEmptyRangeIsOnePage() {
    ShuffleCommit c = new ShuffleCommit(1, new int[] {0}, List.of(split(5, 0)), new BitSet(), "");
    List<CommittedShuffle> pages = pages(c, 0, 5, 1 << 20);
    assertThat(pages).hasSize(1);
    assertThat(pages.get(0).getSplitsList()).isEmpty();
    assertThat(c.answer(5, 6, null, 1 << 20).getSplitsList()).containsExactly(split(5, 0));
  }

  @Test
  void lostPartitionsAreCountedExactlyAndListedUpToTheCap() {
    BitSet lost = new BitSet();
    for (int p = 0; p < 16_777_217; p += 3) {
      lost.set(p); // a failed server's share of a round robin placement
    }
    ShuffleCommit c = new ShuffleCommit(1, new int[] {0}, List.of(), lost, "server x: disk gone");
    CommittedShuffle all = c.answer(0, 16_777_217, null, 1 << 20);
    assertThat(all.getNumLostPartitions()).isEqualTo(5_592_406);
    assertThat(all.getLostRangesCount()).isEqualTo(2 * ShuffleCommit.MAX_LOST_RANGES);
    assertThat(all.getSerializedSize()).isLessThan(8 * 1024);
    assertThat(all.getLostReason()).isEqualTo("server x: disk gone");
    IndexRanges listed = IndexRanges.decode(all.getLostRangesList(), "lost");
    assertThat(listed.toBitSet().stream().limit(3)).containsExactly(0, 3, 6);

    CommittedShuffle one = c.answer(4, 7, null, 1 << 20);
    assertThat(one.getNumLostPartitions()).isEqualTo(1);
    assertThat(one.getLostRangesList()).containsExactly(6, 1);
    CommittedShuffle none = c.answer(4, 6, null, 1 << 20);
    assertThat(none.getNumLostPartitions()).isZero();
    assertThat(none.getLostRangesList()).isEmpty();
  }

  @Test
  void aResumeOutsideTheRangeIsRefused() {
    ShuffleCommit c = new ShuffleCommit(1, new int[] {0}, List.of(), new BitSet(), "");
    assertThatThrownBy(
            () -> c.answer(0, 10, SplitCursor.newBuilder().setPartitionId(10).build(), 1 << 20))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("partitions [0, 10)");
  }
}
