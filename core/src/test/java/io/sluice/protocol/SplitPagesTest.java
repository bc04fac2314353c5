package io.sluice.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.protocol.proto.CommittedSplit;
import io.sluice.protocol.proto.SplitCursor;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

class SplitPagesTest {
  private static CommittedSplit split(int p, int epoch) {
    return CommittedSplit.newBuilder()
        .setPartitionId(p)
        .setEpoch(epoch)
        .setLength(1000)
        .addChunkOffsets(0)
        .addChunkOffsets(1000)
        .build();
  }

  private static List<CommittedSplit> splits(int partitions, int epochs) {
    List<CommittedSplit> all = new ArrayList<>();
    for (int p = 0; p < partitions; p++) {
      for (int e = 0; e < epochs; e++) {
        all.add(split(p, e));
      }
    }
    return all;
  }

  @Test
  void pagesHoldAtMostTheBoundAndTogetherEverySplitOnce() {
    List<CommittedSplit> all = splits(500, 3);
    int bound = 20 * SplitPages.wireSize(split(499, 2));
    List<CommittedSplit> seen = new ArrayList<>();
    int from = 0;
    int pages = 0;
    while (true) {
      SplitPages.Page page = SplitPages.page(all, from, all.size(), Function.identity(), bound);
      pages++;
      long bytes = page.splits().stream().mapToLong(SplitPages::wireSize).sum();
      assertThat(bytes).isLessThanOrEqualTo(bound);
      seen.addAll(page.splits());
      if (page.next() == null) {
        break;
      }
      from = SplitPages.firstAtOrAfter(all, SplitPages::key, SplitPages.key(page.next()));
      assertThat(all.get(from))
          .isEqualTo(split(page.next().getPartitionId(), page.next().getEpoch()));
    }
    assertThat(seen).isEqualTo(all);
    assertThat(pages).isGreaterThanOrEqualTo(1500 / 25);
  }

  @Test
  void aSplitLargerThanThePageStillGoesOutAlone() {
    List<CommittedSplit> all = splits(3, 1);
    SplitPages.Page page = SplitPages.page(all, 0, 3, Function.identity(), 1);
    assertThat(page.splits()).containsExactly(all.get(0));
    assertThat(page.next()).isEqualTo(SplitCursor.newBuilder().setPartitionId(1).build());
    assertThat(SplitPages.page(all, 3, 3, Function.identity(), 1).splits()).isEmpty();
  }

  @Test
  void theCursorSplitsAPartitionBetweenEpochs() {
    List<CommittedSplit> all = splits(4, 3);
    int i =
        SplitPages.firstAtOrAfter(
            all,
            SplitPages::key,
            SplitPages.key(SplitCursor.newBuilder().setPartitionId(2).setEpoch(1).build()));
    assertThat(all.get(i)).isEqualTo(split(2, 1));
    assertThat(SplitPages.firstAtOrAfter(all, SplitPages::key, SplitPages.key(4, 0)))
        .isEqualTo(all.size());
    assertThat(SplitPages.key(1, 0)).isGreaterThan(SplitPages.key(0, Integer.MAX_VALUE));
  }
}
