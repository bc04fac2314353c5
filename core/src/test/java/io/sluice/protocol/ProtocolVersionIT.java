package io.sluice.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.sluice.common.SluiceConf;
import io.sluice.common.SluiceVersion;
import io.sluice.network.Message;
import io.sluice.network.MessageSchema;
import io.sluice.network.NetworkConf;
import io.sluice.network.TransportClient;
import io.sluice.network.TransportClientPool;
import io.sluice.network.TransportServer;
import io.sluice.protocol.proto.Heartbeat;
import io.sluice.protocol.proto.Hello;
import io.sluice.protocol.proto.HelloAnswer;
import io.sluice.protocol.proto.Response;
import io.sluice.protocol.proto.Status;
import io.sluice.testutil.AnotherRelease;
import io.sluice.testutil.RawConnection;
import io.sluice.testutil.TestCluster;
import java.io.EOFException;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every connection states the versions its two sides speak: a real server refuses a client too old
 * for it naming both versions and serves the rest (a newer client, one that says nothing), and a
 * real client refuses a server too old for it the same way, and works with a server of a release
 * that states no version (which closes a connection that greets it).
 */
class ProtocolVersionIT {
  private static final NetworkConf NETWORK = new NetworkConf(SluiceConf.of(Map.of()));

  @TempDir Path tmp;

  @Test
  void aServerRefusesAClientTooOldNamingBothVersionsAndServesEveryoneElse() throws Exception {
    try (TestCluster cluster = TestCluster.start(tmp, 1)) {
      int port = cluster.server(0).port();
      try (RawConnection old = new RawConnection("127.0.0.1", port)) {
        old.send(hello(0, "0.0.1"));
        Response r = old.readResponse();
        assertThat(r.getStatus()).isEqualTo(Status.BAD_REQUEST);
        assertThat(r.getMessage())
            .contains("client of protocol version 0 (release 0.0.1)")
            .contains("protocol version " + ProtocolVersion.CURRENT)
            .contains("release " + SluiceVersion.get())
            .contains("use the client jar");
        assertThatThrownBy(old::readResponse).isInstanceOf(EOFException.class);
      }
      try (RawConnection newer = new RawConnection("127.0.0.1", port)) {
        newer.send(hello(ProtocolVersion.CURRENT + 1, "9.9.9"));
        Response r = newer.readResponse();
        assertThat(r.getStatus()).isEqualTo(Status.OK);
        assertThat(r.getHello().getProtocolVersion()).isEqualTo(ProtocolVersion.CURRENT);
        assertThat(r.getHello().getRelease()).isEqualTo(SluiceVersion.get());
      }
      try (RawConnection silent = new RawConnection("127.0.0.1", port)) {
        // a client of a release that states no version: served as version 1
        silent.send(
            RawConnection.frame(
                MessageType.HEARTBEAT,
                Heartbeat.newBuilder().setRequestId(7).setAppId("app-unversioned").build(),
                new byte[0]));
        assertThat(silent.readResponse().getRequestId()).isEqualTo(7);
      }
      // the server's own clients greet it and go on
      cluster.coordinator().registerShuffle(0, 1, 1);
      assertThat(cluster.server(0).registry().contains(TestCluster.APP_ID, 0)).isTrue();
    }
  }

  @Test
  void aClientRefusesAServerTooOldNamingBothVersions() throws Exception {
    try (TransportServer server =
            fakeServer(AnotherRelease.greetingWith(new AnswersHelloWith(0, "0.0.1")));
        TransportClientPool pool =
            new TransportClientPool("test", NETWORK, SluiceProtocol.INSTANCE)) {
      assertThatThrownBy(() -> pool.get("127.0.0.1", server.port()))
          .isInstanceOf(IOException.class)
          .hasMessageContaining("speaks protocol version 0 (release 0.0.1)")
          .hasMessageContaining("protocol version " + ProtocolVersion.CURRENT)
          .hasMessageContaining("upgrade the server");
    }
  }

  @Test
  void aClientWorksWithAServerOfAReleaseThatStatesNoVersion() throws Exception {
    try (TransportServer server = fakeServer(AnotherRelease.withoutVersions());
        TransportClientPool pool =
            new TransportClientPool("test", NETWORK, SluiceProtocol.INSTANCE)) {
      TransportClient client = pool.get("127.0.0.1", server.port());
      Message answer =
          client
              .send(
                  id ->
                      Messages.request(
                          MessageType.HEARTBEAT,
                          Heartbeat.newBuilder().setRequestId(id).setAppId("app-1").build(),
                          id))
              .get(30, TimeUnit.SECONDS);
      try {
        assertThat(answer.header(Response.class).getStatus()).isEqualTo(Status.OK);
      } finally {
        answer.release();
      }
    }
  }

  private static byte[] hello(int version, String release) {
    return RawConnection.frame(
        MessageType.HELLO,
        Hello.newBuilder().setRequestId(1).setProtocolVersion(version).setRelease(release).build(),
        new byte[0]);
  }

  /** A server of another release ({@code schema}) that answers every request OK. */
  private static TransportServer fakeServer(MessageSchema schema) throws InterruptedException {
    return new TransportServer(
        "fake",
        NETWORK,
        schema,
        (channel, request) -> {
          long id = request.requestId();
          request.release();
          channel.writeAndFlush(Messages.ok(id));
        },
        "127.0.0.1",
        0);
  }

  /** Answers a greeting with a version of its choice. */
  @ChannelHandler.Sharable
  private static final class AnswersHelloWith extends ChannelInboundHandlerAdapter {
    private final int version;
    private final String release;

    AnswersHelloWith(int version, String release) {
      this.version = version;
      this.release = release;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      Message m = (Message) msg;
      if (m.type() != MessageType.HELLO.id()) {
        ctx.fireChannelRead(msg);
        return;
      }
      long id = m.requestId();
      m.release();
      ctx.writeAndFlush(
          Messages.response(
              Messages.okBuilder(id)
                  .setHello(
                      HelloAnswer.newBuilder().setProtocolVersion(version).setRelease(release))
                  .build()));
    }
  }
}
