package io.sluice.ctl;

import io.sluice.common.Json;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.UnknownHostException;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLHandshakeException;

/**
 * Asks servers' admin API ({@code /api/v1}) over HTTP or HTTPS, many at a time, and turns every
 * failure into a reason an operator can act on.
 *
 * <p>A server's shuffle address ({@code sluice.server.port}) works too: the shuffle port answers an
 * HTTP request with 421 Misdirected Request naming its admin port ({@code adminPort}), and the
 * request is sent again there; from then on that address is asked at its admin port, the reply
 * names the admin address, and a note says so once on stderr.
 */
final class AdminClient implements AutoCloseable {
  /** What one server answered, or why it did not. */
  static final class Reply {
    /**
     * The admin address asked, host:port: the one given, or, when that was a shuffle port, the
     * admin port it named.
     */
    final String server;

    /** The HTTP status, or 0 when there was no answer. */
    final int status;

    /** The answer's JSON object on success (2xx); null otherwise. */
    final Map<String, Object> body;

    /** Why it failed, for people; null on success. */
    final String error;

    /** The admin port a shuffle port named in its 421 answer; 0 for any other reply. */
    private final int namedAdminPort;

    private Reply(String server, int status, Map<String, Object> body, String error) {
      this(server, status, body, error, 0);
    }

    private Reply(
        String server, int status, Map<String, Object> body, String error, int namedAdminPort) {
      this.server = server;
      this.status = status;
      this.body = body;
      this.error = error;
      this.namedAdminPort = namedAdminPort;
    }

    boolean ok() {
      return error == null;
    }

    /** The server answered 404 about an application it holds no data of. */
    boolean unknownApplication() {
      return status == 404 && error != null && !error.contains("no such endpoint");
    }
  }

  private final String scheme;
  private final String token;
  private final Duration timeout;
  private final HttpClient http;
  private final ExecutorService pool;

  /** Where a note for the operator goes (stderr). */
  private final Consumer<String> notes;

  /** Shuffle addresses given, to the admin address their port named. */
  private final Map<String, String> adminAddresses = new ConcurrentHashMap<>();

  /**
   * @param token sent as {@code Authorization: Bearer TOKEN} with every request; null for none
   * @param sslContext for HTTPS; null for the JVM's default trust
   * @param notes takes a line for the operator, e.g. that a shuffle address was taken for its admin
   *     address (stderr); called from the client's threads
   */
  AdminClient(
      boolean https,
      String token,
      Duration timeout,
      SSLContext sslContext,
      int parallelism,
      Consumer<String> notes) {
    this.notes = notes;
    this.scheme = https ? "https" : "http";
    this.token = token;
    this.timeout = timeout;
    HttpClient.Builder builder =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(timeout)
            .followRedirects(HttpClient.Redirect.NEVER);
    if (sslContext != null) {
      builder.sslContext(sslContext);
    }
    this.http = builder.build();
    AtomicInteger threads = new AtomicInteger();
    this.pool =
        Executors.newFixedThreadPool(
            Math.max(1, parallelism),
            r -> {
              Thread t = new Thread(r, "sluice-ctl-" + threads.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
  }

  HttpClient http() {
    return http;
  }

  Reply get(String server, String path) {
    return call(server, "GET", path);
  }

  /** An action. */
  Reply post(String server, String path) {
    return call(server, "POST", path);
  }

  /** Calls {@code call} for every server at once (at most the parallelism); replies in order. */
  List<Reply> all(List<String> servers, Function<String, Reply> call) {
    List<Future<Reply>> futures = new ArrayList<>();
    for (String server : servers) {
      futures.add(pool.submit(() -> call.apply(server)));
    }
    List<Reply> replies = new ArrayList<>();
    for (int i = 0; i < servers.size(); i++) {
      try {
        replies.add(futures.get(i).get());
      } catch (ExecutionException e) {
        replies.add(failed(servers.get(i), 0, "the request failed: " + e.getCause()));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        replies.add(failed(servers.get(i), 0, "interrupted"));
      }
    }
    return replies;
  }

  private Reply call(String given, String method, String path) {
    String server = adminAddresses.getOrDefault(given, given);
    Reply reply = send(server, method, path);
    String admin = server.equals(given) ? adminAddress(given, reply) : null;
    if (admin == null) {
      return reply;
    }
    if (adminAddresses.putIfAbsent(given, admin) == null) {
      notes.accept(given + " is a shuffle port; using its admin API at " + admin);
    }
    return send(admin, method, path);
  }

  /**
   * The admin address a shuffle port named in its 421 answer ({@code adminPort}), on the same host
   * as {@code server}; null for any other reply.
   */
  private static String adminAddress(String server, Reply reply) {
    int colon = server.lastIndexOf(':');
    return reply.namedAdminPort == 0 || colon < 0
        ? null
        : server.substring(0, colon + 1) + reply.namedAdminPort;
  }

  private Reply send(String server, String method, String path) {
    URI uri;
    try {
      uri = URI.create(scheme + "://" + server + "/api/v1/" + path);
    } catch (IllegalArgumentException e) {
      return failed(server, 0, "not a usable address: " + e.getMessage());
    }
    HttpRequest.Builder request =
        HttpRequest.newBuilder(uri).timeout(timeout).header("Accept", "application/json");
    if (method.equals("POST")) {
      request.POST(HttpRequest.BodyPublishers.noBody());
    } else {
      request.GET();
    }
    if (token != null) {
      // actions always need it; under sluice.auth.enabled the application listings do too
      request.header("Authorization", "Bearer " + token);
    }
    HttpResponse<String> response;
    try {
      response =
          http.send(request.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    } catch (IOException e) {
      return failed(server, 0, networkReason(server, e));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return failed(server, 0, "interrupted");
    }
    return answer(server, response.statusCode(), response.body());
  }

  private Reply answer(String server, int status, String text) {
    Object parsed;
    try {
      parsed = Json.parse(text);
    } catch (IllegalArgumentException e) {
      String start = text.length() > 60 ? text.substring(0, 60) + "..." : text;
      return failed(
          server,
          status,
          "answered HTTP "
              + status
              + " with something that is not the admin API's JSON ('"
              + start.strip()
              + "'); is "
              + server
              + " a Sluice server's admin port (sluice.metrics.port)?");
    }
    @SuppressWarnings("unchecked")
    Map<String, Object> body = parsed instanceof Map ? (Map<String, Object>) parsed : null;
    if (status / 100 == 2 && body != null) {
      return new Reply(server, status, body, null);
    }
    String message =
        body != null && body.get("error") != null ? String.valueOf(body.get("error")) : text;
    switch (status) {
      case 401:
        return failed(
            server,
            status,
            "refused (401): "
                + message
                + (token == null
                    ? "; this needs --token (or --token-file, or SLUICE_ADMIN_TOKEN) with the"
                        + " server's sluice.admin.token"
                    : "; the token given is not this server's sluice.admin.token"));
      case 403:
        return failed(server, status, "refused (403): " + message);
      case 421:
        return new Reply(
            server,
            status,
            null,
            "HTTP 421: " + message,
            namedAdminPort(body != null ? body.get("adminPort") : null));
      default:
        return failed(server, status, "HTTP " + status + ": " + message);
    }
  }

  /** A port in 1..65535 a 421 answer named, or 0. */
  private static int namedAdminPort(Object port) {
    if (!(port instanceof Number)) {
      return 0;
    }
    double p = ((Number) port).doubleValue();
    return p >= 1 && p <= 65535 && p == Math.rint(p) ? (int) p : 0;
  }

  private String networkReason(String server, IOException e) {
    String detail = e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
    if (e instanceof HttpConnectTimeoutException) {
      return "unreachable: no connection within " + timeout.toSeconds() + " s";
    }
    if (e instanceof HttpTimeoutException) {
      return "no answer within " + timeout.toSeconds() + " s (--timeout)";
    }
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    if (e instanceof ConnectException || root instanceof ConnectException) {
      String why = root.getMessage() != null ? root.getMessage() : "connection refused";
      return "unreachable ("
          + why.toLowerCase(java.util.Locale.ROOT)
          + "): is the server running, and is "
          + server
          + " its admin port (sluice.metrics.port)?";
    }
    if (root instanceof UnknownHostException) {
      return "unreachable: unknown host " + root.getMessage();
    }
    if (e instanceof SSLHandshakeException || root instanceof SSLHandshakeException) {
      String why = root.getMessage() != null ? root.getMessage() : detail;
      String hint;
      if (why.contains("subject alternative") || why.contains("No name matching")) {
        hint = "; the server's certificate does not name this host: use a name it was issued for";
      } else if (why.contains("PKIX") || why.contains("certif")) {
        hint = "; trust the server's certificate or CA with --trust-store FILE";
      } else {
        hint = "; is TLS on at the server (sluice.tls.enabled)? Without it, drop --https";
      }
      return "HTTPS handshake failed: " + why + hint;
    }
    if (e instanceof SSLException || root instanceof SSLException) {
      return "HTTPS failed: "
          + (root.getMessage() != null ? root.getMessage() : detail)
          + "; is TLS on at the server (sluice.tls.enabled)? Without it, drop --https";
    }
    if (scheme.equals("http")) {
      return "the connection failed: "
          + detail
          + "; if the server has sluice.tls.enabled, add --https";
    }
    return "the connection failed: " + detail;
  }

  /** A reply the CLI stands in for the server's: {@code body} as if it had answered it. */
  static Reply answered(String server, int status, Map<String, Object> body) {
    return new Reply(server, status, body, null);
  }

  private static Reply failed(String server, int status, String error) {
    return new Reply(server, status, null, error);
  }

  @Override
  public void close() {
    pool.shutdownNow();
  }
}
