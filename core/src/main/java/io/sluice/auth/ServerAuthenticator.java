package io.sluice.auth;

import com.google.protobuf.ByteString;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.sluice.common.Ids;
import io.sluice.network.ConnectionPrincipal;
import io.sluice.network.Message;
import io.sluice.protocol.MessageType;
import io.sluice.protocol.Messages;
import io.sluice.protocol.RequestApps;
import io.sluice.protocol.proto.AuthAccepted;
import io.sluice.protocol.proto.AuthChallenge;
import io.sluice.protocol.proto.AuthHello;
import io.sluice.protocol.proto.AuthProof;
import io.sluice.protocol.proto.Status;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A server-side connection's gate (one per connection, in the pipeline before the request handler):
 * answers the authentication exchange ({@link AuthCodes}), then lets through only requests for the
 * application the connection authenticated for. Everything else is answered FORBIDDEN with the same
 * words whether or not the named application exists. A failed proof closes the connection. Bulk
 * data frames are refused before authentication by the frame decoder, so a stranger cannot make the
 * server reserve memory.
 *
 * <p>A stranger cannot hold connections either: a connection that has not authenticated {@code
 * sluice.auth.timeout} after it opened is closed, whatever it sends meanwhile (an AUTH_HELLO resets
 * only the idle timer), and one peer address may hold at most {@code sluice.auth.maxPendingPerPeer}
 * unauthenticated connections at once; more are closed as they open, so the endpoint's connection
 * slots ({@code sluice.network.server.maxConnections}) stay free for everyone else.
 */
public final class ServerAuthenticator extends ChannelInboundHandlerAdapter {
  private static final Logger LOG = LoggerFactory.getLogger(ServerAuthenticator.class);

  private final String endpoint;
  private final AppKeys keys;
  private final Runnable onFailure;
  private final PendingConnections pending;
  private final long timeoutMillis;

  /** The peer address counted in {@link #pending} until this connection authenticates; or null. */
  private InetAddress countedPeer;

  private ScheduledFuture<?> deadline;

  /** The exchange under way: set by AUTH_HELLO, used by AUTH_PROOF. */
  private String helloAppId;

  private byte[] helloKey;
  private byte[] clientNonce;
  private byte[] serverNonce;

  /**
   * Makes the gate of each connection of one endpoint; the gates share the endpoint's count of
   * unauthenticated connections per peer.
   *
   * @param endpoint names this endpoint in logs
   * @param conf the deadline and the per-peer bound
   * @param onFailure counts a refused request, a failed proof, a connection refused or closed
   *     unauthenticated (a metric)
   */
  public static Supplier<ChannelHandler> gate(
      String endpoint, AppKeys keys, AuthConf conf, Runnable onFailure) {
    PendingConnections pending = new PendingConnections(conf.maxPendingPerPeer());
    long timeoutMillis = conf.timeoutMillis();
    return () -> new ServerAuthenticator(endpoint, keys, pending, timeoutMillis, onFailure);
  }

  private ServerAuthenticator(
      String endpoint,
      AppKeys keys,
      PendingConnections pending,
      long timeoutMillis,
      Runnable onFailure) {
    this.endpoint = endpoint;
    this.keys = keys;
    this.pending = pending;
    this.timeoutMillis = timeoutMillis;
    this.onFailure = onFailure;
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) {
    InetAddress peer = peerAddress(ctx);
    if (peer != null && !pending.tryAdd(peer)) {
      onFailure.run();
      long skipped = pending.refusalToLog(System.nanoTime());
      if (skipped >= 0) {
        LOG.warn(
            "{}: refusing connection from {}: {} connections from it are open and not"
                + " authenticated (sluice.auth.maxPendingPerPeer){}",
            endpoint,
            ctx.channel().remoteAddress(),
            pending.maxPerPeer(),
            skipped > 0 ? "; " + skipped + " such refusals not logged since the last" : "");
      }
      ctx.close();
      return;
    }
    countedPeer = peer;
    deadline =
        ctx.executor().schedule(() -> deadlinePassed(ctx), timeoutMillis, TimeUnit.MILLISECONDS);
    ctx.fireChannelActive();
  }

  private void deadlinePassed(ChannelHandlerContext ctx) {
    deadline = null;
    if (ConnectionPrincipal.of(ctx.channel()) != null || !ctx.channel().isActive()) {
      return;
    }
    onFailure.run();
    long skipped = pending.deadlineToLog(System.nanoTime());
    if (skipped >= 0) {
      LOG.warn(
          "{}: closing connection from {}: it did not authenticate within {} ms"
              + " (sluice.auth.timeout){}",
          endpoint,
          ctx.channel().remoteAddress(),
          timeoutMillis,
          skipped > 0 ? "; " + skipped + " such closes not logged since the last" : "");
    }
    ctx.close();
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    authenticatedOrClosed();
    ctx.fireChannelInactive();
  }

  /** Stops counting this connection as unauthenticated; safe to call more than once. */
  private void authenticatedOrClosed() {
    if (deadline != null) {
      deadline.cancel(false);
      deadline = null;
    }
    if (countedPeer != null) {
      pending.remove(countedPeer);
      countedPeer = null;
    }
  }

  private static InetAddress peerAddress(ChannelHandlerContext ctx) {
    return ctx.channel().remoteAddress() instanceof InetSocketAddress
        ? ((InetSocketAddress) ctx.channel().remoteAddress()).getAddress()
        : null;
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    Message request = (Message) msg;
    MessageType type = MessageType.of(request.type());
    String principal = ConnectionPrincipal.of(ctx.channel());
    if (type == MessageType.AUTH_HELLO || type == MessageType.AUTH_PROOF) {
      try {
        if (principal != null) {
          refuse(ctx, request, "this connection is already authenticated");
        } else if (type == MessageType.AUTH_HELLO) {
          hello(ctx, request.header(AuthHello.class));
        } else {
          proof(ctx, request.header(AuthProof.class));
        }
      } finally {
        request.release();
      }
      return;
    }
    if (principal == null) {
      refuse(
          ctx,
          request,
          "this Sluice endpoint requires authentication (sluice.auth.enabled): the connection"
              + " must authenticate before its first request; set sluice.auth.enabled=true and the"
              + " application secret on the client");
      request.release();
      return;
    }
    String appId = RequestApps.of(request.header());
    if (appId != null && !appId.equals(principal)) {
      refuse(
          ctx,
          request,
          "this connection is authenticated for application "
              + principal
              + " and may not act for another application");
      request.release();
      return;
    }
    ctx.fireChannelRead(request);
  }

  private void hello(ChannelHandlerContext ctx, AuthHello h) {
    String appId;
    try {
      appId = Ids.checkAppId(h.getAppId());
    } catch (IllegalArgumentException e) {
      ctx.writeAndFlush(Messages.error(h.getRequestId(), Status.BAD_REQUEST, e.getMessage()));
      return;
    }
    if (h.getClientNonce().size() != AuthCodes.NONCE_BYTES) {
      ctx.writeAndFlush(
          Messages.error(
              h.getRequestId(),
              Status.BAD_REQUEST,
              "client_nonce has "
                  + h.getClientNonce().size()
                  + " bytes; "
                  + AuthCodes.NONCE_BYTES
                  + " are required"));
      return;
    }
    if (h.hasRegistration()) {
      String refused = keys.register(appId, h.getRegistration());
      if (refused != null) {
        onFailure.run();
        LOG.warn(
            "{}: refused the registration of application {} from {}: {}",
            endpoint,
            appId,
            ctx.channel().remoteAddress(),
            refused);
        ctx.writeAndFlush(
            Messages.error(
                h.getRequestId(),
                Status.FORBIDDEN,
                "registration of application " + appId + " refused: " + refused));
        return;
      }
    }
    byte[] key = keys.key(appId);
    helloAppId = appId;
    // an application without a key here goes through the same exchange and fails at the proof,
    // so a stranger learns nothing about which applications exist
    helloKey = key != null ? key : AuthCodes.randomKey();
    clientNonce = h.getClientNonce().toByteArray();
    serverNonce = AuthCodes.nonce();
    ctx.writeAndFlush(
        Messages.response(
            Messages.okBuilder(h.getRequestId())
                .setAuthChallenge(
                    AuthChallenge.newBuilder().setServerNonce(ByteString.copyFrom(serverNonce)))
                .build()));
  }

  private void proof(ChannelHandlerContext ctx, AuthProof p) {
    if (helloAppId == null) {
      ctx.writeAndFlush(
          Messages.error(p.getRequestId(), Status.FORBIDDEN, "send AUTH_HELLO before AUTH_PROOF"));
      return;
    }
    String appId = helloAppId;
    byte[] expected = AuthCodes.clientProof(helloKey, appId, serverNonce, clientNonce);
    if (!AuthCodes.same(expected, p.getClientProof().toByteArray())) {
      onFailure.run();
      LOG.warn(
          "{}: connection from {} failed to authenticate for application {}; closing it",
          endpoint,
          ctx.channel().remoteAddress(),
          appId);
      ctx.writeAndFlush(
              Messages.error(
                  p.getRequestId(),
                  Status.FORBIDDEN,
                  "authentication for application "
                      + appId
                      + " failed: the client does not hold its key (check that the client's"
                      + " application secret is the one its coordinator registered with, and"
                      + " that the coordinator has the servers' sluice.auth.clusterSecret)"))
          .addListener(ChannelFutureListener.CLOSE);
      helloAppId = null;
      return;
    }
    ConnectionPrincipal.set(ctx.channel(), appId);
    authenticatedOrClosed();
    byte[] serverProof = AuthCodes.serverProof(helloKey, appId, serverNonce, clientNonce);
    helloAppId = null;
    helloKey = null;
    ctx.writeAndFlush(
        Messages.response(
            Messages.okBuilder(p.getRequestId())
                .setAuthAccepted(
                    AuthAccepted.newBuilder().setServerProof(ByteString.copyFrom(serverProof)))
                .build()));
  }

  private void refuse(ChannelHandlerContext ctx, Message request, String why) {
    onFailure.run();
    ctx.writeAndFlush(Messages.error(request.requestId(), Status.FORBIDDEN, why));
  }
}
