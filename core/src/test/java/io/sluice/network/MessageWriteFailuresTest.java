package io.sluice.network;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.sluice.protocol.MessageType;
import io.sluice.protocol.proto.PushData;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A message whose write fails gives its body back, wherever Netty drops it: a connection that
 * closed between the caller's check and the write, or whose event loop has stopped. A pusher whose
 * connection closes under it retries the batch on another one; the copy that was dropped must not
 * keep the buffer alive.
 */
class MessageWriteFailuresTest {
  private static Message push(ByteBuf body) {
    return Message.withBody(
        MessageType.PUSH_DATA.id(),
        PushData.newBuilder().setRequestId(3).setAppId("a").setShuffleId(1).build(),
        3,
        body);
  }

  private static ByteBuf body() {
    ByteBuf body = PooledByteBufAllocator.DEFAULT.directBuffer(64);
    body.writeZero(64);
    return body;
  }

  @Test
  void aMessageWrittenToAClosedConnectionReleasesItsBody() {
    EmbeddedChannel channel = new EmbeddedChannel(FrameEncoder.INSTANCE);
    channel.close();
    channel.runPendingTasks(); // deregistered: the pipeline's handlers are gone
    ByteBuf body = body();
    ChannelFuture write = channel.writeAndFlush(push(body));
    assertThat(write.isSuccess()).isFalse();
    assertThat(body.refCnt()).as("references left on the body").isZero();
  }

  @Test
  void aMessageWrittenAfterTheEventLoopStoppedReleasesItsBody() throws Exception {
    NioEventLoopGroup group = new NioEventLoopGroup(1);
    try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      Channel channel =
          new Bootstrap()
              .group(group)
              .channel(NioSocketChannel.class)
              .handler(
                  new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                      ch.pipeline().addLast(FrameEncoder.INSTANCE);
                    }
                  })
              .connect(server.getLocalSocketAddress())
              .sync()
              .channel();
      try (Socket accepted = server.accept()) {
        group.shutdownGracefully(0, 0, TimeUnit.SECONDS).sync();
        ByteBuf body = body();
        ChannelFuture write = channel.writeAndFlush(push(body));
        assertThat(write.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(write.isSuccess()).isFalse();
        assertThat(body.refCnt()).as("references left on the body").isZero();
      }
    } finally {
      group.shutdownGracefully(0, 0, TimeUnit.SECONDS);
    }
  }
}
