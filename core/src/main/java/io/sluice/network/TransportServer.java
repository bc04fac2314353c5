package io.sluice.network;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.io.Closeable;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Accepts connections and hands every decoded request to a {@link RequestHandler}. A frame that
 * does not decode closes that connection only, with a logged reason.
 *
 * <p>Bounds (see {@link NetworkConf}): at most {@code sluice.network.server.maxConnections} open
 * connections (more are closed as they arrive); a connection idle for {@code
 * sluice.network.server.idleTimeout} is closed; frames without bulk data are at most {@code
 * maxControlFrameSize}; data frames reserve their bodies in the {@link InboundMemory} before they
 * are read ({@link FrameDecoder}), at most {@code sluice.network.server.maxBodyInFlight} per
 * connection, and a body not whole within {@code sluice.network.server.bodyTimeout} of its
 * reservation closes its connection; a peer that does not read its responses is not read either
 * ({@link ReadGate#WRITABILITY}), so its answers cannot pile up.
 */
public final class TransportServer implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(TransportServer.class);

  private final String name;
  private final EventLoopGroup bossGroup;
  private final EventLoopGroup workerGroup;
  private final ChannelGroup channels = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
  private final Channel serverChannel;

  /** The server's own pool, so what it holds is measured apart from clients in the same JVM. */
  private final PooledByteBufAllocator allocator = new PooledByteBufAllocator(true);

  private volatile long lastRefusalLogNanos = System.nanoTime() - TimeUnit.MINUTES.toNanos(1);

  /**
   * Binds {@code host:port} (port 0 picks a free port; host null or empty binds all interfaces).
   */
  public TransportServer(
      String name,
      NetworkConf conf,
      MessageSchema schema,
      RequestHandler handler,
      String host,
      int port)
      throws InterruptedException {
    this(name, conf, schema, handler, host, port, conf.maxFrameSize(), null, null, null);
  }

  /**
   * Binds {@code host:port} (port 0 picks a free port; host null or empty binds all interfaces).
   *
   * @param maxControlFrameSize the longest frame of a type without bulk data
   * @param memory where data frames reserve their bodies before they are read; null for none
   * @param gate makes each connection's gate, which sees every request before the handler and sets
   *     its {@link ConnectionPrincipal} (authentication); null for none. With a gate, data frames
   *     are refused on connections without a principal.
   * @param strayHttpAnswer the JSON body of the answer to a connection that opens with an HTTP
   *     request ({@link StrayHttpAnswer}: 421 Misdirected Request, then it closes), called on the
   *     event loop; null to treat such a connection as any malformed one
   */
  public TransportServer(
      String name,
      NetworkConf conf,
      MessageSchema schema,
      RequestHandler handler,
      String host,
      int port,
      int maxControlFrameSize,
      InboundMemory memory,
      Supplier<ChannelHandler> gate,
      Supplier<String> strayHttpAnswer)
      throws InterruptedException {
    this.name = name;
    SslContext tls = conf.tls().serverContext(name); // null when TLS is off
    this.bossGroup = Transports.newEventLoopGroup(conf, 1, name + "-accept");
    this.workerGroup = Transports.newEventLoopGroup(conf, conf.ioThreads(), name + "-io");
    ServerBootstrap bootstrap =
        new ServerBootstrap()
            .group(bossGroup, workerGroup)
            .channel(Transports.serverChannelClass(conf))
            .option(ChannelOption.SO_BACKLOG, 1024)
            .option(ChannelOption.SO_REUSEADDR, true)
            .childOption(ChannelOption.ALLOCATOR, allocator)
            .childOption(ChannelOption.TCP_NODELAY, true)
            .childOption(ChannelOption.SO_KEEPALIVE, true)
            .childHandler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel ch) {
                    if (channels.size() >= conf.serverMaxConnections()) {
                      refuseConnection(ch, conf.serverMaxConnections());
                      return;
                    }
                    channels.add(ch);
                    Tls.addServerHandler(ch, tls);
                    if (strayHttpAnswer != null) {
                      // looks at the connection's first bytes only, then leaves the pipeline
                      ch.pipeline().addLast("stray-http", new StrayHttpAnswer(strayHttpAnswer));
                    }
                    FrameDecoder decoder =
                        new FrameDecoder(
                            schema,
                            conf.maxFrameSize(),
                            maxControlFrameSize,
                            memory,
                            gate != null,
                            conf.serverBodyTimeoutMillis(),
                            conf.serverMaxBodyInFlight());
                    if (tls == null) {
                      decoder.readBodiesDirectly(ch);
                    }
                    ch.pipeline()
                        .addLast(
                            "idle",
                            new IdleStateHandler(
                                0, 0, conf.serverIdleTimeoutMillis(), TimeUnit.MILLISECONDS))
                        .addLast("gate", ReadGate.GUARD)
                        .addLast("encoder", FrameEncoder.INSTANCE)
                        .addLast("decoder", decoder);
                    ChannelHandler greeter = schema.greeter();
                    if (greeter != null) {
                      ch.pipeline().addLast("greeter", greeter);
                    }
                    if (gate != null) {
                      ch.pipeline().addLast("auth", gate.get());
                    }
                    ch.pipeline().addLast("handler", new ServerChannelHandler(handler, schema));
                  }
                });
    InetSocketAddress address =
        host == null || host.isEmpty()
            ? new InetSocketAddress(port)
            : new InetSocketAddress(host, port);
    try {
      this.serverChannel = bootstrap.bind(address).sync().channel();
    } catch (InterruptedException | RuntimeException e) {
      shutdownGroups();
      throw e;
    } catch (Exception e) { // the bind's own failure (sync() rethrows it as it is: an IOException)
      shutdownGroups();
      throw new IllegalStateException(
          name + " cannot listen on " + address + ": " + e.getMessage(), e);
    }
    LOG.info(
        "{} listening on {} ({} transport)",
        name,
        serverChannel.localAddress(),
        Transports.name(conf));
  }

  private void refuseConnection(SocketChannel ch, int max) {
    long now = System.nanoTime();
    if (now - lastRefusalLogNanos > TimeUnit.SECONDS.toNanos(10)) {
      lastRefusalLogNanos = now;
      LOG.warn(
          "{}: refusing connection from {}: {} connections are open"
              + " (sluice.network.server.maxConnections)",
          name,
          ch.remoteAddress(),
          max);
    }
    ch.close();
  }

  /** Direct memory taken by the server's buffers in use (bodies, reads, answers in flight). */
  public long pinnedDirectMemory() {
    return allocator.pinnedDirectMemory();
  }

  /** Direct memory the server's pool took from the JVM, in use or cached. */
  public long usedDirectMemory() {
    return allocator.metric().usedDirectMemory();
  }

  /** Open connections. */
  public int connectionCount() {
    return channels.size();
  }

  public int port() {
    return ((InetSocketAddress) serverChannel.localAddress()).getPort();
  }

  /**
   * Starts or stops reading from the connections {@code which} selects (backpressure: a connection
   * that is not read fills its TCP window and its sender blocks). Thread safe.
   */
  public void setReading(Predicate<Channel> which, boolean reading) {
    for (Channel ch : channels) {
      if (which.test(ch) && ReadGate.isPaused(ch, ReadGate.MEMORY) == reading) {
        if (reading) {
          ReadGate.resume(ch, ReadGate.MEMORY);
        } else {
          ReadGate.pause(ch, ReadGate.MEMORY);
        }
      }
    }
  }

  /** Stops accepting, closes every connection and the event loops. Idempotent. */
  @Override
  public void close() {
    serverChannel.close().awaitUninterruptibly(10, TimeUnit.SECONDS);
    channels.close().awaitUninterruptibly(10, TimeUnit.SECONDS);
    shutdownGroups();
  }

  private void shutdownGroups() {
    bossGroup.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
    workerGroup
        .shutdownGracefully(0, 2, TimeUnit.SECONDS)
        .awaitUninterruptibly(10, TimeUnit.SECONDS);
  }

  private final class ServerChannelHandler extends ChannelInboundHandlerAdapter {
    private final RequestHandler handler;
    private final MessageSchema schema;

    ServerChannelHandler(RequestHandler handler, MessageSchema schema) {
      this.handler = handler;
      this.schema = schema;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      Message request = (Message) msg;
      if (schema.isResponse(request.type())) {
        LOG.warn(
            "{}: closing connection from {}: it sent a response frame ({}) to a server",
            name,
            ctx.channel().remoteAddress(),
            schema.typeName(request.type()));
        request.release();
        ctx.close();
        return;
      }
      handler.handle(ctx.channel(), request);
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
      if (ctx.channel().isWritable()) {
        ReadGate.resume(ctx.channel(), ReadGate.WRITABILITY);
      } else {
        ReadGate.pause(ctx.channel(), ReadGate.WRITABILITY);
      }
      ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object event) {
      if (event instanceof IdleStateEvent) {
        LOG.debug(
            "{}: closing connection from {}: idle for sluice.network.server.idleTimeout",
            name,
            ctx.channel().remoteAddress());
        ctx.close();
        return;
      }
      ctx.fireUserEventTriggered(event);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      handler.connectionClosed(ctx.channel());
      ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      if (cause instanceof DecoderException) {
        LOG.warn(
            "{}: closing connection from {}: malformed frame: {}",
            name,
            ctx.channel().remoteAddress(),
            cause.getMessage());
        handler.malformedFrame(ctx.channel(), cause);
      } else {
        LOG.warn(
            "{}: closing connection from {} after error: {}",
            name,
            ctx.channel().remoteAddress(),
            cause.toString());
      }
      ctx.close();
    }
  }
}
