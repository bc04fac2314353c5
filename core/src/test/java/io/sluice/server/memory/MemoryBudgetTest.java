package io.sluice.server.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.testutil.ManualClock;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class MemoryBudgetTest {
  private final ManualClock clock = new ManualClock();
  private final List<String> events = new ArrayList<>();

  private MemoryBudget budget() {
    MemoryBudget m = new MemoryBudget(1000, 0.8, 0.9, 0.5, clock);
    m.setListener(
        new MemoryBudget.Listener() {
          @Override
          public void stateChanged() {
            events.add(m.state().name());
          }

          @Override
          public void needRoom(long bytes) {
            events.add("room " + bytes);
          }
        });
    return m;
  }

  @Test
  void pausesAtTheWatermarksAndResumesBelowTheLowOne() {
    MemoryBudget m = budget();
    assertThat(m.tryReserve(700)).isTrue();
    assertThat(m.state()).isEqualTo(MemoryBudget.State.ACCEPTING);
    assertThat(m.tryReserve(150)).as("crossing 0.8 is still taken").isTrue();
    assertThat(m.state()).isEqualTo(MemoryBudget.State.PUSH_PAUSED);
    assertThat(m.excessOverResume()).isEqualTo(350);
    assertThat(m.tryReserve(60)).as("already read while paused, and it fits").isTrue();
    assertThat(m.state()).isEqualTo(MemoryBudget.State.ALL_PAUSED);
    assertThat(m.tryReserve(100)).as("does not fit under the maximum").isFalse();
    clock.advance(250);
    m.release(300);
    assertThat(m.state()).as("610 held, above 500").isEqualTo(MemoryBudget.State.ALL_PAUSED);
    m.release(110);
    assertThat(m.state()).isEqualTo(MemoryBudget.State.ACCEPTING);
    assertThat(m.pausedMillis()).isEqualTo(250);
    assertThat(events)
        .as("crossing the early-flush mark (650) asks to flush down to the resume mark first")
        .containsExactly("room 200", "PUSH_PAUSED", "ALL_PAUSED", "room 100", "ACCEPTING");
    m.release(500);
    assertThat(m.held()).isZero();
    assertThat(m.peak()).isEqualTo(910);
  }

  @Test
  void neverHoldsMoreThanTheMaximum() {
    MemoryBudget m = budget();
    assertThat(m.tryReserve(400)).isTrue();
    assertThat(m.tryReserve(700)).isFalse();
    assertThat(m.held()).isEqualTo(400);
    assertThat(m.state()).isEqualTo(MemoryBudget.State.ACCEPTING);
    assertThat(events).containsExactly("room 700");
  }

  @Test
  void releasingMoreThanHeldIsABug() {
    MemoryBudget m = budget();
    m.tryReserve(10);
    assertThatThrownBy(() -> m.release(11)).hasMessageContaining("accounting broken");
  }
}
