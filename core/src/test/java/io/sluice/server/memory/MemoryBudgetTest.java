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

  @Test
  void theShareIsDividedByWeight() {
    // resume mark 500, divided among two applications of weights 3 and 1: 375 and 125
    MemoryBudget m = budget();
    MemoryAccount heavy = m.account("app-heavy");
    MemoryAccount light = m.account("app-light");
    heavy.setWeight(3);
    assertThat(heavy.tryReserve(350)).isTrue();
    assertThat(light.tryReserve(460)).isTrue();
    assertThat(m.state()).isEqualTo(MemoryBudget.State.PUSH_PAUSED);
    assertThat(m.applicationsOverShare())
        .as("350 is under 3/4 of 500; 460 is over 1/4 of it")
        .containsExactly("app-light");

    heavy.setWeight(1);
    assertThat(m.applicationsOverShare())
        .as("equal weights: 250 each, both hold more")
        .containsExactlyInAnyOrder("app-heavy", "app-light");
  }

  @Test
  void atTheReplicaMarkOnlyTheHeaviestAreRefusedWhatFits() {
    MemoryBudget m = budget();
    MemoryAccount heavy = m.account("app-heavy");
    MemoryAccount light = m.account("app-light");
    assertThat(heavy.tryReserve(800)).isTrue();
    assertThat(m.congestFirst("app-heavy")).as("below the replica mark").isFalse();
    assertThat(light.tryReserve(100)).isTrue();
    assertThat(m.state()).isEqualTo(MemoryBudget.State.ALL_PAUSED);
    assertThat(m.congestFirst("app-heavy")).as("800 of a 250 share").isTrue();
    assertThat(m.congestFirst("app-light")).as("100 of a 250 share").isFalse();

    light.release(100);
    assertThat(m.congestFirst("app-heavy"))
        .as("a lone writer is never refused what fits")
        .isFalse();
  }

  @Test
  void anAccountCountsItsWritersWithinALimit() {
    MemoryAccount account = budget().account("app-1");
    assertThat(account.tryOpenWriter(2)).isTrue();
    assertThat(account.tryOpenWriter(2)).isTrue();
    assertThat(account.tryOpenWriter(2)).isFalse();
    assertThat(account.openWriters()).isEqualTo(2);
    account.writerClosed();
    assertThat(account.tryOpenWriter(2)).isTrue();
    assertThat(account.tryOpenWriter(0)).as("0: no limit").isTrue();
    assertThat(account.openWriters()).isEqualTo(3);
  }
}
