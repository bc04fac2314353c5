package io.sluice.server.metrics;

import com.codahale.metrics.MetricRegistry;
import com.sun.net.httpserver.HttpServer;
import io.sluice.common.SluiceConf;
import io.sluice.network.Tls;
import java.io.Closeable;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves {@code GET /metrics} in Prometheus text format from one thread, over HTTPS when {@code
 * sluice.tls.enabled}. Used by the daemon; inside a NodeManager the metrics go to the NodeManager's
 * own metrics system instead.
 */
public final class MetricsHttpServer implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(MetricsHttpServer.class);

  private final HttpServer server;
  private final ExecutorService executor;

  /** Binds {@code host:port} (port 0 picks one), plain HTTP. */
  public MetricsHttpServer(MetricRegistry registry, String host, int port) throws IOException {
    this(registry, host, port, Tls.fromConf(SluiceConf.empty()));
  }

  /**
   * Binds {@code host:port} (port 0 picks one); serves HTTPS with the process's certificate when
   * {@code tls} is enabled.
   */
  public MetricsHttpServer(MetricRegistry registry, String host, int port, Tls tls)
      throws IOException {
    this.server = tls.createHttpServer(new InetSocketAddress(host, port), 16);
    this.executor =
        Executors.newSingleThreadExecutor(
            r -> {
              Thread t = new Thread(r, "sluice-metrics-http");
              t.setDaemon(true);
              return t;
            });
    server.setExecutor(executor);
    server.createContext(
        "/metrics",
        exchange -> {
          try {
            byte[] body = PrometheusFormat.render(registry).getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "text/plain; version=0.0.4");
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
              out.write(body);
            }
          } finally {
            exchange.close();
          }
        });
    server.start();
    LOG.info("Metrics served at {}://{}:{}/metrics", tls.httpScheme(), host, port());
  }

  public int port() {
    return server.getAddress().getPort();
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
  }
}
