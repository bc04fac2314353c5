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
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
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
  private final Map<String, TransportClient[]> clients = new ConcurrentHashMap<>();

  /**
   * One lock per server: a connect to a host that does not answer waits up to {@code
   * sluice.network.connectTimeout}, and holds up only other connects to that same host.
   */
  private final Map<String, Object> connectLocks = new ConcurrentHashMap<>();

  public TransportClientPool(String name, NetworkConf conf, MessageSchema schema) {
    this.conf = conf;
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
                    ch.pipeline()
                        .addLast("encoder", FrameEncoder.INSTANCE)
                        .addLast("decoder", new FrameDecoder(schema, conf.maxFrameSize()))
                        .addLast("handler", new ResponseHandler(schema));
                  }
                });
    group.scheduleAtFixedRate(this::sweep, 1, 1, TimeUnit.SECONDS);
  }

  /**
   * A connection to {@code host:port}, opened if needed.
   *
   * @throws IOException naming the server when it cannot be reached
   */
  public TransportClient get(String host, int port) throws IOException {
    String key = host + ":" + port;
    TransportClient[] slots =
        clients.computeIfAbsent(key, k -> new TransportClient[conf.connectionsPerServer()]);
    int index = ThreadLocalRandom.current().nextInt(slots.length);
    TransportClient client = slots[index];
    if (client != null && client.isActive()) {
      return client;
    }
    synchronized (connectLocks.computeIfAbsent(key, k -> new Object())) {
      client = slots[index];
      if (client != null && client.isActive()) {
        return client;
      }
      client = connect(host, port, key);
      slots[index] = client;
      return client;
    }
  }

  private TransportClient connect(String host, int port, String key) throws IOException {
    ChannelFuture future = bootstrap.connect(host, port);
    if (!future.awaitUninterruptibly(conf.connectTimeoutMillis() + 1000, TimeUnit.MILLISECONDS)
        || !future.isSuccess()) {
      future.cancel(false);
      Throwable cause = future.cause();
      throw new IOException(
          "Cannot connect to Sluice server "
              + key
              + (cause == null ? ": timed out" : ": " + cause.getMessage()),
          cause);
    }
    Channel channel = future.channel();
    TransportClient client = new TransportClient(channel, key, conf.requestTimeoutMillis());
    channel.attr(CLIENT).set(client);
    return client;
  }

  private void sweep() {
    long now = System.nanoTime();
    long idleNanos = TimeUnit.MILLISECONDS.toNanos(conf.idleTimeoutMillis());
    for (TransportClient[] slots : clients.values()) {
      for (TransportClient client : slots) {
        if (client != null) {
          client.expireTimedOut(now);
          if (client.isActive() && client.isIdle(now, idleNanos)) {
            LOG.debug("Closing idle connection to {}", client.server());
            client.close();
          }
        }
      }
    }
  }

  @Override
  public void close() {
    for (TransportClient[] slots : clients.values()) {
      for (TransportClient client : slots) {
        if (client != null) {
          client.close();
        }
      }
    }
    clients.clear();
    group.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
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
        client.failAll(new IOException("Connection to Sluice server " + server + " failed", cause));
      }
      ctx.close();
    }
  }
}
