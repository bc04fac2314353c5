package io.sluice.network;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import java.io.Closeable;
import java.io.IOException;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongFunction;

/**
 * One connection to a server. Thread safe: many tasks send on it at once. Every request gets a
 * fresh request id and completes exactly once: with the response, with a {@link TimeoutException}
 * after the request timeout, or with an {@link IOException} naming the server when the connection
 * fails or closes.
 */
public final class TransportClient implements Closeable {
  private final Channel channel;
  private final String server;
  private final long requestTimeoutNanos;
  private final AtomicLong nextRequestId = new AtomicLong();
  private final Map<Long, Pending> pending = new ConcurrentHashMap<>();
  private volatile long lastActivityNanos = System.nanoTime();

  TransportClient(Channel channel, String server, long requestTimeoutMillis) {
    this.channel = channel;
    this.server = server;
    this.requestTimeoutNanos = requestTimeoutMillis * 1_000_000L;
    channel.closeFuture().addListener(f -> failAll(new ConnectionLostException(closedMessage())));
  }

  /** "host:port" of the server. */
  public String server() {
    return server;
  }

  public boolean isActive() {
    return channel.isActive();
  }

  /**
   * Sends a request built for a fresh request id. The message's body is handed to the transport.
   * The returned future's response is owned by the caller, who must release it.
   */
  public CompletableFuture<Message> send(LongFunction<Message> requestForId) {
    return send(requestForId, requestTimeoutNanos / 1_000_000L);
  }

  /** Like {@link #send(LongFunction)} with a timeout of its own (a long wait by design). */
  public CompletableFuture<Message> send(LongFunction<Message> requestForId, long timeoutMillis) {
    long id = nextRequestId.incrementAndGet();
    Message request = requestForId.apply(id);
    CompletableFuture<Message> future = new CompletableFuture<>();
    if (!channel.isActive()) {
      request.release();
      future.completeExceptionally(new ConnectionLostException(closedMessage()));
      return future;
    }
    long timeoutNanos = timeoutMillis * 1_000_000L;
    pending.put(id, new Pending(future, System.nanoTime() + timeoutNanos, timeoutNanos));
    lastActivityNanos = System.nanoTime();
    ChannelFuture write = channel.writeAndFlush(request);
    write.addListener(
        f -> {
          if (!f.isSuccess()) {
            Pending p = pending.remove(id);
            if (p != null) {
              p.future.completeExceptionally(
                  new ConnectionLostException(
                      "Failed to send a request to Sluice server " + server, f.cause()));
            }
          }
        });
    return future;
  }

  /** Completes the request the response answers; drops (and releases) unknown responses. */
  void onResponse(Message response) {
    lastActivityNanos = System.nanoTime();
    Pending p = pending.remove(response.requestId());
    if (p == null || !p.future.complete(response)) {
      response.release();
    }
  }

  /** Fails requests past their deadline; called periodically by the pool. */
  void expireTimedOut(long nowNanos) {
    for (Map.Entry<Long, Pending> e : pending.entrySet()) {
      if (nowNanos - e.getValue().deadlineNanos > 0 && pending.remove(e.getKey(), e.getValue())) {
        e.getValue()
            .future
            .completeExceptionally(
                new TimeoutException(
                    "No response from Sluice server "
                        + server
                        + " within "
                        + e.getValue().timeoutNanos / 1_000_000_000L
                        + "s"
                        + (e.getValue().timeoutNanos == requestTimeoutNanos
                            ? " (sluice.network.requestTimeout)"
                            : "")));
      }
    }
  }

  boolean isIdle(long nowNanos, long idleNanos) {
    return pending.isEmpty() && nowNanos - lastActivityNanos > idleNanos;
  }

  void failAll(Throwable cause) {
    for (Long id : pending.keySet()) {
      Pending p = pending.remove(id);
      if (p != null) {
        p.future.completeExceptionally(cause);
      }
    }
  }

  private String closedMessage() {
    return "Connection to Sluice server " + server + " is closed";
  }

  @Override
  public void close() {
    channel.close();
  }

  private static final class Pending {
    final CompletableFuture<Message> future;
    final long deadlineNanos;
    final long timeoutNanos;

    Pending(CompletableFuture<Message> future, long deadlineNanos, long timeoutNanos) {
      this.future = future;
      this.deadlineNanos = deadlineNanos;
      this.timeoutNanos = timeoutNanos;
    }
  }
}
