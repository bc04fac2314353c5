package io.sluice.server.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class MemoryBudgetTest {
  @Test
  void reservesUpToTheMaximumAndTracksThePeak() {
    MemoryBudget m = new MemoryBudget(100);
    assertThat(m.tryReserve(60)).isTrue();
    assertThat(m.tryReserve(41)).isFalse();
    assertThat(m.held()).isEqualTo(60);
    assertThat(m.tryReserve(40)).isTrue();
    m.release(100);
    assertThat(m.held()).isZero();
    assertThat(m.peak()).isEqualTo(100);
  }

  @Test
  void releasingMoreThanHeldIsABug() {
    MemoryBudget m = new MemoryBudget(100);
    m.tryReserve(10);
    assertThatThrownBy(() -> m.release(11)).hasMessageContaining("negative");
  }
}
