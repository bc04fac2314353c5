package io.sluice.client;

import io.sluice.common.Futures;
import io.sluice.protocol.StatusException;
import io.sluice.protocol.proto.ServerAddress;
import java.io.Closeable;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Finds the servers that leave requests unanswered and fails those requests at once.
 *
 * <p>A server that stops answering without closing its connections (a black-holed host, a hung
 * process) would make every request to it wait {@code sluice.network.requestTimeout} (120s): each
 * push and its retries, so a map task could fail on {@code sluice.push.timeout}, and a commit, so
 * every reducer would wait. A request can also wait for a healthy reason: a server under memory
 * pressure stops reading the connections that push, and a commit of much data takes its time. The
 * two are told apart by a ping on a control connection, which flow control never pauses: when a
 * watched request has waited {@code sluice.network.silentAfter}, its server is pinged; if the ping
 * is not answered within the same time either, every watched request to that server that had waited
 * that long fails with {@link SilentServerException}. A server that answers the ping, with any
 * status, is alive and its requests keep waiting.
 *
 * <p>One check runs every half {@code silentAfter} on the client's scheduler; it and the pings
 * never wait. Thread safe.
 */
public final class SilentServerWatch implements Closeable {
  /** A request failed because its server answered neither it nor a ping. */
  public static final class SilentServerException extends IOException {
    SilentServerException(String message) {
      super(message);
    }
  }

  /** Who a request was sent to, for which application (a ping acts for it), and when. */
  private static final class Sent {
    final String appId;
    final ServerAddress server;
    final long sentNanos;

    Sent(String appId, ServerAddress server, long sentNanos) {
      this.appId = appId;
      this.server = server;
      this.sentNanos = sentNanos;
    }

    boolean sameTarget(Sent other) {
      return appId.equals(other.appId) && server.equals(other.server);
    }
  }

  private final ClientContext context;
  private final long silentAfterMillis;
  private final Map<CompletableFuture<?>, Sent> unanswered = new ConcurrentHashMap<>();
  // "appId host:port" of the pings in flight
  private final Set<String> pinging = ConcurrentHashMap.newKeySet();
  private final ScheduledFuture<?> checks;

  /** The watch of a client context, which owns it ({@link ClientContext#silentServers}). */
  SilentServerWatch(ClientContext context) {
    this.context = context;
    this.silentAfterMillis = context.networkConf().silentAfterMillis();
    long period = Math.max(1, silentAfterMillis / 2);
    this.checks =
        context
            .scheduler()
            .scheduleWithFixedDelay(this::check, period, period, TimeUnit.MILLISECONDS);
  }

  /**
   * Watches {@code answer}, the answer of a request of {@code appId} to {@code server}.
   *
   * @param releaseLate releases an answer that comes after the returned future failed as silent
   * @return a future that completes as {@code answer} does, or first with a {@link
   *     SilentServerException}; {@code answer} itself is never completed here, so the stages that
   *     release its resources still run
   */
  public <T> CompletableFuture<T> watch(
      String appId,
      ServerAddress server,
      CompletableFuture<T> answer,
      Consumer<? super T> releaseLate) {
    CompletableFuture<T> watched = new CompletableFuture<>();
    unanswered.put(watched, new Sent(appId, server, System.nanoTime()));
    watched.whenComplete((v, e) -> unanswered.remove(watched));
    answer.whenComplete(
        (v, e) -> {
          if (e != null) {
            watched.completeExceptionally(Futures.cause(e));
          } else if (!watched.complete(v)) {
            releaseLate.accept(v);
          }
        });
    return watched;
  }

  /**
   * {@link #watch(String, ServerAddress, CompletableFuture, Consumer)} of answers holding nothing.
   */
  public <T> CompletableFuture<T> watch(
      String appId, ServerAddress server, CompletableFuture<T> answer) {
    return watch(appId, server, answer, v -> {});
  }

  /** Scheduler thread: pings each server with a request unanswered for silentAfter, one at once. */
  private void check() {
    long now = System.nanoTime();
    Map<String, Sent> waitedLong = new HashMap<>();
    for (Sent s : unanswered.values()) {
      if (now - s.sentNanos >= TimeUnit.MILLISECONDS.toNanos(silentAfterMillis)) {
        waitedLong.putIfAbsent(s.appId + " " + ClientContext.format(s.server), s);
      }
    }
    for (Map.Entry<String, Sent> e : waitedLong.entrySet()) {
      String key = e.getKey();
      Sent target = e.getValue();
      if (pinging.add(key)) {
        long pingedNanos = System.nanoTime();
        context
            .pingAsync(target.appId, target.server, silentAfterMillis)
            .whenComplete(
                (ok, error) -> {
                  pinging.remove(key);
                  if (error != null && !answered(error)) {
                    failRequestsTo(target, pingedNanos, error);
                  }
                });
      }
    }
  }

  /** A server that answered with a status (any status) is alive. */
  private static boolean answered(Throwable error) {
    return Futures.cause(error) instanceof StatusException;
  }

  /**
   * Fails the requests like {@code target}'s that had waited silentAfter when the ping was sent.
   */
  private void failRequestsTo(Sent target, long pingedNanos, Throwable pingError) {
    ServerAddress server = target.server;
    SilentServerException silent =
        new SilentServerException(
            "Sluice server "
                + ClientContext.format(server)
                + " is silent: a request to it waited "
                + silentAfterMillis
                + " ms (sluice.network.silentAfter) without an answer, and so did a ping ("
                + Futures.cause(pingError).getMessage()
                + ")");
    long limit = pingedNanos - TimeUnit.MILLISECONDS.toNanos(silentAfterMillis);
    for (Map.Entry<CompletableFuture<?>, Sent> e : unanswered.entrySet()) {
      Sent s = e.getValue();
      if (s.sameTarget(target) && s.sentNanos - limit <= 0) {
        e.getKey().completeExceptionally(silent);
      }
    }
  }

  /** Stops the checks; with its client context. */
  @Override
  public void close() {
    checks.cancel(false);
  }
}
