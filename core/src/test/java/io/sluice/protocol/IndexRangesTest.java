package io.sluice.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class IndexRangesTest {
  private static BitSet bits(int... indexes) {
    BitSet b = new BitSet();
    for (int i : indexes) {
      b.set(i);
    }
    return b;
  }

  private static List<Integer> wire(IndexRanges r) {
    List<Integer> out = new ArrayList<>();
    r.encodeTo(out::add);
    return out;
  }

  @Test
  void encodesGapsAndLengths() {
    IndexRanges r = IndexRanges.of(bits(0, 1, 2, 7, 9, 10, 11));
    assertThat(wire(r)).containsExactly(0, 3, 4, 1, 1, 3);
    assertThat(r.toString()).isEqualTo("[0, 3), 7, [9, 12)");
    assertThat(r.size()).isEqualTo(7);
    assertThat(IndexRanges.decode(wire(r), "test")).isEqualTo(r);
  }

  @Test
  void roundTripsRandomSets() {
    Random random = new Random(11);
    for (int round = 0; round < 200; round++) {
      BitSet set = new BitSet();
      int n = random.nextInt(2000);
      for (int i = 0; i < n; i++) {
        int from = random.nextInt(5000);
        set.set(from, from + 1 + random.nextInt(random.nextBoolean() ? 3 : 300));
      }
      IndexRanges r = IndexRanges.of(set);
      assertThat(r.isComplete()).isTrue();
      assertThat(IndexRanges.decode(wire(r), "test").toBitSet()).isEqualTo(set);
    }
  }

  @Test
  void boundariesOfTheIndexSpace() {
    IndexRanges empty = IndexRanges.of(new BitSet());
    assertThat(wire(empty)).isEmpty();
    assertThat(empty.intersects(0, Integer.MAX_VALUE)).isFalse();
    BitSet high = new BitSet();
    high.set(Integer.MAX_VALUE - 2, Integer.MAX_VALUE);
    IndexRanges r = IndexRanges.of(high);
    assertThat(IndexRanges.decode(wire(r), "test").toBitSet()).isEqualTo(high);
    assertThat(r.intersects(Integer.MAX_VALUE - 1, Integer.MAX_VALUE)).isTrue();
    assertThat(r.intersects(0, Integer.MAX_VALUE - 2)).isFalse();
  }

  @Test
  void cutsAWindowAndAtMostSoManyRanges() {
    BitSet everyOther = new BitSet();
    for (int i = 0; i < 100; i += 2) {
      everyOther.set(i);
    }
    IndexRanges window = IndexRanges.of(everyOther, 10, 20, 100);
    assertThat(window.toString()).isEqualTo("10, 12, 14, 16, 18");
    assertThat(window.isComplete()).isTrue();
    IndexRanges capped = IndexRanges.of(everyOther, 0, 100, 3);
    assertThat(capped.rangeCount()).isEqualTo(3);
    assertThat(capped.isComplete()).isFalse();
    assertThat(capped.toString()).isEqualTo("0, 2, 4, ...");
    assertThat(IndexRanges.of(everyOther, 0, 100, 50).isComplete()).isTrue();
    BitSet run = new BitSet();
    run.set(5, 50);
    assertThat(IndexRanges.of(run, 10, 20, 1).toString()).isEqualTo("[10, 20)");
  }

  @Test
  void intersectsFindsOverlapsOnly() {
    IndexRanges r = IndexRanges.of(bits(3, 4, 10));
    assertThat(r.intersects(0, 3)).isFalse();
    assertThat(r.intersects(0, 4)).isTrue();
    assertThat(r.intersects(5, 10)).isFalse();
    assertThat(r.intersects(5, 11)).isTrue();
    assertThat(r.intersects(11, 100)).isFalse();
  }

  @Test
  void malformedEncodingsAreRefused() {
    assertThatThrownBy(() -> IndexRanges.decode(List.of(1), "maps of split 3"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("maps of split 3");
    assertThatThrownBy(() -> IndexRanges.decode(List.of(0, 0), "x"))
        .hasMessageContaining("non-empty");
    assertThatThrownBy(() -> IndexRanges.decode(List.of(-1, 2), "x"))
        .hasMessageContaining("sorted");
    assertThatThrownBy(() -> IndexRanges.decode(List.of(0, 2, 0, 1), "x"))
        .hasMessageContaining("disjoint");
    assertThatThrownBy(() -> IndexRanges.decode(List.of(Integer.MAX_VALUE, 1), "x"))
        .hasMessageContaining("past");
  }
}
