package io.sluice.network;

import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsParameters;
import com.sun.net.httpserver.HttpsServer;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.handler.ssl.JdkSslContext;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslProvider;
import io.netty.util.AttributeKey;
import io.sluice.common.SluiceConf;
import java.io.File;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;

/**
 * Every TLS decision of Sluice: whether connections are encrypted, which certificate a process
 * presents and which ones it trusts, and how a pipeline is secured. Built once per process from the
 * {@code sluice.tls.*} settings; key and trust material are loaded then, so a missing file or a
 * wrong password fails at startup, naming the setting and the file ({@link TlsMaterial}).
 *
 * <p>When enabled, an {@link SslHandler} (JDK provider) comes first in the pipeline of every Sluice
 * connection: the shuffle server port and the coordinator endpoint ({@link
 * #addServerHandler(Channel, SslContext)}), clients ({@link #addClientHandler(Channel)}), and the
 * metrics port is served over HTTPS ({@link #createHttpServer}). A server under TLS cannot send
 * file regions (sendfile), so it reads chunks into buffers instead ({@link #isSecured(Channel)}). A
 * client's connection is ready only once its handshake succeeded ({@link #whenSecured}); a failed
 * handshake fails the connect with an error that says why and names the setting to change.
 * Immutable and thread safe.
 */
public final class Tls {
  private static final Tls DISABLED = new Tls(false, List.of(), null, null, false);

  private final boolean enabled;
  private final List<String> protocols;
  private final SslContext serverContext;
  private final SslContext clientContext;
  private final boolean verifyHostname;

  private Tls(
      boolean enabled,
      List<String> protocols,
      SslContext serverContext,
      SslContext clientContext,
      boolean verifyHostname) {
    this.enabled = enabled;
    this.protocols = protocols;
    this.serverContext = serverContext;
    this.clientContext = clientContext;
    this.verifyHostname = verifyHostname;
  }

  /**
   * The TLS setup {@code conf} asks for; loads every key and trust store it names.
   *
   * @throws IllegalArgumentException naming the setting and the file when one cannot be used
   */
  public static Tls fromConf(SluiceConf conf) {
    if (!conf.get(TlsConf.ENABLED)) {
      return DISABLED;
    }
    List<String> protocols = TlsMaterial.protocols(conf);
    SslContext server = null;
    TlsMaterial.Identity identity = TlsMaterial.identity(conf);
    try {
      if (identity != null) {
        SslContextBuilder builder =
            identity.keyManagers != null
                ? SslContextBuilder.forServer(identity.keyManagers)
                : SslContextBuilder.forServer(identity.certChain, identity.privateKey);
        server = builder.sslProvider(SslProvider.JDK).protocols(protocols).build();
      }
    } catch (IOException | IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "Cannot use the certificate and key of "
              + identity.describe()
              + ": "
              + e.getMessage()
              + (e.getCause() != null ? " (" + e.getCause().getMessage() + ")" : ""),
          e);
    }
    SslContext client;
    try {
      SslContextBuilder builder = SslContextBuilder.forClient().sslProvider(SslProvider.JDK);
      TlsMaterial.trust(conf, builder);
      client = builder.protocols(protocols).build();
    } catch (IOException e) {
      throw new IllegalArgumentException(
          "Cannot use the trusted certificates of "
              + TlsConf.TRUST_CERT_CHAIN
              + ": "
              + e.getMessage(),
          e);
    }
    return new Tls(true, protocols, server, client, conf.get(TlsConf.VERIFY_HOSTNAME));
  }

  public boolean enabled() {
    return enabled;
  }

  /**
   * The context a server port of {@code what} secures its connections with, or null when TLS is
   * off.
   *
   * @throws IllegalArgumentException when TLS is on and no certificate is configured
   */
  public SslContext serverContext(String what) {
    if (enabled && serverContext == null) {
      throw new IllegalArgumentException(
          what
              + " cannot serve TLS ("
              + TlsConf.ENABLED
              + " is true): it has no certificate; set "
              + TlsConf.KEY_STORE
              + " (or "
              + TlsConf.CERT_CHAIN
              + " and "
              + TlsConf.PRIVATE_KEY
              + ")");
    }
    return enabled ? serverContext : null;
  }

  /**
   * Puts TLS first in a server connection's pipeline; does nothing when {@code context} is null.
   */
  public static void addServerHandler(Channel channel, SslContext context) {
    if (context != null) {
      channel.pipeline().addFirst("tls-errors", TlsErrors.SERVER);
      channel.pipeline().addFirst("tls", context.newHandler(channel.alloc()));
    }
  }

  /**
   * Puts TLS first in a client connection's pipeline (when enabled). The handler is created when
   * the connection opens, for the host it connects to, whose name the server's certificate must
   * carry unless {@code sluice.tls.verifyHostname} is false.
   */
  public void addClientHandler(Channel channel) {
    if (enabled) {
      channel.pipeline().addFirst("tls", new ClientStarter());
      channel.pipeline().addAfter("tls", "tls-errors", TlsErrors.CLIENT);
    }
  }

  /** Whether a connection is encrypted: it cannot send file regions. */
  public static boolean isSecured(Channel channel) {
    return channel.pipeline().get(SslHandler.class) != null;
  }

  /**
   * Completes when {@code connect} completed and, on a TLS connection, its handshake succeeded;
   * fails with the connect's error or an {@link IOException} saying why the handshake failed and
   * which setting to check.
   */
  public static ChannelFuture whenSecured(ChannelFuture connect) {
    ChannelPromise ready = connect.channel().newPromise();
    connect.addListener(
        (ChannelFuture f) -> {
          if (f.isCancelled()) {
            ready.cancel(false);
            return;
          }
          if (!f.isSuccess()) {
            ready.setFailure(f.cause());
            return;
          }
          // not the pipeline's handler: a server that closes at once (a plain one, say) can close
          // the channel, and so empty its pipeline, before this runs, and an empty pipeline looked
          // like a plain connection that had succeeded
          SslHandler ssl = f.channel().attr(CLIENT_TLS).get();
          if (ssl == null) {
            ready.setSuccess();
            return;
          }
          ssl.handshakeFuture()
              .addListener(
                  h -> {
                    if (h.isSuccess()) {
                      ready.setSuccess();
                    } else {
                      f.channel().close();
                      ready.setFailure(TlsErrors.handshakeFailure(h.cause()));
                    }
                  });
        });
    return ready;
  }

  /**
   * An HTTP server on {@code address}: HTTPS with this process's certificate when TLS is on.
   *
   * @throws IllegalArgumentException when TLS is on and no certificate is configured
   */
  public HttpServer createHttpServer(InetSocketAddress address, int backlog) throws IOException {
    if (!enabled) {
      return HttpServer.create(address, backlog);
    }
    JdkSslContext context = (JdkSslContext) serverContext("the metrics port");
    HttpsServer server = HttpsServer.create(address, backlog);
    String[] allowed = protocols.toArray(new String[0]);
    server.setHttpsConfigurator(
        new HttpsConfigurator(context.context()) {
          @Override
          public void configure(HttpsParameters params) {
            SSLParameters parameters = getSSLContext().getDefaultSSLParameters();
            parameters.setProtocols(allowed);
            params.setSSLParameters(parameters);
          }
        });
    return server;
  }

  /** "https" when TLS is on, else "http". */
  public String httpScheme() {
    return enabled ? "https" : "http";
  }

  @Override
  public String toString() {
    return enabled ? "TLS " + protocols : "plain";
  }

  /**
   * Becomes the client's {@link SslHandler} when the connection is opened, once the host it goes to
   * is known, so the server's certificate can be checked against that name.
   */
  /** A client connection's TLS handler, set as it connects ({@link #whenSecured} reads it). */
  private static final AttributeKey<SslHandler> CLIENT_TLS =
      AttributeKey.valueOf("sluiceClientTls");

  private final class ClientStarter extends ChannelOutboundHandlerAdapter {
    @Override
    public void connect(
        ChannelHandlerContext ctx,
        SocketAddress remote,
        SocketAddress local,
        ChannelPromise promise) {
      SSLEngine engine;
      if (remote instanceof InetSocketAddress) {
        InetSocketAddress peer = (InetSocketAddress) remote;
        engine = clientContext.newEngine(ctx.alloc(), peer.getHostString(), peer.getPort());
      } else {
        engine = clientContext.newEngine(ctx.alloc());
      }
      if (verifyHostname) {
        SSLParameters parameters = engine.getSSLParameters();
        parameters.setEndpointIdentificationAlgorithm("HTTPS");
        engine.setSSLParameters(parameters);
      }
      SslHandler tls = new SslHandler(engine);
      ctx.channel().attr(CLIENT_TLS).set(tls);
      ctx.pipeline().replace(this, "tls", tls);
      ctx.connect(remote, local, promise);
    }
  }

  /** For messages: a file's absolute path. */
  static String path(String file) {
    return new File(file).getAbsolutePath();
  }

  static List<String> split(String list) {
    List<String> items = new ArrayList<>();
    for (String s : Arrays.asList(list.split(","))) {
      if (!s.isBlank()) {
        items.add(s.trim());
      }
    }
    return items;
  }
}
