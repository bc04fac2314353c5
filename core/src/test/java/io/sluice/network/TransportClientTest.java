package io.sluice.network;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.EventLoopGroup;
import io.sluice.client.ClientContext;
import io.sluice.common.SluiceConf;
import io.sluice.protocol.MessageType;
import io.sluice.protocol.Messages;
import io.sluice.protocol.proto.Heartbeat;
import io.sluice.protocol.proto.ServerAddress;
import io.sluice.testutil.AnotherRelease;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/** A request always completes: answered, timed out, or failed with the server named. */
class TransportClientTest {
  /**
   * A pool whose connections are usable once connected: these tests' servers are plain sockets,
   * which answer no version greeting (ProtocolVersionIT tests that).
   */
  private static TransportClientPool pool(String timeout) {
    return new TransportClientPool(
        "test",
        new NetworkConf(
            SluiceConf.of(
                Map.of("sluice.network.requestTimeout", timeout, "sluice.network.ioThreads", "1"))),
        AnotherRelease.withoutVersions());
  }

  private static CompletableFuture<Message> heartbeat(TransportClient client) {
    return client.send(
        id ->
            Messages.request(
                MessageType.HEARTBEAT,
                Heartbeat.newBuilder().setRequestId(id).setAppId("a").build(),
                id));
  }

  @Test
  void silentServerTimesOutNamingIt() throws Exception {
    try (ServerSocket silent = new ServerSocket(0);
        TransportClientPool pool = pool("1s")) {
      TransportClient client = pool.get("127.0.0.1", silent.getLocalPort());
      try (Socket accepted = silent.accept()) {
        CompletableFuture<Message> f = heartbeat(client);
        Throwable cause = causeOf(f);
        assertThat(cause)
            .isInstanceOf(TimeoutException.class)
            .hasMessageContaining("127.0.0.1:" + silent.getLocalPort())
            .hasMessageContaining("sluice.network.requestTimeout");
        assertThat(accepted.isConnected()).isTrue();
      }
    }
  }

  @Test
  void closedConnectionFailsPendingRequestsNamingTheServer() throws Exception {
    try (ServerSocket server = new ServerSocket(0);
        TransportClientPool pool = pool("120s")) {
      TransportClient client = pool.get("127.0.0.1", server.getLocalPort());
      CompletableFuture<Message> f;
      try (Socket accepted = server.accept()) {
        f = heartbeat(client);
      } // closing the accepted socket drops the connection
      assertThat(causeOf(f))
          .isInstanceOf(IOException.class)
          .hasMessageContaining("127.0.0.1:" + server.getLocalPort());
    }
  }

  @Test
  void unreachableServerIsNamed() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    try (TransportClientPool pool = pool("5s")) {
      IOException e =
          org.junit.jupiter.api.Assertions.assertThrows(
              IOException.class, () -> pool.get("127.0.0.1", port));
      assertThat(e).hasMessageContaining("Cannot connect to Sluice server 127.0.0.1:" + port);
    }
  }

  /**
   * A request chained from a response callback runs on an event loop; opening its connection there
   * must not wait (a commit's next page once did, and the blocking-call detector caught it).
   */
  @Test
  void requestsSentFromAnEventLoopConnectWithoutWaiting() throws Exception {
    SluiceConf conf = SluiceConf.of(Map.of("sluice.network.ioThreads", "1"));
    EventLoopGroup loop = Transports.newEventLoopGroup(new NetworkConf(conf), 1, "probe-client");
    try (ServerSocket server = new ServerSocket(0);
        ClientContext context = new ClientContext(conf)) {
      ServerAddress address = ClientContext.address("127.0.0.1", server.getLocalPort());
      CompletableFuture<Message> f =
          CompletableFuture.supplyAsync(
                  () ->
                      context.callAsync(
                          "a",
                          address,
                          id ->
                              Messages.request(
                                  MessageType.HEARTBEAT,
                                  Heartbeat.newBuilder().setRequestId(id).setAppId("a").build(),
                                  id)),
                  loop)
              .thenCompose(request -> request);
      try (Socket accepted = server.accept()) {
        // the greeting reached the server: the connect went on without the loop waiting for it
        assertThat(accepted.getInputStream().read()).isNotEqualTo(-1);
      }
      // closed on the greeting, as a server of a release without versions does: the client
      // connects again without one and sends the request there
      try (Socket accepted = server.accept()) {
        assertThat(accepted.getInputStream().read()).isNotEqualTo(-1);
      }
      assertThat(causeOf(f)).isInstanceOf(IOException.class);
    } finally {
      loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
    }
  }

  private static Throwable causeOf(CompletableFuture<Message> f) throws Exception {
    try {
      f.get(60, TimeUnit.SECONDS).release();
      throw new AssertionError("request unexpectedly succeeded");
    } catch (ExecutionException e) {
      return e.getCause();
    }
  }
}
