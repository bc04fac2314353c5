package io.sluice.ctl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.codahale.metrics.MetricRegistry;
import io.sluice.client.ClientContext;
import io.sluice.client.coordinator.ShuffleCoordinator;
import io.sluice.common.Json;
import io.sluice.common.SluiceConf;
import io.sluice.network.Tls;
import io.sluice.server.admin.AdminApi;
import io.sluice.server.admin.AdminConf;
import io.sluice.server.admin.AdminHttpServer;
import io.sluice.testutil.TestCluster;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shuffle port (sluice.server.port) and the admin port (sluice.metrics.port) mixed up, with a
 * real server: sluice-ctl given the shuffle address finds the admin API through it; an HTTP request
 * on the shuffle port is answered 421 naming the admin port; a client given an HTTP port that
 * answers says it was given an HTTP port.
 */
class PortMixUpIT {
  @TempDir Path tmp;
  private TestCluster cluster;
  private AdminHttpServer admin;

  /** One server; its admin API on a free port, which it names when {@code named}. */
  private void start(boolean named) throws Exception {
    cluster = TestCluster.start(tmp, 1, Map.of());
    admin =
        new AdminHttpServer(
            new MetricRegistry(),
            new AdminApi(cluster.server(0), new AdminConf(SluiceConf.empty())),
            "127.0.0.1",
            0,
            Tls.fromConf(SluiceConf.empty()));
    if (named) {
      cluster.server(0).setAdminPort(admin.port());
    }
  }

  @AfterEach
  void close() {
    if (admin != null) {
      admin.close();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  private String shuffleAddress() {
    return "127.0.0.1:" + cluster.server(0).port();
  }

  private String adminAddress() {
    return "127.0.0.1:" + admin.port();
  }

  /** exit code, stdout, stderr. */
  private static String[] ctl(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code =
        SluiceCtl.run(
            args,
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8),
            Map.of(),
            false);
    return new String[] {
      Integer.toString(code),
      out.toString(StandardCharsets.UTF_8),
      err.toString(StandardCharsets.UTF_8)
    };
  }

  /** Sends {@code request} to the shuffle port and reads until the server closes. */
  private String raw(String request) throws IOException {
    try (Socket socket = new Socket("127.0.0.1", cluster.server(0).port())) {
      socket.setSoTimeout(30_000); // a bound on a hang, not a timing assertion
      OutputStream out = socket.getOutputStream();
      out.write(request.getBytes(StandardCharsets.US_ASCII));
      out.flush();
      InputStream in = socket.getInputStream();
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> body(String response) {
    return (Map<String, Object>) Json.parse(response.substring(response.indexOf("\r\n\r\n") + 4));
  }

  @Test
  void ctlGivenTheShufflePortUsesTheAdminApiItNames() throws Exception {
    start(true);
    String[] status = ctl("status", "--servers", shuffleAddress());
    String note =
        "sluice-ctl: "
            + shuffleAddress()
            + " is a shuffle port; using its admin API at "
            + adminAddress()
            + "\n";
    assertThat(status[0]).as(String.join("\n", status)).isEqualTo("0");
    assertThat(status[1]).startsWith("SERVER").contains("\n" + adminAddress() + " ");
    assertThat(status[1]).contains("SERVING").doesNotContain(shuffleAddress());
    assertThat(status[2]).isEqualTo(note);

    // the note once per run, however many requests follow
    String[] watch =
        ctl("watch", "--servers", shuffleAddress(), "--count", "3", "--interval", "0.001");
    assertThat(watch[0]).as(String.join("\n", watch)).isEqualTo("0");
    assertThat(watch[2]).isEqualTo(note);

    String[] json = ctl("status", "--servers", shuffleAddress(), "--json");
    assertThat(json[0]).isEqualTo("0");
    @SuppressWarnings("unchecked")
    List<Map<String, Object>> rows = (List<Map<String, Object>>) Json.parse(json[1]);
    assertThat(rows).hasSize(1);
    assertThat(rows.get(0)).containsEntry("server", adminAddress()).containsKey("state");
  }

  @Test
  void httpOnTheShufflePortIsAnswered421NamingTheAdminPort() throws Exception {
    start(true);
    String response = raw("GET /api/v1/status HTTP/1.1\r\nHost: x\r\n\r\n");
    assertThat(response)
        .startsWith("HTTP/1.1 421 Misdirected Request\r\n")
        .contains("Content-Type: application/json\r\n", "Connection: close\r\n");
    assertThat(body(response))
        .containsEntry(
            "error",
            "this is the Sluice shuffle port; the admin API is at port "
                + admin.port()
                + " (sluice.metrics.port)")
        .containsEntry("adminPort", (long) admin.port());

    // frames on the same port are untouched
    cluster.coordinator().registerShuffle(0, 1, 2);
  }

  @Test
  void withoutAnAdminApiTheShufflePortSaysSo() throws Exception {
    start(false);
    Map<String, Object> answer = body(raw("GET / HTTP/1.0\r\n\r\n"));
    assertThat(answer)
        .containsEntry(
            "error",
            "this is the Sluice shuffle port; this server serves no admin API"
                + " (sluice.metrics.port is -1 or could not be bound)")
        .doesNotContainKey("adminPort");

    String[] status = ctl("status", "--servers", shuffleAddress());
    assertThat(status[0]).isEqualTo("1");
    assertThat(status[2])
        .contains(
            shuffleAddress()
                + ": HTTP 421: this is the Sluice shuffle port; this server serves no admin API");
  }

  /**
   * A client given an HTTP port whose server answers what it cannot parse with 400 at once, as
   * Jetty (the ResourceManager's and NodeManager's web ports) and most HTTP servers do. (The JDK's
   * HTTP server behind sluice.metrics.port waits for a line end that frames do not send, so there a
   * client waits for sluice.network.requestTimeout instead.) The fake keeps the connection open
   * after answering, so the client reads the answer rather than a reset.
   */
  @Test
  void aClientGivenAnHttpPortNamesThePorts() throws Exception {
    start(true);
    try (ServerSocket http = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      CompletableFuture<Socket> accepted = new CompletableFuture<>();
      Thread server =
          new Thread(
              () -> {
                try {
                  Socket s = http.accept();
                  accepted.complete(s);
                  s.getInputStream().read(new byte[4096]);
                  s.getOutputStream()
                      .write(
                          "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"
                              .getBytes(StandardCharsets.US_ASCII));
                } catch (IOException e) {
                  accepted.completeExceptionally(e);
                }
              },
              "fake-http-port");
      server.setDaemon(true);
      server.start();
      String address = "127.0.0.1:" + http.getLocalPort();
      try (ShuffleCoordinator coordinator =
          new ShuffleCoordinator(
              "app-port-mix-up",
              List.of(ClientContext.address("127.0.0.1", http.getLocalPort())),
              cluster.context(),
              "127.0.0.1")) {
        assertThatThrownBy(() -> coordinator.registerShuffle(0, 1, 2))
            .isInstanceOf(IOException.class)
            .hasMessageContaining(
                "server at "
                    + address
                    + " answered with HTTP: is it the admin port (sluice.metrics.port) rather than"
                    + " the shuffle port (sluice.server.port)?");
      } finally {
        accepted.get().close();
        server.join();
      }
    }
  }
}
