package io.sluice.client;

import io.netty.channel.ConnectTimeoutException;
import io.sluice.client.SilentServerWatch.SilentServerException;
import io.sluice.common.Futures;
import io.sluice.network.ConnectionLostException;
import io.sluice.protocol.StatusException;
import io.sluice.protocol.proto.ServerAddress;
import io.sluice.protocol.proto.Status;
import java.io.InterruptedIOException;
import java.net.ConnectException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How clients ride out a server's restart. A server that stops gracefully answers new pushes
 * HARD_SPLIT, commits what it accepted and records it; it comes back on the same port and serves
 * those splits again. In between its port refuses connections and the connections it had are
 * closed. So for {@code sluice.client.serverRestartWait} from the first such failure, the clients
 * retry that server instead of taking its data for lost: readers open their split on it again, the
 * coordinator asks it again to commit, and a partition that no other server can take waits for it.
 *
 * <p>Only a refused connect and a lost connection ({@link #mayBeRestarting}) are waited for. A
 * server that answers, with any status, is up; a silent one ({@link SilentServerWatch}) and a
 * connect that times out are a host that is gone or black-holed, which a restart is not: those fail
 * as before. Thread safe.
 */
public final class ServerRestartWait {
  private static final Logger LOG = LoggerFactory.getLogger(ServerRestartWait.class);

  /** Backoff between retries of a server that is away: a restart takes seconds. */
  private static final long FIRST_RETRY_MILLIS = 200;

  private static final long MAX_RETRY_MILLIS = 2000;

  private final long waitNanos;
  private final ScheduledExecutorService scheduler;
  private final ClientMetrics metrics;
  private final Backoff backoff = new Backoff(FIRST_RETRY_MILLIS, MAX_RETRY_MILLIS);

  /**
   * @param waitMillis how long a server may stay away; 0 never waits
   * @param scheduler runs the retries of {@link #retryAsync}
   * @param metrics counts every retry ({@link ClientMetrics#waitedForServer})
   */
  public ServerRestartWait(
      long waitMillis, ScheduledExecutorService scheduler, ClientMetrics metrics) {
    if (waitMillis < 0) {
      throw new IllegalArgumentException("a restart wait must not be negative: " + waitMillis);
    }
    this.waitNanos = TimeUnit.MILLISECONDS.toNanos(waitMillis);
    this.scheduler = scheduler;
    this.metrics = metrics;
  }

  /**
   * Whether {@code failure} says the server's process is away (it refused the connect, or the
   * connection closed or broke under the request), as it is while it restarts.
   */
  public static boolean mayBeRestarting(Throwable failure) {
    int depth = 0;
    for (Throwable t = failure; t != null && depth < 16; t = t.getCause(), depth++) {
      if (t instanceof SilentServerException
          || t instanceof StatusException
          || t instanceof ConnectTimeoutException) {
        return false;
      }
      if (t instanceof ConnectionLostException || t instanceof ConnectException) {
        return true;
      }
    }
    return false;
  }

  /**
   * Whether {@code failure} says the server is away, as {@link #mayBeRestarting}, or stopping: it
   * answered {@code DECOMMISSIONING}, as a stopping server answers a registration (a decommissioned
   * one does too; it takes no new data however long one waits, and the wait is bounded).
   */
  public static boolean awayOrStopping(Throwable failure) {
    int depth = 0;
    for (Throwable t = failure; t != null && depth < 16; t = t.getCause(), depth++) {
      if (t instanceof StatusException) {
        return ((StatusException) t).status() == Status.DECOMMISSIONING;
      }
    }
    return mayBeRestarting(failure);
  }

  /** The wait for one server, from its first failure; for a caller that may block. */
  public Wait start() {
    return new Wait(System.nanoTime() + waitNanos);
  }

  /** The wait, in milliseconds (for messages). */
  public long waitMillis() {
    return TimeUnit.NANOSECONDS.toMillis(waitNanos);
  }

  /**
   * Runs {@code call}, and runs it again after a short backoff while it fails in a way that {@link
   * #mayBeRestarting}, until the wait has passed; then, or on any other failure, fails with the
   * last attempt's failure. {@code what} names the request and {@code server} its server, for the
   * log. Never blocks.
   */
  public <T> CompletableFuture<T> retryAsync(
      ServerAddress server, String what, Supplier<CompletableFuture<T>> call) {
    return retryAsync(server, what, ServerRestartWait::mayBeRestarting, call);
  }

  /**
   * Like {@link #retryAsync(ServerAddress, String, Supplier)}, retrying the failures that {@code
   * waitable} accepts.
   */
  public <T> CompletableFuture<T> retryAsync(
      ServerAddress server,
      String what,
      Predicate<Throwable> waitable,
      Supplier<CompletableFuture<T>> call) {
    CompletableFuture<T> result = new CompletableFuture<>();
    attempt(server, what, waitable, call, result, 0, 0L);
    return result;
  }

  private <T> void attempt(
      ServerAddress server,
      String what,
      Predicate<Throwable> waitable,
      Supplier<CompletableFuture<T>> call,
      CompletableFuture<T> result,
      int retries,
      long deadlineNanos) {
    CompletableFuture<T> answer;
    try {
      answer = call.get();
    } catch (RuntimeException e) {
      result.completeExceptionally(e);
      return;
    }
    answer.whenComplete(
        (value, error) -> {
          if (error == null) {
            if (retries > 0) {
              LOG.info(
                  "Sluice server {} is back: {} went through", ClientContext.format(server), what);
            }
            result.complete(value);
            return;
          }
          Throwable cause = Futures.cause(error);
          long deadline = retries == 0 ? System.nanoTime() + waitNanos : deadlineNanos;
          if (!waitable.test(cause) || System.nanoTime() - deadline >= 0) {
            result.completeExceptionally(cause);
            return;
          }
          if (retries == 0) {
            LOG.warn(
                "Sluice server {} is away ({}); retrying {} for up to {} ms while it may be"
                    + " restarting (sluice.client.serverRestartWait)",
                ClientContext.format(server),
                cause.getMessage(),
                what,
                waitMillis());
          }
          metrics.waitedForServer();
          try {
            scheduler.schedule(
                () -> attempt(server, what, waitable, call, result, retries + 1, deadline),
                backoff.delayMillis(retries + 1),
                TimeUnit.MILLISECONDS);
          } catch (RejectedExecutionException closed) {
            result.completeExceptionally(cause);
          }
        });
  }

  /** One caller's wait for a server that is away. Not thread safe. */
  public final class Wait {
    private final long deadlineNanos;
    private int retries;

    private Wait(long deadlineNanos) {
      this.deadlineNanos = deadlineNanos;
    }

    /**
     * Sleeps before the next retry of a server whose last failure was {@code failure}: true when
     * the caller should try again, false (at once) when the failure is not one a restart explains
     * or the wait has passed.
     *
     * @throws InterruptedIOException when interrupted while it sleeps
     */
    public boolean pauseBeforeRetry(Throwable failure) throws InterruptedIOException {
      return mayBeRestarting(failure) && pause();
    }

    /**
     * Sleeps before the next retry of a server that is away or stopping: true when the caller
     * should try again, false (at once) when the wait has passed.
     *
     * @throws InterruptedIOException when interrupted while it sleeps
     */
    public boolean pause() throws InterruptedIOException {
      long sleep = nextPauseMillis();
      if (sleep < 0) {
        return false;
      }
      try {
        Thread.sleep(sleep);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new InterruptedIOException("Interrupted while waiting for a Sluice server to return");
      }
      return true;
    }

    /**
     * For a caller that must not sleep: how long to pause before the next retry of a server whose
     * last failure was {@code failure}, counting the retry; -1 when the failure is not one a
     * restart explains or the wait has passed.
     */
    public long nextPauseMillis(Throwable failure) {
      return mayBeRestarting(failure) ? nextPauseMillis() : -1;
    }

    private long nextPauseMillis() {
      long left = deadlineNanos - System.nanoTime();
      if (left <= 0) {
        return -1;
      }
      retries++;
      metrics.waitedForServer();
      return Math.min(backoff.delayMillis(retries), TimeUnit.NANOSECONDS.toMillis(left) + 1);
    }

    /** Retries so far. */
    public int retries() {
      return retries;
    }
  }
}
