package io.sluice.network;

import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.ssl.NotSslRecordException;
import io.netty.handler.ssl.SslHandler;
import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.security.cert.CertPathBuilderException;
import java.security.cert.CertPathValidatorException;
import java.security.cert.CertificateException;
import java.util.Locale;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a failed TLS handshake means, in words that name the setting to change. On a server it
 * closes a connection that does not speak TLS or fails its handshake with one clear log line (the
 * server keeps serving everyone else); on a client it keeps handshake failures out of the
 * connection's own error handling, since {@link Tls#whenSecured} reports them as the connect's
 * failure.
 */
final class TlsErrors extends ChannelInboundHandlerAdapter {
  private static final Logger LOG = LoggerFactory.getLogger(TlsErrors.class);

  static final ChannelHandler SERVER = new TlsErrors(true);
  static final ChannelHandler CLIENT = new TlsErrors(false);

  private final boolean server;

  private TlsErrors(boolean server) {
    this.server = server;
  }

  @Override
  public boolean isSharable() {
    return true;
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    Throwable tls = cause instanceof DecoderException ? cause.getCause() : cause;
    SslHandler ssl = ctx.pipeline().get(SslHandler.class);
    boolean handshaking = ssl != null && !ssl.handshakeFuture().isSuccess();
    if (server && tls instanceof NotSslRecordException) {
      LOG.warn(
          "Closing connection from {}: it does not speak TLS, and this server requires it"
              + " (sluice.tls.enabled is true here; set it on the client too)",
          ctx.channel().remoteAddress());
      ctx.close();
    } else if (handshaking && tls instanceof SSLException) {
      if (server) {
        LOG.warn(
            "Closing connection from {}: TLS handshake failed: {}",
            ctx.channel().remoteAddress(),
            tls.getMessage());
      }
      ctx.close();
    } else {
      ctx.fireExceptionCaught(cause);
    }
  }

  /** Why a client's handshake failed, and what to change; the caller adds the server's name. */
  static IOException handshakeFailure(Throwable cause) {
    String detail = rootMessage(cause);
    if (has(cause, CertPathBuilderException.class)
        || has(cause, CertPathValidatorException.class)) {
      return new IOException(
          "its TLS certificate is not trusted by this client: add it, or the CA that signed it, to "
              + TlsConf.TRUST_STORE
              + " (or "
              + TlsConf.TRUST_CERT_CHAIN
              + ") ("
              + detail
              + ")",
          cause);
    }
    CertificateException certificate = find(cause, CertificateException.class);
    if (certificate != null
        && String.valueOf(certificate.getMessage()).toLowerCase(Locale.ROOT).contains("name")) {
      return new IOException(
          "its TLS certificate does not name the host this client connected to: give the server a"
              + " certificate whose subject alternative names include it, or set "
              + TlsConf.VERIFY_HOSTNAME
              + "=false ("
              + detail
              + ")",
          cause);
    }
    String lower = String.valueOf(detail).toLowerCase(Locale.ROOT);
    if (has(cause, ClosedChannelException.class)
        || lower.contains("closed")
        || lower.contains("reset")) {
      return new IOException(
          "it closed the connection during the TLS handshake: check that it runs with "
              + TlsConf.ENABLED
              + "=true and accepts one of "
              + TlsConf.PROTOCOLS
              + " ("
              + detail
              + ")",
          cause);
    }
    return new IOException(
        "TLS handshake failed: "
            + detail
            + " (check that the server runs with "
            + TlsConf.ENABLED
            + "=true and that both sides accept one of "
            + TlsConf.PROTOCOLS
            + ")",
        cause);
  }

  private static boolean has(Throwable t, Class<? extends Throwable> type) {
    return find(t, type) != null;
  }

  private static <T extends Throwable> T find(Throwable t, Class<T> type) {
    for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
      if (type.isInstance(c)) {
        return type.cast(c);
      }
    }
    return null;
  }

  /** {@code t}'s message with its root cause's, when that says more. */
  static String rootMessage(Throwable t) {
    Throwable root = t;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String top = t.getMessage();
    String bottom = root.getMessage();
    if (root == t || bottom == null) {
      return String.valueOf(top != null ? top : t.toString());
    }
    return top == null || top.contains(bottom) ? bottom : top + ": " + bottom;
  }
}
