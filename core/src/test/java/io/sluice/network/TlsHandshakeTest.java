package io.sluice.network;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.ssl.SslHandler;
import io.sluice.common.SluiceConf;
import io.sluice.testutil.TestCertificates;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A client's TLS connection is ready only after a handshake that succeeded, however late asked. */
class TlsHandshakeTest {
  @TempDir Path tmp;

  @Test
  void aServerThatClosedBeforeTheConnectWasSeenFailsTheConnectNamingTheSetting() throws Exception {
    Tls tls = new NetworkConf(SluiceConf.of(TestCertificates.create(tmp, "client").conf())).tls();
    EventLoopGroup group = new NioEventLoopGroup(1);
    try (ServerSocket plain = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      Thread closer =
          new Thread(
              () -> {
                try (Socket accepted = plain.accept()) {
                  // a plain server refusing what it cannot parse: it closes at once
                } catch (Exception e) {
                  // the test fails on its own if nothing connected
                }
              });
      closer.start();
      ChannelFuture connect =
          new Bootstrap()
              .group(group)
              .channel(NioSocketChannel.class)
              .handler(
                  new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                      tls.addClientHandler(ch);
                    }
                  })
              .connect(plain.getInetAddress(), plain.getLocalPort());
      // the close arrives, and the closed channel's pipeline is emptied, before anyone asks
      assertThat(connect.channel().closeFuture().await(10, TimeUnit.SECONDS)).isTrue();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (connect.channel().pipeline().get(SslHandler.class) != null
          && System.nanoTime() < deadline) {
        Thread.sleep(5);
      }
      assertThat(connect.channel().pipeline().get(SslHandler.class)).isNull();

      ChannelFuture ready = Tls.whenSecured(connect);
      assertThat(ready.await(10, TimeUnit.SECONDS)).isTrue();
      assertThat(ready.isSuccess()).as("a connection whose handshake never happened").isFalse();
      assertThat(ready.cause()).hasMessageContaining("sluice.tls.enabled");
      closer.join(10_000);
    } finally {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
    }
  }
}
