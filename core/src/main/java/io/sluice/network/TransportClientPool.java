package io.sluice.network;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.util.AttributeKey;
import java.io.Closeable;
import java.io.IOException;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The connections of one JVM to its servers, shared by all tasks in it: up to {@code
 * sluice.network.connectionsPerServer} per server, picked at random, reopened when closed, closed
 * after {@code sluice.network.idleTimeout} without traffic. Thread safe.
 */
public final class TransportClientPool implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(TransportClientPool.class);
  private static final AttributeKey<TransportClient> CLIENT = AttributeKey.valueOf("sluiceClient");

  private final NetworkConf conf;
  private final EventLoopGroup group;
  private final Bootstrap bootstrap;

  /** Per server, its connection slots: each a connect under way or done. */
  private final Map<String, CompletableFuture<TransportClient>[]> clients =
      new ConcurrentHashMap<>();

  /** Run on every new connection before it is handed out; null for none. */
  private final ConnectionHandshake handshake;

  private final MessageSchema schema;

  private final String name;
  private volatile boolean closed;

  public TransportClientPool(String name, NetworkConf conf, MessageSchema schema) {
    this(name, conf, schema, null);
  }

  /**
   * @param handshake run on every new connection made for a principal (authentication); null for
   *     none
   */
  public TransportClientPool(
      String name, NetworkConf conf, MessageSchema schema, ConnectionHandshake handshake) {
    this.schema = schema;
    this.name = name;
    this.conf = conf;
    this.handshake = handshake;
    this.group = Transports.newEventLoopGroup(conf, conf.ioThreads(), name + "-client");
    this.bootstrap =
        new Bootstrap()
            .group(group)
            .channel(Transports.clientChannelClass(conf))
            .option(ChannelOption.ALLOCATOR, PooledByteBufAllocator.DEFAULT)
            .option(ChannelOption.TCP_NODELAY, true)
            .option(ChannelOption.SO_KEEPALIVE, true)
            .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) conf.connectTimeoutMillis())
            .handler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel ch) {
                    conf.tls().addClientHandler(ch);
                    ch.pipeline()
                        .addLast("encoder", FrameEncoder.INSTANCE)
                        .addLast("decoder", new FrameDecoder(schema, conf.maxFrameSize()))
                        .addLast("handler", new ResponseHandler(schema));
                  }
                });
    group.scheduleAtFixedRate(this::sweep, 1, 1, TimeUnit.SECONDS);
  }

  /**
   * A connection to {@code host:port}, opened if needed; waits up to {@code
   * sluice.network.connectTimeout} for a new one. Callers on an event loop or a callback use {@link
   * #getAsync}.
   *
   * @throws IOException naming the server when it cannot be reached
   */
  public TransportClient get(String host, int port) throws IOException {
    return get(host, port, null);
  }

  /**
   * Like {@link #get(String, int)}, for {@code principal}: with a handshake, connections are
   * authenticated for one principal each and kept apart per principal.
   */
  public TransportClient get(String host, int port, String principal) throws IOException {
    CompletableFuture<TransportClient> connection = getAsync(host, port, principal);
    try {
      return connection.get(conf.connectTimeoutMillis() + 1000, TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      throw cause instanceof IOException
          ? (IOException) cause
          : new IOException("Cannot connect to Sluice server " + host + ":" + port, cause);
    } catch (TimeoutException e) {
      throw new IOException(
          "Cannot connect to Sluice server " + host + ":" + port + ": timed out", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("Interrupted connecting to Sluice server " + host + ":" + port, e);
    }
  }

  /**
   * A connection to {@code host:port}, never blocking: an open one, the connect already under way
   * for this slot (callers share it, so a host that does not answer costs one connect attempt, not
   * one per caller), or a new connect. The future fails with an {@link IOException} naming the
   * server, and at once once the pool is closed: a caller's callbacks always run, so whatever they
   * hold (a request's body) is given back.
   */
  public CompletableFuture<TransportClient> getAsync(String host, int port) {
    return getAsync(host, port, null);
  }

  /**
   * Like {@link #getAsync(String, int)}, for {@code principal} (see {@link #get(String, int,
   * String)}).
   */
  public CompletableFuture<TransportClient> getAsync(String host, int port, String principal) {
    String server = host + ":" + port;
    if (closed) {
      return CompletableFuture.failedFuture(closedError(server));
    }
    String as = handshake == null ? null : principal;
    String key = as == null ? server : server + " as " + as;
    @SuppressWarnings("unchecked")
    CompletableFuture<TransportClient>[] slots =
        clients.computeIfAbsent(key, k -> new CompletableFuture[conf.connectionsPerServer()]);
    int index = ThreadLocalRandom.current().nextInt(slots.length);
    CompletableFuture<TransportClient> slot;
    synchronized (slots) {
      slot = slots[index];
      if (slot == null || !usable(slot)) {
        slot = connect(host, port, server, as);
        slots[index] = slot;
      }
    }
    if (closed) {
      // closed while this connect started: its event loops may never answer it
      slot.completeExceptionally(closedError(server));
    }
    return slot;
  }

  private IOException closedError(String server) {
    return new IOException(
        "Cannot reach Sluice server " + server + ": the client (" + name + ") is closed");
  }

  /** Connecting, or connected and still open. */
  private static boolean usable(CompletableFuture<TransportClient> slot) {
    if (!slot.isDone()) {
      return true;
    }
    TransportClient client = connected(slot);
    return client != null && client.isActive();
  }

  /** The client a slot connected, or null while connecting or when the connect failed. */
  private static TransportClient connected(CompletableFuture<TransportClient> slot) {
    return slot.isDone() && !slot.isCompletedExceptionally() ? slot.join() : null;
  }

  private CompletableFuture<TransportClient> connect(
      String host, int port, String key, String principal) {
    return connect(host, port, key, principal, true);
  }

  /**
   * Connects, greets the server ({@link MessageSchema#greet}, unless {@code greet} is false) and
   * runs the handshake for {@code principal}. A server that closes the connection on the greeting
   * is one that knows none (an older release): the connection is made again without one.
   */
  private CompletableFuture<TransportClient> connect(
      String host, int port, String key, String principal, boolean greet) {
    CompletableFuture<TransportClient> result = new CompletableFuture<>();
    // CONNECT_TIMEOUT_MILLIS bounds the attempt: Netty fails the future when it passes.
    Tls.whenSecured(bootstrap.connect(host, port))
        .addListener(
            (ChannelFuture future) -> {
              if (!future.isSuccess()) {
                Throwable cause = future.cause();
                result.completeExceptionally(
                    new IOException(
                        "Cannot connect to Sluice server "
                            + key
                            + (cause == null ? ": cancelled" : ": " + cause.getMessage()),
                        cause));
                return;
              }
              Channel channel = future.channel();
              TransportClient client =
                  new TransportClient(channel, key, conf.requestTimeoutMillis());
              channel.attr(CLIENT).set(client);
              // a server that accepts and answers nothing (a hung process) fails the connect
              // after connectTimeout, as one that does not accept does
              channel
                  .eventLoop()
                  .schedule(
                      () -> {
                        if (result.completeExceptionally(
                            new IOException(
                                "Cannot connect to Sluice server "
                                    + key
                                    + ": it accepted the connection but did not answer within "
                                    + conf.connectTimeoutMillis()
                                    + " ms (sluice.network.connectTimeout): a hung server, or"
                                    + " a port that is not a Sluice shuffle port (the admin"
                                    + " port, sluice.metrics.port?)"))) {
                          client.close();
                        }
                      },
                      conf.connectTimeoutMillis(),
                      TimeUnit.MILLISECONDS);
              CompletableFuture<Void> greeted =
                  greet
                      ? schema.greet(client, conf.connectTimeoutMillis())
                      : CompletableFuture.completedFuture(null);
              greeted
                  .thenCompose(
                      v ->
                          principal == null
                              ? CompletableFuture.<Void>completedFuture(null)
                              : handshake.handshake(client, principal))
                  .whenComplete(
                      (done, error) -> {
                        if (result.isDone()) {
                          return; // timed out above
                        }
                        if (error == null) {
                          result.complete(client);
                          return;
                        }
                        client.close();
                        Throwable cause =
                            error instanceof CompletionException && error.getCause() != null
                                ? error.getCause()
                                : error;
                        if (greet
                            && greeted.isCompletedExceptionally()
                            && cause instanceof ConnectionLostException) {
                          LOG.info(
                              "Sluice server {} closed the connection on the version greeting (a"
                                  + " release that states no version, or a restart); connecting"
                                  + " again without one",
                              key);
                          connect(host, port, key, principal, false)
                              .whenComplete(
                                  (again, failure) -> {
                                    if (failure != null) {
                                      result.completeExceptionally(failure);
                                    } else {
                                      result.complete(again);
                                    }
                                  });
                          return;
                        }
                        result.completeExceptionally(
                            cause instanceof IOException
                                ? cause
                                : new IOException(
                                    "Handshake with Sluice server " + key + " failed", cause));
                      });
            });
    return result;
  }

  /** Every open connection, for upkeep. */
  private Iterable<TransportClient> openClients() {
    List<TransportClient> open = new ArrayList<>();
    for (CompletableFuture<TransportClient>[] slots : clients.values()) {
      for (CompletableFuture<TransportClient> slot : slots) {
        TransportClient client = slot == null ? null : connected(slot);
        if (client != null) {
          open.add(client);
        }
      }
    }
    return open;
  }

  private void sweep() {
    long now = System.nanoTime();
    long idleNanos = TimeUnit.MILLISECONDS.toNanos(conf.idleTimeoutMillis());
    for (TransportClient client : openClients()) {
      client.expireTimedOut(now);
      if (client.isActive() && client.isIdle(now, idleNanos)) {
        LOG.debug("Closing idle connection to {}", client.server());
        client.close();
      }
    }
  }

  /**
   * Closes every connection. Connects under way and requests unanswered then fail, and so do later
   * requests: their callers' callbacks run, so the buffers those hold are released.
   */
  @Override
  public void close() {
    closed = true;
    Map<CompletableFuture<TransportClient>, String> slots = new IdentityHashMap<>();
    for (Map.Entry<String, CompletableFuture<TransportClient>[]> e : clients.entrySet()) {
      synchronized (e.getValue()) {
        for (CompletableFuture<TransportClient> slot : e.getValue()) {
          if (slot != null) {
            slots.put(slot, e.getKey());
          }
        }
      }
    }
    clients.clear();
    for (CompletableFuture<TransportClient> slot : slots.keySet()) {
      TransportClient client = connected(slot);
      if (client != null) {
        client.close();
      }
    }
    group.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
    // the event loops are gone: what they left unanswered fails here
    for (Map.Entry<CompletableFuture<TransportClient>, String> e : slots.entrySet()) {
      TransportClient client = connected(e.getKey());
      if (client != null) {
        client.failAll(closedError(e.getValue()));
      } else {
        e.getKey().completeExceptionally(closedError(e.getValue()));
      }
    }
  }

  private static final class ResponseHandler extends ChannelInboundHandlerAdapter {
    private final MessageSchema schema;

    ResponseHandler(MessageSchema schema) {
      this.schema = schema;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      Message message = (Message) msg;
      TransportClient client = ctx.channel().attr(CLIENT).get();
      if (client == null || !schema.isResponse(message.type())) {
        LOG.warn(
            "Dropping unexpected {} from {}",
            schema.typeName(message.type()),
            ctx.channel().remoteAddress());
        message.release();
        return;
      }
      client.onResponse(message);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      TransportClient client = ctx.channel().attr(CLIENT).get();
      String server =
          client == null ? String.valueOf(ctx.channel().remoteAddress()) : client.server();
      LOG.warn("Closing connection to Sluice server {}: {}", server, cause.toString());
      if (client != null) {
        // the cause's message is the reason (e.g. the peer answered with HTTP): callers often show
        // only the message
        String why = cause.getMessage() == null ? "" : ": " + cause.getMessage();
        String message = "Connection to Sluice server " + server + " failed" + why;
        // a socket error (reset by the peer) is a lost connection; a frame the decoder refused is
        // not
        client.failAll(
            cause instanceof IOException
                ? new ConnectionLostException(message, cause)
                : new IOException(message, cause));
      }
      ctx.close();
    }
  }
}
