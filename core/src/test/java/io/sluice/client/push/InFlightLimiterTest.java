package io.sluice.client.push;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.client.ClientContext;
import io.sluice.protocol.proto.ServerAddress;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class InFlightLimiterTest {
  private static final ServerAddress A = ClientContext.address("a", 1);
  private static final ServerAddress B = ClientContext.address("b", 1);
  private static final ServerAddress C = ClientContext.address("c", 1);

  /** A thread that takes {@code bytes} for {@code server} and counts down once it has them. */
  private static Thread acquirer(
      InFlightLimiter limiter, ServerAddress server, long bytes, CountDownLatch acquired) {
    Thread t =
        new Thread(
            () -> {
              try {
                limiter.acquire(server, bytes);
                acquired.countDown();
              } catch (IOException | InterruptedException e) {
                throw new IllegalStateException(e);
              }
            });
    t.start();
    return t;
  }

  /** Waits until {@code t} waits inside the limiter (no timing: the thread's state says so). */
  private static void awaitBlocked(Thread t) throws InterruptedException {
    while (t.getState() != Thread.State.TIMED_WAITING && t.getState() != Thread.State.WAITING) {
      assertThat(t.isAlive()).isTrue();
      Thread.sleep(1);
    }
  }

  @Test
  void boundsBytesPerServerAndWakesWaitersOnRelease() throws Exception {
    InFlightLimiter limiter = new InFlightLimiter(100, 1000, 60_000);
    limiter.acquire(A, 80);
    limiter.acquire(B, 80); // another server has its own bound
    CountDownLatch acquired = new CountDownLatch(1);
    Thread waiter = acquirer(limiter, A, 50, acquired);
    awaitBlocked(waiter);
    assertThat(acquired.getCount()).isEqualTo(1);
    limiter.release(A, 80);
    assertThat(acquired.await(30, TimeUnit.SECONDS)).isTrue();
    assertThat(limiter.inFlight(A)).isEqualTo(50);
    waiter.join();
  }

  @Test
  void oversizedPushGoesAloneAndNoProgressFailsNamingTheServer() throws Exception {
    InFlightLimiter limiter = new InFlightLimiter(100, 1000, 50);
    limiter.acquire(A, 500);
    assertThatThrownBy(() -> limiter.acquire(A, 1))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("a:1")
        .hasMessageContaining("sluice.push.maxInFlightBytesPerServer")
        .hasMessageContaining("sluice.push.timeout");
  }

  @Test
  void boundsTheJvmOverAllServersAndWakesWaitersOnRelease() throws Exception {
    InFlightLimiter limiter = new InFlightLimiter(100, 150, 60_000);
    limiter.acquire(A, 80);
    limiter.acquire(B, 70);
    assertThat(limiter.totalInFlight()).isEqualTo(150);
    CountDownLatch acquired = new CountDownLatch(1);
    Thread waiter = acquirer(limiter, C, 30, acquired); // C itself has room
    awaitBlocked(waiter);
    assertThat(acquired.getCount()).isEqualTo(1);
    limiter.release(B, 20);
    assertThat(acquired.getCount()).as("20 bytes freed, 30 wanted").isEqualTo(1);
    limiter.release(A, 80);
    assertThat(acquired.await(30, TimeUnit.SECONDS)).isTrue();
    waiter.join();
    assertThat(limiter.totalInFlight()).isEqualTo(80);
    assertThat(limiter.inFlight(C)).isEqualTo(30);
  }

  @Test
  void pushLargerThanTheJvmBoundGoesAloneAndIsNotOvertakenBySmallOnes() throws Exception {
    InFlightLimiter limiter = new InFlightLimiter(1000, 100, 60_000);
    limiter.acquire(A, 60);
    CountDownLatch bigIn = new CountDownLatch(1);
    Thread big = acquirer(limiter, B, 300, bigIn);
    awaitBlocked(big);
    CountDownLatch smallIn = new CountDownLatch(1);
    Thread small = acquirer(limiter, C, 10, smallIn); // would fit, but waits its turn
    awaitBlocked(small);
    assertThat(bigIn.getCount()).isEqualTo(1);
    assertThat(smallIn.getCount()).isEqualTo(1);
    limiter.release(A, 60);
    assertThat(bigIn.await(30, TimeUnit.SECONDS)).isTrue();
    big.join();
    assertThat(limiter.totalInFlight()).as("alone").isEqualTo(300);
    awaitBlocked(small);
    limiter.release(B, 300);
    assertThat(smallIn.await(30, TimeUnit.SECONDS)).isTrue();
    small.join();
    assertThat(limiter.totalInFlight()).isEqualTo(10);
  }

  @Test
  void noRoomInTheJvmFailsNamingTheServerAndTheKeyAndGivesBackTheServersRoom() throws Exception {
    InFlightLimiter limiter = new InFlightLimiter(100, 100, 50);
    limiter.acquire(A, 100);
    assertThatThrownBy(() -> limiter.acquire(B, 1))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("b:1")
        .hasMessageContaining("sluice.push.maxInFlightBytes ")
        .hasMessageContaining("sluice.push.timeout");
    assertThat(limiter.inFlight(B)).isZero();
    assertThat(limiter.totalInFlight()).isEqualTo(100);
  }

  @Test
  void manyPushersNeverHoldMoreThanTheJvmBound() throws Exception {
    long max = 1000;
    InFlightLimiter limiter = new InFlightLimiter(300, max, 60_000);
    ServerAddress[] servers = new ServerAddress[10];
    for (int i = 0; i < servers.length; i++) {
      servers[i] = ClientContext.address("s" + i, 1);
    }
    AtomicLong held = new AtomicLong();
    AtomicLong peak = new AtomicLong();
    ExecutorService pool = Executors.newFixedThreadPool(8);
    List<Future<?>> done = new ArrayList<>();
    for (int t = 0; t < 8; t++) {
      int seed = t;
      done.add(
          pool.submit(
              () -> {
                Random random = new Random(seed);
                for (int i = 0; i < 2000; i++) {
                  ServerAddress s = servers[random.nextInt(servers.length)];
                  long bytes = 1 + random.nextInt(250);
                  limiter.acquire(s, bytes);
                  // counted after acquire and before release: never above what the limiter holds
                  peak.accumulateAndGet(held.addAndGet(bytes), Math::max);
                  Thread.yield();
                  held.addAndGet(-bytes);
                  limiter.release(s, bytes);
                }
                return null;
              }));
    }
    for (Future<?> f : done) {
      f.get(2, TimeUnit.MINUTES);
    }
    pool.shutdown();
    assertThat(peak.get()).isPositive().isLessThanOrEqualTo(max);
    assertThat(limiter.totalInFlight()).isZero();
  }
}
