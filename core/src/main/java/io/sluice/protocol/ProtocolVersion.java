package io.sluice.protocol;

import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.sluice.network.Message;
import io.sluice.network.TransportClient;
import io.sluice.protocol.proto.Hello;
import io.sluice.protocol.proto.HelloAnswer;
import io.sluice.protocol.proto.Response;
import io.sluice.protocol.proto.Status;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * The protocol versions this release speaks, and the greeting that states them on every connection
 * ({@code Hello} in sluice.proto): a client's first frame names its version and release; the server
 * answers with its own or refuses, naming both, and the client refuses a server it cannot work with
 * the same way. A connection that opens without a greeting is served as version 1.
 *
 * <p>Versions:
 *
 * <ul>
 *   <li>1: the releases before versions were stated; they send no greeting and close a connection
 *       that sends one (an unknown message type). This release serves them and works with them: a
 *       greeting such a server drops is sent again without one ({@code TransportClientPool}).
 *   <li>2: the greeting; a stopping server refuses registrations with {@code DECOMMISSIONING}; a
 *       coordinator answers a move that must wait for restarting servers {@code CONGESTED}.
 * </ul>
 *
 * <p>Each release speaks {@link #CURRENT} and works with peers down to {@link #OLDEST}: a client
 * and a server one release apart work together, and the newer side refuses an older one past that
 * with an error naming both versions and what to do.
 */
public final class ProtocolVersion {
  /** The version this release speaks. */
  public static final int CURRENT = 2;

  /** The oldest version of a peer this release works with. */
  public static final int OLDEST = 1;

  /** This release, as the build wrote it. */
  private final String release;

  private final Greeter greeter = new Greeter();

  /**
   * @param release this release, read once where reading it may block (not on an event loop)
   */
  ProtocolVersion(String release) {
    this.release = release;
  }

  /** Why a client of {@code version} and {@code peer} release is refused, or null if served. */
  String clientRefusal(int version, String peer) {
    if (version >= OLDEST) {
      return null;
    }
    return "this Sluice server (release "
        + release
        + ", protocol version "
        + CURRENT
        + ", serving clients down to version "
        + OLDEST
        + ") cannot serve a client of protocol version "
        + version
        + " (release "
        + (peer.isEmpty() ? "unknown" : peer)
        + "): use the client jar of a release at most one apart from the server's (jars/ of"
        + " its tarball)";
  }

  /** Why a server of {@code version} and {@code peer} release is refused, or null if used. */
  String serverRefusal(int version, String peer, String server) {
    if (version >= OLDEST) {
      return null;
    }
    return "Sluice server "
        + server
        + " speaks protocol version "
        + version
        + " (release "
        + (peer.isEmpty() ? "unknown" : peer)
        + "), older than this client (release "
        + release
        + ", protocol version "
        + CURRENT
        + ") works with (down to "
        + OLDEST
        + "): upgrade the server, or use the client jar of its release";
  }

  /**
   * Greets a new connection: sends {@code Hello} and completes once the server answered with a
   * version this client works with. Fails with an {@link IOException} naming both versions when
   * either side refuses, or with the transport's failure when the connection closes first (as a
   * server of version 1 closes it) or no answer comes within {@code timeoutMillis}. Never blocks.
   */
  CompletableFuture<Void> greet(TransportClient client, long timeoutMillis) {
    return client
        .send(
            id ->
                Messages.request(
                    MessageType.HELLO,
                    Hello.newBuilder()
                        .setRequestId(id)
                        .setProtocolVersion(CURRENT)
                        .setRelease(release)
                        .build(),
                    id),
            timeoutMillis)
        .thenAccept(
            message -> {
              Response r;
              try {
                r = message.header(Response.class);
              } finally {
                message.release();
              }
              String refusal =
                  r.getStatus() != Status.OK
                      ? "Sluice server "
                          + client.server()
                          + " refused this client: "
                          + r.getMessage()
                      : !r.hasHello()
                          ? "Sluice server "
                              + client.server()
                              + " answered the version greeting without its version"
                          : serverRefusal(
                              r.getHello().getProtocolVersion(),
                              r.getHello().getRelease(),
                              client.server());
              if (refusal != null) {
                client.close();
                throw new CompletionException(new IOException(refusal));
              }
            });
  }

  /**
   * The server side: answers a connection's {@code Hello} (before authentication, which it does not
   * need) and passes every other frame on. A refused client gets {@code BAD_REQUEST} naming both
   * versions, and its connection is closed. Shared by every connection.
   */
  ChannelHandler greeter() {
    return greeter;
  }

  @ChannelHandler.Sharable
  private final class Greeter extends ChannelInboundHandlerAdapter {
    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (!(msg instanceof Message) || ((Message) msg).type() != MessageType.HELLO.id()) {
        ctx.fireChannelRead(msg);
        return;
      }
      Hello hello;
      Message m = (Message) msg;
      try {
        hello = m.header(Hello.class);
      } finally {
        m.release();
      }
      String refusal = clientRefusal(hello.getProtocolVersion(), hello.getRelease());
      if (refusal != null) {
        ctx.writeAndFlush(Messages.error(hello.getRequestId(), Status.BAD_REQUEST, refusal))
            .addListener(ChannelFutureListener.CLOSE);
        return;
      }
      ctx.writeAndFlush(
          Messages.response(
              Messages.okBuilder(hello.getRequestId())
                  .setHello(
                      HelloAnswer.newBuilder().setProtocolVersion(CURRENT).setRelease(release))
                  .build()));
    }
  }
}
