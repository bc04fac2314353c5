package io.sluice.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.protocol.proto.CommittedSplit;
import java.util.BitSet;
import org.junit.jupiter.api.Test;

class MapRangesTest {
  private static CommittedSplit split(BitSet maps) {
    return MapRanges.write(CommittedSplit.newBuilder().setPartitionId(3), maps).build();
  }

  @Test
  void aContiguousMapSetTakesAFewBytesWhateverTheMapCount() {
    BitSet maps = new BitSet();
    maps.set(0, 100_000);
    CommittedSplit s = split(maps);
    assertThat(s.getEveryMap()).isFalse();
    assertThat(s.getMapRangesList()).containsExactly(0, 100_000);
    assertThat(s.getSerializedSize()).isLessThan(10);
    assertThat(MapRanges.read(s).toBitSet()).isEqualTo(maps);
    // the bitmap it replaces: 12.5 KB for this split
    assertThat(maps.toByteArray().length).isEqualTo(12_500);
  }

  @Test
  void exactlyTheCapStaysExactAndOneMoreRangeBecomesEveryMap() {
    BitSet atCap = new BitSet();
    for (int r = 0; r < MapRanges.MAX_RANGES; r++) {
      atCap.set(r * 1000, r * 1000 + 3);
    }
    CommittedSplit exact = split(atCap);
    assertThat(exact.getEveryMap()).isFalse();
    assertThat(MapRanges.read(exact).toBitSet()).isEqualTo(atCap);
    assertThat(MapRanges.mayHold(exact, 3, 1000)).isFalse();
    assertThat(MapRanges.mayHold(exact, 3, 1001)).isTrue();

    BitSet overCap = (BitSet) atCap.clone();
    overCap.set(MapRanges.MAX_RANGES * 1000 + 500);
    CommittedSplit every = split(overCap);
    assertThat(every.getEveryMap()).isTrue();
    assertThat(every.getMapRangesList()).isEmpty();
    assertThat(MapRanges.read(every)).isNull();
    assertThat(MapRanges.mayHold(every, 3, 1000)).as("an over-approximation").isTrue();
  }

  @Test
  void theWorstSplitStaysUnderTheDocumentedBound() {
    BitSet worst = new BitSet();
    for (int r = 0; r < MapRanges.MAX_RANGES; r++) {
      // gaps as large as 128 ranges of int map indexes allow
      worst.set(
          r * (Integer.MAX_VALUE / 300) + 1_000_000, r * (Integer.MAX_VALUE / 300) + 1_000_001);
    }
    CommittedSplit s = MapRanges.write(CommittedSplit.newBuilder(), worst).build();
    assertThat(s.getEveryMap()).isFalse();
    assertThat(s.getSerializedSize()).isLessThanOrEqualTo(MapRanges.MAX_WIRE_BYTES);
  }

  @Test
  void aSplitWithoutMapsHoldsNone() {
    CommittedSplit s = split(new BitSet());
    assertThat(s.getEveryMap()).isFalse();
    assertThat(MapRanges.mayHold(s, 0, Integer.MAX_VALUE)).isFalse();
  }
}
