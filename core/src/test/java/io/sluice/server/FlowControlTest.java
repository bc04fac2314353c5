package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.common.Clock;
import io.sluice.server.memory.MemoryBudget;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Flow control queues at most one flush request and one decision however many notifications arrive,
 * so a burst of refused reservations does not line up a walk over every buffer per refusal. The
 * executor is held on a latch while the notifications arrive, so what waits on it can be counted.
 */
class FlowControlTest {
  private static final long MAX = 1000;

  private final ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1);
  private final CountDownLatch blocked = new CountDownLatch(1);
  private final CountDownLatch release = new CountDownLatch(1);
  private final List<Long> flushRequests = Collections.synchronizedList(new ArrayList<>());
  private MemoryBudget memory;

  @BeforeEach
  void blockTheExecutor() throws InterruptedException {
    memory = new MemoryBudget(MAX, 0.8, 0.9, 0.5, Clock.SYSTEM);
    memory.setListener(
        new FlowControl(
            memory,
            bytes -> {
              flushRequests.add(bytes);
              return 0;
            },
            executor));
    executor.execute(
        () -> {
          blocked.countDown();
          try {
            release.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
    assertThat(blocked.await(30, TimeUnit.SECONDS)).isTrue();
  }

  @AfterEach
  void stop() {
    release.countDown();
    executor.shutdownNow();
  }

  @Test
  void manyRefusedReservationsQueueOneFlushRequestForAllTheirBytes() throws Exception {
    // filling the budget pauses (one decision) and crosses the early-flush mark (one request)
    assertThat(memory.tryReserve(MAX)).isTrue();
    int queuedAfterFill = executor.getQueue().size();
    assertThat(queuedAfterFill).isEqualTo(2);

    int refusals = 10_000;
    for (int i = 0; i < refusals; i++) {
      assertThat(memory.tryReserve(7)).isFalse();
    }
    assertThat(executor.getQueue().size()).isEqualTo(queuedAfterFill);

    release.countDown();
    drain();
    long overResume = MAX - memory.resumeWatermarkBytes();
    assertThat(flushRequests).containsExactly(overResume + 7L * refusals);
  }

  @Test
  void aRequestAfterTheQueuedOneRanIsQueuedAgain() throws Exception {
    memory.tryReserve(MAX);
    release.countDown();
    drain();
    assertThat(flushRequests).hasSize(1);

    memory.tryReserve(3);
    drain();
    assertThat(flushRequests).hasSize(2).endsWith(3L);
  }

  @Test
  void manyStateChangesQueueOneDecision() {
    FlowControl flowControl = new FlowControl(memory, bytes -> 0, executor);
    int before = executor.getQueue().size();
    for (int i = 0; i < 1000; i++) {
      flowControl.stateChanged();
    }
    assertThat(executor.getQueue().size()).isEqualTo(before + 1);
  }

  /** Waits until everything queued before now has run (one thread, in order). */
  private void drain() throws Exception {
    executor.submit(() -> {}).get(30, TimeUnit.SECONDS);
  }
}
