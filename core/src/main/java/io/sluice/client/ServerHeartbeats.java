package io.sluice.client;

import io.netty.util.concurrent.DefaultThreadFactory;
import io.sluice.protocol.StatusException;
import io.sluice.protocol.proto.ServerAddress;
import java.io.Closeable;
import java.io.IOException;
import java.util.Collection;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Supplier;

/**
 * Tells an application's servers, every {@code sluice.coordinator.heartbeatInterval}, that it is
 * alive; shared by the Spark coordinator and the Flink placement.
 *
 * <p><b>Liveness invariant.</b> Each server is heartbeated on its own: a heartbeat waits at most
 * one interval for its answer, at most one heartbeat per server is in flight, and they run on a
 * bounded pool of their own, never on a shared scheduler. So a server that stops answering (a
 * black-holed host, a hung NodeManager) delays only its own heartbeats; every healthy server hears
 * from a live coordinator at least every two intervals, and servers also count every request that
 * names the application as a sign of life. With the default interval (10s) against {@code
 * sluice.app.timeout} (120s) a healthy server never expires a running application, whatever the
 * other servers do. Thread safe.
 */
public final class ServerHeartbeats implements Closeable {
  /**
   * Heartbeats in flight at once, over all servers; a server whose turn finds none waits a round.
   */
  static final int MAX_SENDERS = 32;

  private final ClientContext context;
  private final String appId;
  private final Supplier<? extends Collection<ServerAddress>> servers;
  private final BiConsumer<ServerAddress, IOException> onFailure;
  private final long timeoutMillis;
  private final Set<ServerAddress> inFlight = ConcurrentHashMap.newKeySet();
  private final ThreadPoolExecutor senders;
  private final ScheduledFuture<?> rounds;

  /**
   * Starts heartbeating.
   *
   * @param servers the servers to heartbeat, read at every round
   * @param onFailure told of each failed heartbeat, with an exception whose message names the
   *     server and why, and whose cause is the failure
   */
  public ServerHeartbeats(
      ClientContext context,
      String appId,
      Supplier<? extends Collection<ServerAddress>> servers,
      BiConsumer<ServerAddress, IOException> onFailure) {
    this.context = context;
    this.appId = appId;
    this.servers = servers;
    this.onFailure = onFailure;
    long interval = context.conf().heartbeatIntervalMillis();
    this.timeoutMillis = Math.min(interval, context.networkConf().requestTimeoutMillis());
    this.senders =
        new ThreadPoolExecutor(
            0,
            MAX_SENDERS,
            60,
            TimeUnit.SECONDS,
            new SynchronousQueue<>(),
            new DefaultThreadFactory("sluice-heartbeat-" + appId, true));
    this.rounds =
        context
            .scheduler()
            .scheduleWithFixedDelay(this::round, interval, interval, TimeUnit.MILLISECONDS);
  }

  /** Scheduler thread: hands each server's heartbeat to a sender; never waits on a server. */
  private void round() {
    for (ServerAddress server : servers.get()) {
      if (!inFlight.add(server)) {
        continue; // the last one has not come back yet
      }
      try {
        senders.execute(() -> send(server));
      } catch (RejectedExecutionException e) {
        inFlight.remove(server);
      }
    }
  }

  private void send(ServerAddress server) {
    try {
      context.call(appId, server, ServerRequests.heartbeat(appId), timeoutMillis);
    } catch (IOException | StatusException e) {
      onFailure.accept(
          server,
          new IOException(
              "heartbeat of application "
                  + appId
                  + " to "
                  + ClientContext.format(server)
                  + " failed: "
                  + e.getMessage(),
              e));
    } finally {
      inFlight.remove(server);
    }
  }

  @Override
  public void close() {
    rounds.cancel(false);
    senders.shutdownNow();
  }
}
