package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.Channel;
import io.netty.channel.embedded.EmbeddedChannel;
import io.sluice.common.Clock;
import io.sluice.network.ReadGate;
import io.sluice.server.memory.MemoryAccount;
import io.sluice.server.memory.MemoryBudget;
import java.util.List;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Under memory pressure the server pauses the applications holding more than their share, not every
 * pushing connection: a small job beside a heavy writer keeps pushing until the replica watermark,
 * and a lone writer is paused as it always was. Real channels and a real budget; the decision runs
 * on flow control's own thread.
 */
class FairSharePauseTest {
  // pause at 800, everyone at 900, resume at 500
  private final MemoryBudget memory = new MemoryBudget(1000, 0.8, 0.9, 0.5, Clock.SYSTEM);
  private final ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1);
  private final FlowControl flowControl = new FlowControl(memory, bytes -> 0, executor);
  private final EmbeddedChannel heavy = new EmbeddedChannel();
  private final EmbeddedChannel small = new EmbeddedChannel();
  private final EmbeddedChannel replica = new EmbeddedChannel();

  FairSharePauseTest() {
    List<Channel> channels = List.of(heavy, small, replica);
    flowControl.attach(
        (Predicate<Channel> which, boolean reading) -> {
          for (Channel ch : channels) {
            if (which.test(ch)) {
              if (reading) {
                ReadGate.resume(ch, ReadGate.MEMORY);
              } else {
                ReadGate.pause(ch, ReadGate.MEMORY);
              }
            }
          }
        });
    memory.setListener(flowControl);
  }

  @AfterEach
  void stop() {
    executor.shutdownNow();
    heavy.finishAndReleaseAll();
    small.finishAndReleaseAll();
    replica.finishAndReleaseAll();
  }

  @Test
  void theHeavyWriterIsPausedAndItsNeighbourKeepsPushing() throws Exception {
    MemoryAccount heavyApp = memory.account("heavy");
    MemoryAccount smallApp = memory.account("small");
    flowControl.pushedOn(heavy, "heavy", false);
    flowControl.pushedOn(small, "small", false);
    flowControl.pushedOn(replica, "heavy", true);
    assertThat(smallApp.tryReserve(20)).isTrue();
    assertThat(heavyApp.tryReserve(790)).isTrue(); // 810 held: pushes pause
    drain();

    assertThat(memory.state()).isEqualTo(MemoryBudget.State.PUSH_PAUSED);
    assertThat(memory.applicationsOverShare()).containsExactly("heavy");
    assertThat(paused(heavy)).isTrue();
    assertThat(paused(small)).isFalse();
    assertThat(paused(replica)).isFalse();

    // the heavy writer's buffers are written (510 held, still paused); the small job grows past
    // its share (500 / 2): it pauses too
    heavyApp.release(300);
    assertThat(smallApp.tryReserve(260)).isTrue();
    drain();
    assertThat(memory.state()).isEqualTo(MemoryBudget.State.PUSH_PAUSED);
    assertThat(memory.applicationsOverShare()).containsExactlyInAnyOrder("heavy", "small");
    // no state change: the re-check that runs while paused (every 10 ms) pauses it
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (!paused(small) && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    assertThat(paused(small)).isTrue();
  }

  @Test
  void pastTheReplicaWatermarkEveryPushingConnectionPauses() throws Exception {
    flowControl.pushedOn(heavy, "heavy", false);
    flowControl.pushedOn(small, "small", false);
    flowControl.pushedOn(replica, "heavy", true);
    assertThat(memory.account("small").tryReserve(10)).isTrue();
    assertThat(memory.account("heavy").tryReserve(900)).isTrue();
    drain();

    assertThat(memory.state()).isEqualTo(MemoryBudget.State.ALL_PAUSED);
    assertThat(paused(heavy)).isTrue();
    assertThat(paused(small)).isTrue();
    assertThat(paused(replica)).isTrue();
  }

  @Test
  void aLoneWriterPausesUntilTheResumeMarkAsBefore() throws Exception {
    MemoryAccount heavyApp = memory.account("heavy");
    flowControl.pushedOn(heavy, "heavy", false);
    assertThat(heavyApp.tryReserve(810)).isTrue();
    drain();
    assertThat(paused(heavy)).isTrue();

    heavyApp.release(300); // 510 held: still above the resume mark, still paused
    drain();
    assertThat(paused(heavy)).isTrue();

    heavyApp.release(10); // 500: resumes
    drain();
    assertThat(memory.state()).isEqualTo(MemoryBudget.State.ACCEPTING);
    assertThat(paused(heavy)).isFalse();
  }

  @Test
  void aConnectionPushingForAnApplicationOverItsSharePauses() throws Exception {
    flowControl.pushedOn(small, "small", false);
    flowControl.pushedOn(small, "heavy", false); // one client process serving two jobs
    assertThat(memory.account("small").tryReserve(10)).isTrue();
    assertThat(memory.account("heavy").tryReserve(800)).isTrue();
    drain();
    assertThat(paused(small)).isTrue();
  }

  private static boolean paused(EmbeddedChannel channel) {
    channel.runPendingTasks();
    return ReadGate.isPaused(channel, ReadGate.MEMORY);
  }

  /** Waits until the decisions queued before now ran (one thread, in order). */
  private void drain() throws Exception {
    executor.submit(() -> {}).get(30, TimeUnit.SECONDS);
    executor.submit(() -> {}).get(30, TimeUnit.SECONDS);
  }
}
