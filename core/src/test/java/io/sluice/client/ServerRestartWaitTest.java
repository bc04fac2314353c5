package io.sluice.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.channel.ConnectTimeoutException;
import io.sluice.client.SilentServerWatch.SilentServerException;
import io.sluice.network.ConnectionLostException;
import io.sluice.protocol.StatusException;
import io.sluice.protocol.proto.ServerAddress;
import io.sluice.protocol.proto.Status;
import java.io.IOException;
import java.net.ConnectException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ServerRestartWaitTest {
  private static final ServerAddress SERVER = ClientContext.address("127.0.0.1", 9290);
  private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
  private final ClientMetrics metrics = new ClientMetrics();

  @AfterEach
  void stop() {
    scheduler.shutdownNow();
  }

  @Test
  void aRefusedOrLostConnectionMayBeARestartAndNothingElseIs() {
    assertThat(ServerRestartWait.mayBeRestarting(new IOException("x", new ConnectException())))
        .isTrue();
    assertThat(ServerRestartWait.mayBeRestarting(new ConnectionLostException("closed"))).isTrue();
    assertThat(
            ServerRestartWait.mayBeRestarting(
                new IOException("x", new ConnectTimeoutException("black hole"))))
        .as("a connect that times out: a host gone, not a restart")
        .isFalse();
    assertThat(ServerRestartWait.mayBeRestarting(new SilentServerException("silent"))).isFalse();
    assertThat(
            ServerRestartWait.mayBeRestarting(
                new IOException("x", new StatusException(Status.NOT_FOUND, "no split"))))
        .as("a server that answers is up")
        .isFalse();
    assertThat(ServerRestartWait.mayBeRestarting(new IOException("Input/output error"))).isFalse();
    assertThat(
            ServerRestartWait.awayOrStopping(
                new IOException("x", new StatusException(Status.DECOMMISSIONING, "stopping"))))
        .isTrue();
    assertThat(ServerRestartWait.awayOrStopping(new ConnectionLostException("closed"))).isTrue();
  }

  @Test
  void aServerThatComesBackWithinTheWaitIsRetriedUntilItAnswers() throws Exception {
    ServerRestartWait wait = new ServerRestartWait(30_000, scheduler, metrics);
    AtomicInteger calls = new AtomicInteger();
    CompletableFuture<String> answer =
        wait.retryAsync(
            SERVER,
            "a commit",
            () ->
                calls.incrementAndGet() < 4
                    ? CompletableFuture.failedFuture(
                        new IOException("refused", new ConnectException("Connection refused")))
                    : CompletableFuture.completedFuture("committed"));
    assertThat(answer.get(30, TimeUnit.SECONDS)).isEqualTo("committed");
    assertThat(calls).hasValue(4);
    assertThat(metrics.serverWaits()).isEqualTo(3);
  }

  @Test
  void aServerAwayPastTheWaitOrAnsweringAnErrorFailsWithTheLastFailure() {
    ServerRestartWait none = new ServerRestartWait(0, scheduler, metrics);
    IOException refused = new IOException("refused", new ConnectException("Connection refused"));
    assertThatThrownBy(
            () ->
                none.retryAsync(SERVER, "a commit", () -> CompletableFuture.failedFuture(refused))
                    .get(30, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .hasCause(refused);

    ServerRestartWait wait = new ServerRestartWait(30_000, scheduler, metrics);
    AtomicInteger calls = new AtomicInteger();
    StatusException answered = new StatusException(Status.INTERNAL_ERROR, "broken");
    assertThatThrownBy(
            () ->
                wait.retryAsync(
                        SERVER,
                        "a commit",
                        () -> {
                          calls.incrementAndGet();
                          return CompletableFuture.failedFuture(answered);
                        })
                    .get(30, TimeUnit.SECONDS))
        .hasCause(answered);
    assertThat(calls).as("an answer is not retried").hasValue(1);
  }

  @Test
  void aBlockingCallerPausesOnlyForRestartsAndOnlyWithinTheWait() throws Exception {
    ServerRestartWait.Wait wait = new ServerRestartWait(300, scheduler, metrics).start();
    assertThat(wait.pauseBeforeRetry(new IOException("Input/output error"))).isFalse();
    int pauses = 0;
    while (wait.pauseBeforeRetry(new ConnectionLostException("closed"))) {
      pauses++;
      assertThat(pauses).as("pauses within a 300 ms wait").isLessThan(100);
    }
    assertThat(pauses).isPositive();
    assertThat(wait.retries()).isEqualTo(pauses);
  }
}
