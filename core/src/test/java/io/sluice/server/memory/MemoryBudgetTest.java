package io.sluice.server.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.testutil.ManualClock;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class MemoryBudgetTest {
  private final ManualClock clock = new ManualClock();
  private final List<Long> pressure = new ArrayList<>();

  private MemoryBudget budget() {
    MemoryBudget m = new MemoryBudget(1000, 0.8, 0.9, 0.5, clock);
    m.setPressureListener(pressure::add);
    return m;
  }

  @Test
  void pausesPushesAtTheWatermarkAndResumesBelowTheLowOne() {
    MemoryBudget m = budget();
    assertThat(m.tryReservePush(700)).isTrue();
    assertThat(m.state()).isEqualTo(MemoryBudget.State.ACCEPTING);
    assertThat(m.tryReservePush(150)).as("crossing 0.8 is still taken").isTrue();
    assertThat(m.state()).isEqualTo(MemoryBudget.State.PUSH_PAUSED);
    assertThat(pressure).containsExactly(350L);
    assertThat(m.tryReservePush(1)).as("paused").isFalse();
    assertThat(m.tryReserveReplica(40)).as("replicas still flow").isTrue();
    assertThat(m.tryReserveReplica(20)).as("crossing 0.9 is taken").isTrue();
    assertThat(m.state()).isEqualTo(MemoryBudget.State.ALL_PAUSED);
    assertThat(m.tryReserveReplica(1)).isFalse();
    clock.advance(250);
    m.release(300);
    assertThat(m.state()).as("610 held, above 500").isEqualTo(MemoryBudget.State.ALL_PAUSED);
    m.release(110);
    assertThat(m.state()).isEqualTo(MemoryBudget.State.ACCEPTING);
    assertThat(m.pausedMillis()).isEqualTo(250);
    assertThat(m.tryReservePush(1)).isTrue();
    m.release(501);
    assertThat(m.held()).isZero();
    assertThat(m.peak()).isEqualTo(910);
  }

  @Test
  void neverHoldsMoreThanTheMaximumAndAsksForRoomWhenABodyDoesNotFit() {
    MemoryBudget m = budget();
    assertThat(m.tryReservePush(400)).isTrue();
    assertThat(m.tryReservePush(700)).isFalse();
    assertThat(m.held()).isEqualTo(400);
    assertThat(m.state()).isEqualTo(MemoryBudget.State.ACCEPTING);
    assertThat(pressure).containsExactly(700L);
  }

  @Test
  void releasingMoreThanHeldIsABug() {
    MemoryBudget m = budget();
    m.tryReservePush(10);
    assertThatThrownBy(() -> m.release(11)).hasMessageContaining("accounting broken");
  }
}
