package io.sluice.server.admin;

import com.codahale.metrics.MetricRegistry;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.sluice.common.SluiceConf;
import io.sluice.network.Tls;
import io.sluice.server.metrics.PrometheusFormat;
import java.io.Closeable;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server's HTTP port ({@code sluice.metrics.port}): {@code GET /metrics} in Prometheus text
 * format (with application ids only for a request the API lets see them) and the admin REST API
 * under {@code /api/v1} ({@link AdminApi}), over HTTPS when {@code sluice.tls.enabled}. Two
 * threads: a slow scrape does not hold up an operator's request.
 */
public final class AdminHttpServer implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(AdminHttpServer.class);

  private final HttpServer server;
  private final ExecutorService executor;

  /** Metrics only, plain HTTP, on {@code host:port} (port 0 picks one). */
  public AdminHttpServer(MetricRegistry registry, String host, int port) throws IOException {
    this(registry, null, host, port, Tls.fromConf(SluiceConf.empty()));
  }

  /**
   * Binds {@code host:port} (port 0 picks one); serves HTTPS with the process's certificate when
   * {@code tls} is enabled.
   *
   * @param api the admin API, or null to serve only the metrics
   */
  public AdminHttpServer(MetricRegistry registry, AdminApi api, String host, int port, Tls tls)
      throws IOException {
    this.server = tls.createHttpServer(new InetSocketAddress(host, port), 16);
    AtomicInteger threads = new AtomicInteger();
    this.executor =
        Executors.newFixedThreadPool(
            2,
            r -> {
              Thread t = new Thread(r, "sluice-admin-http-" + threads.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    server.setExecutor(executor);
    server.createContext(
        "/metrics",
        exchange -> {
          boolean ids =
              api == null
                  || api.showsApplicationIds(
                      exchange.getRequestHeaders().getFirst("Authorization"));
          respond(
              exchange, 200, "text/plain; version=0.0.4", PrometheusFormat.render(registry, ids));
        });
    if (api != null) {
      // every path but /metrics: an unknown one gets the API's JSON error, not an HTML page
      server.createContext(
          "/",
          exchange -> {
            AdminApi.Answer answer;
            try {
              answer =
                  api.answer(
                      exchange.getRequestMethod(),
                      exchange.getRequestURI().getPath(),
                      exchange.getRequestHeaders().getFirst("Authorization"));
            } catch (RuntimeException e) {
              LOG.error("Admin API request {} failed", exchange.getRequestURI(), e);
              answer = AdminApi.internalError(e);
            }
            respond(exchange, answer.status, "application/json", answer.json);
          });
    }
    server.start();
    LOG.info(
        "Metrics served at {}://{}:{}/metrics{}",
        tls.httpScheme(),
        host,
        port(),
        api == null ? "" : ", the admin API at " + AdminApi.ROOT);
  }

  private static void respond(HttpExchange exchange, int status, String type, String text)
      throws IOException {
    try {
      byte[] body = text.getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().set("Content-Type", type);
      exchange.sendResponseHeaders(status, body.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    } finally {
      exchange.close();
    }
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
