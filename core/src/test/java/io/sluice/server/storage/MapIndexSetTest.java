package io.sluice.server.storage;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class MapIndexSetTest {
  @Test
  void runsMergeAsIndexesFillTheGaps() {
    MapIndexSet set = new MapIndexSet();
    for (int i : new int[] {5, 3, 4, 10, 0, 11, 2, 1}) {
      set.add(i);
    }
    assertThat(set.toRuns()).containsExactly(0, 6, 10, 12);
    assertThat(set.first()).isZero();
    assertThat(set.last()).isEqualTo(11);
    assertThat(set.contains(6)).isFalse();
    assertThat(MapIndexSet.fromRuns(set.toRuns())).isEqualTo(set);
  }

  @Test
  void aHugeIndexCostsOneRunNotABitPerMap() {
    MapIndexSet set = new MapIndexSet();
    set.add(Integer.MAX_VALUE - 1);
    assertThat(set.runCount()).isEqualTo(1);
    assertThat(set.toRuns()).containsExactly(Integer.MAX_VALUE - 1, Integer.MAX_VALUE);
  }

  @Test
  void beyondTheCapNearbyRunsMergeAndTheEndsStayExact() {
    Random random = new Random(7);
    MapIndexSet set = new MapIndexSet();
    BitSet exact = new BitSet();
    for (int i = 0; i < 100_000; i++) {
      int m = random.nextInt(1_000_000) * 2; // never adjacent: one run each until the cap
      set.add(m);
      exact.set(m);
    }
    assertThat(set.runCount()).isLessThanOrEqualTo(MapIndexSet.MAX_RUNS);
    assertThat(set.first()).isEqualTo(exact.nextSetBit(0));
    assertThat(set.last()).isEqualTo(exact.length() - 1);
    for (int m = exact.nextSetBit(0); m >= 0; m = exact.nextSetBit(m + 1)) {
      assertThat(set.contains(m)).as("map %d", m).isTrue(); // may claim more, never fewer
    }
  }

  @Test
  void indexesAddedInAnyOrderGiveTheExactRunsBelowTheCap() {
    Random random = new Random(11);
    for (int round = 0; round < 200; round++) {
      MapIndexSet set = new MapIndexSet();
      BitSet exact = new BitSet();
      int n = 1 + random.nextInt(300);
      for (int i = 0; i < n; i++) {
        int m = random.nextInt(400);
        set.add(m);
        exact.set(m);
      }
      List<Integer> runs = new ArrayList<>();
      for (int m = exact.nextSetBit(0); m >= 0; m = exact.nextSetBit(exact.nextClearBit(m))) {
        runs.add(m);
        runs.add(exact.nextClearBit(m));
      }
      assertThat(set.toRuns()).as("round %d", round).containsExactly(toArray(runs));
      for (int m = 0; m < 401; m++) {
        assertThat(set.contains(m)).as("round %d, map %d", round, m).isEqualTo(exact.get(m));
      }
      assertThat(MapIndexSet.fromRuns(set.toRuns())).isEqualTo(set);
    }
  }

  private static int[] toArray(List<Integer> values) {
    return values.stream().mapToInt(Integer::intValue).toArray();
  }
}
