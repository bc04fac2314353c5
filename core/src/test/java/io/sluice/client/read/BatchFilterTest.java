package io.sluice.client.read;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class BatchFilterTest {
  @Test
  void keepsWinningAttemptsInRangeOnce() {
    BatchFilter f = new BatchFilter(List.of(0, 2, 1, -1), 1, 4);
    assertThat(f.accept(0, 0, 0)).as("map below range").isFalse();
    assertThat(f.accept(1, 2, 0)).isTrue();
    assertThat(f.accept(1, 2, 0)).as("duplicate batch").isFalse();
    assertThat(f.accept(1, 0, 1)).as("losing attempt").isFalse();
    assertThat(f.accept(1, 2, 1)).isTrue();
    assertThat(f.accept(2, 1, 7)).isTrue();
    assertThat(f.accept(3, 0, 0)).as("map without a winner").isFalse();
    assertThat(f.accept(9, 0, 0)).as("map beyond the shuffle").isFalse();
  }
}
