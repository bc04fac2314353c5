package io.sluice.client.read;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

class BatchFilterTest {
  @Test
  void keepsWinningAttemptsInRangeOnce() {
    BatchFilter f = new BatchFilter(List.of(0, 2, 1, -1), 1, 4);
    assertThat(f.accept(0, 0, 0, 0)).as("map below range").isFalse();
    assertThat(f.accept(0, 1, 2, 0)).isTrue();
    assertThat(f.accept(0, 1, 2, 0)).as("duplicate batch").isFalse();
    assertThat(f.accept(0, 1, 0, 1)).as("losing attempt").isFalse();
    assertThat(f.accept(0, 1, 2, 1)).isTrue();
    assertThat(f.accept(0, 2, 1, 7)).isTrue();
    assertThat(f.accept(0, 3, 0, 0)).as("map without a winner").isFalse();
    assertThat(f.accept(0, 9, 0, 0)).as("map beyond the shuffle").isFalse();
  }

  @Test
  void batchIdsArePerPartition() {
    BatchFilter f = new BatchFilter(List.of(0, 0), 0, 2);
    assertThat(f.accept(3, 1, 0, 0)).isTrue();
    assertThat(f.accept(4, 1, 0, 0)).as("same map and id, another partition").isTrue();
    assertThat(f.accept(3, 1, 0, 0)).isFalse();
    assertThat(f.accept(4, 1, 0, 0)).isFalse();
  }

  /**
   * Before: a bitset per map as long as the map's largest batch id, 8 KiB per map here (80 MB for
   * 10,000 maps) for three batches each.
   */
  @Test
  void sparseLargeBatchIdsOfManyMapsCostBytesPerBatchNotPerId() {
    int maps = 10_000;
    BatchFilter f = new BatchFilter(Collections.nCopies(maps, 0), 0, maps);
    int accepted = 0;
    for (int m = 0; m < maps; m++) {
      for (int id : new int[] {65_000 + m % 500, 20_000 + m % 7, 40_000}) {
        assertThat(f.accept(7, m, 0, id)).isTrue();
        accepted++;
      }
    }
    assertThat(f.accept(7, 9_999, 0, 40_000)).isFalse();
    // the bound documented in SeenBatchIds: 32 bytes per (partition, map), 24 per map with gaps,
    // 8 per run of consecutive ids (three here)
    assertThat(f.footprintBytes())
        .as("bytes held for %d batches", accepted)
        .isLessThanOrEqualTo((32L + 24 + 3 * 8) * maps);
  }

  /** The pusher numbers a map's batches of each partition densely: a run costs one entry. */
  @Test
  void denseIdsCostAFewBytesPerMapWhateverTheirCount() {
    int maps = 100_000;
    BatchFilter f = new BatchFilter(Collections.nCopies(maps, 0), 0, maps);
    for (int id = 0; id < 20; id++) {
      for (int m = 0; m < maps; m++) {
        f.accept(0, m, 0, id);
      }
    }
    assertThat(f.footprintBytes()).isLessThanOrEqualTo(32L * maps);
  }

  /** Out-of-order and duplicate ids (retries, splits read in another order) against a plain set. */
  @Test
  void agreesWithASetOfSeenIdsInAnyOrder() {
    Random random = new Random(42);
    BatchFilter f = new BatchFilter(Collections.nCopies(50, 1), 0, 50);
    Set<List<Integer>> seen = new HashSet<>();
    for (int i = 0; i < 200_000; i++) {
      int partition = random.nextInt(3);
      int map = random.nextInt(50);
      int id = random.nextInt(10) == 0 ? random.nextInt(1 << 30) : random.nextInt(400);
      boolean first = seen.add(List.of(partition, map, id));
      assertThat(f.accept(partition, map, 1, id))
          .as("%s %s %s", partition, map, id)
          .isEqualTo(first);
    }
    // every id below 400 is now seen in almost every (partition, map): runs merged back to one
    for (int p = 0; p < 3; p++) {
      for (int m = 0; m < 50; m++) {
        for (int id = 0; id < 400; id++) {
          f.accept(p, m, 1, id);
        }
      }
    }
    assertThat(f.accept(2, 49, 1, 399)).isFalse();
    assertThat(f.accept(2, 49, 1, 400)).isEqualTo(seen.add(List.of(2, 49, 400)));
  }
}
