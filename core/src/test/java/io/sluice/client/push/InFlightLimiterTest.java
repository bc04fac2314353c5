package io.sluice.client.push;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.client.ClientContext;
import io.sluice.protocol.proto.ServerAddress;
import java.io.IOException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class InFlightLimiterTest {
  private static final ServerAddress A = ClientContext.address("a", 1);
  private static final ServerAddress B = ClientContext.address("b", 1);

  @Test
  void boundsBytesPerServerAndWakesWaitersOnRelease() throws Exception {
    InFlightLimiter limiter = new InFlightLimiter(100, 60_000);
    limiter.acquire(A, 80);
    limiter.acquire(B, 80); // another server has its own bound
    CountDownLatch acquired = new CountDownLatch(1);
    Thread waiter =
        new Thread(
            () -> {
              try {
                limiter.acquire(A, 50);
                acquired.countDown();
              } catch (IOException | InterruptedException e) {
                throw new IllegalStateException(e);
              }
            });
    waiter.start();
    assertThat(acquired.getCount()).isEqualTo(1);
    limiter.release(A, 80);
    assertThat(acquired.await(30, TimeUnit.SECONDS)).isTrue();
    assertThat(limiter.inFlight(A)).isEqualTo(50);
    waiter.join();
  }

  @Test
  void oversizedPushGoesAloneAndNoProgressFailsNamingTheServer() throws Exception {
    InFlightLimiter limiter = new InFlightLimiter(100, 50);
    limiter.acquire(A, 500);
    assertThatThrownBy(() -> limiter.acquire(A, 1))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("a:1")
        .hasMessageContaining("sluice.push.timeout");
  }
}
