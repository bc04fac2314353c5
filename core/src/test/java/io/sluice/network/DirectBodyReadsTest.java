package io.sluice.network;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.sluice.protocol.MessageType;
import io.sluice.protocol.SluiceProtocol;
import io.sluice.protocol.proto.PushData;
import io.sluice.protocol.proto.PushMerged;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A reserved body whose header arrived before the rest of it is read from the socket straight into
 * its buffer, over a real loopback connection, on both transports the server runs (the native one
 * reads into one contiguous memory address, so a body received in parts is read part by part);
 * every byte comes out where it belongs.
 */
class DirectBodyReadsTest {
  private static final int MAX_FRAME = 8 << 20;

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void theRestOfALargePushIsReadIntoItsBody(boolean epoll) throws Exception {
    int length = 1 << 20;
    ByteBuf body = numbered(length, 0);
    Message push =
        Message.withBody(
            MessageType.PUSH_DATA.id(),
            PushData.newBuilder().setRequestId(7).setAppId("a").setShuffleId(1).build(),
            7,
            body);
    Received received = send(epoll, push);
    assertThat(received.message.body().readableBytes()).isEqualTo(length);
    assertNumbered(received.message.body(), 0, length, 0);
    assertThat(received.direct).as("bytes read into the body").isGreaterThan(length / 2);
    received.message.release();
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void aMergedPushIsReadIntoItsPartsBuffers(boolean epoll) throws Exception {
    int[] lengths = {100, 300_000, 40, 50, 200_000, 70};
    PushMerged.Builder header =
        PushMerged.newBuilder().setRequestId(9).setAppId("a").setShuffleId(1);
    ByteBuf body = Unpooled.buffer();
    int total = 0;
    for (int i = 0; i < lengths.length; i++) {
      header.addPartitionIds(i).addEpochs(0).addLengths(lengths[i]);
      body.writeBytes(numbered(lengths[i], i));
      total += lengths[i];
    }
    Received received =
        send(epoll, Message.withBody(MessageType.PUSH_MERGED.id(), header.build(), 9, body));
    ByteBuf got = received.message.body();
    assertThat(got.readableBytes()).isEqualTo(total);
    int offset = got.readerIndex();
    for (int i = 0; i < lengths.length; i++) {
      assertNumbered(got, offset, lengths[i], i);
      offset += lengths[i];
    }
    assertThat(received.direct).as("bytes read into the parts").isGreaterThan(total / 2);
    received.message.release();
  }

  private static final class Received {
    final Message message;
    final long direct;

    Received(Message message, long direct) {
      this.message = message;
      this.direct = direct;
    }
  }

  /**
   * Sends {@code message} to a server decoder over loopback: its first 4 KiB (the header and the
   * start of the body), then, once the decoder reserved the body, the rest.
   */
  private static Received send(boolean epoll, Message message) throws Exception {
    Assumptions.assumeTrue(!epoll || Epoll.isAvailable(), "no native epoll here");
    byte[] wire = encode(message);
    CountDownLatch reserved = new CountDownLatch(1);
    InboundMemory memory =
        new InboundMemory() {
          @Override
          public boolean tryReserve(long bytes) {
            reserved.countDown();
            return true;
          }

          @Override
          public void release(long bytes) {}

          @Override
          public long max() {
            return Long.MAX_VALUE;
          }
        };
    AtomicReference<FrameDecoder> decoder = new AtomicReference<>();
    BlockingQueue<Message> messages = new LinkedBlockingQueue<>();
    EventLoopGroup group = epoll ? new EpollEventLoopGroup(1) : new NioEventLoopGroup(1);
    try {
      Channel server =
          new ServerBootstrap()
              .group(group)
              .channel(epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class)
              .childHandler(
                  new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                      FrameDecoder d =
                          new FrameDecoder(
                              SluiceProtocol.INSTANCE,
                              MAX_FRAME,
                              64 * 1024,
                              memory,
                              false,
                              0,
                              MAX_FRAME);
                      d.readBodiesDirectly(ch);
                      decoder.set(d);
                      ch.pipeline()
                          .addLast(d)
                          .addLast(
                              new ChannelInboundHandlerAdapter() {
                                @Override
                                public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                  messages.add((Message) msg);
                                }
                              });
                    }
                  })
              .bind(InetAddress.getLoopbackAddress(), 0)
              .sync()
              .channel();
      int port = ((java.net.InetSocketAddress) server.localAddress()).getPort();
      try (Socket client = new Socket(InetAddress.getLoopbackAddress(), port)) {
        OutputStream out = client.getOutputStream();
        out.write(wire, 0, 4096);
        out.flush();
        assertThat(reserved.await(30, TimeUnit.SECONDS)).as("the body was reserved").isTrue();
        for (int at = 4096; at < wire.length; at += 100_000) {
          out.write(wire, at, Math.min(100_000, wire.length - at));
          out.flush();
        }
        Message received = messages.poll(30, TimeUnit.SECONDS);
        assertThat(received).as("the message").isNotNull();
        long direct = group.submit(() -> decoder.get().bytesReadDirectly()).get();
        return new Received(received, direct);
      } finally {
        server.close().sync();
      }
    } finally {
      group.shutdownGracefully(0, 0, TimeUnit.SECONDS).sync();
    }
  }

  private static byte[] encode(Message message) {
    EmbeddedChannel out = new EmbeddedChannel(FrameEncoder.INSTANCE);
    assertThat(out.writeOutbound(message)).isTrue();
    ByteBuf all = Unpooled.buffer();
    for (ByteBuf part = out.readOutbound(); part != null; part = out.readOutbound()) {
      all.writeBytes(part);
      part.release();
    }
    byte[] bytes = new byte[all.readableBytes()];
    all.readBytes(bytes);
    all.release();
    return bytes;
  }

  private static ByteBuf numbered(int length, int seed) {
    ByteBuf b = Unpooled.buffer(length);
    for (int i = 0; i < length; i++) {
      b.writeByte(i * 7 + seed);
    }
    return b;
  }

  private static void assertNumbered(ByteBuf b, int offset, int length, int seed) {
    // one copy, not a read per byte: leak detection records every access to a tracked buffer
    byte[] bytes = ByteBufUtil.getBytes(b, offset, length);
    for (int i = 0; i < length; i++) {
      if (bytes[i] != (byte) (i * 7 + seed)) {
        throw new AssertionError("byte " + i + " of part " + seed + " differs");
      }
    }
  }
}
