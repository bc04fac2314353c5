package io.sluice.ctl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.codahale.metrics.MetricRegistry;
import com.sun.net.httpserver.HttpServer;
import io.sluice.client.push.MapOutputPusher;
import io.sluice.common.Json;
import io.sluice.common.SluiceConf;
import io.sluice.network.Tls;
import io.sluice.server.admin.AdminApi;
import io.sluice.server.admin.AdminConf;
import io.sluice.server.admin.AdminHttpServer;
import io.sluice.testutil.Records;
import io.sluice.testutil.TestCertificates;
import io.sluice.testutil.TestCluster;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.jar.JarFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code sluice-ctl} against two real servers and their real admin HTTP endpoints: every command's
 * exit code, table and JSON; failures named per server; usage errors; the drain cycle; the token;
 * discovery through a ResourceManager's nodes answer; HTTPS; and the {@code bin/sluice-ctl} script.
 */
class SluiceCtlIT {
  private static final String FLEET_TOKEN = "a-fleet-admin-token-0123456789";
  private static final String TOKEN = "another-servers-admin-token-9876";
  private static final String APP = TestCluster.APP_ID;

  @TempDir Path tmp;
  private TestCluster cluster;
  private final List<AdminHttpServer> admins = new ArrayList<>();
  private final List<AutoCloseable> closeLater = new ArrayList<>();

  /** What one run printed and returned. */
  private static final class Result {
    final int code;
    final String out;
    final String err;

    Result(int code, String out, String err) {
      this.code = code;
      this.out = out;
      this.err = err;
    }

    @SuppressWarnings("unchecked")
    List<Map<String, Object>> json() {
      return (List<Map<String, Object>>) Json.parse(out);
    }

    @Override
    public String toString() {
      return "exit " + code + "\n--- stdout\n" + out + "--- stderr\n" + err;
    }
  }

  private static Result ctl(Map<String, String> env, String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code =
        SluiceCtl.run(
            args,
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8),
            env,
            false);
    return new Result(
        code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  /** Runs sluice-ctl with the fleet's token in SLUICE_ADMIN_TOKEN, as an operator's shell has. */
  private static Result ctl(String... args) {
    return ctl(Map.of("SLUICE_ADMIN_TOKEN", FLEET_TOKEN), args);
  }

  /**
   * Two servers with admin endpoints, both with {@link #FLEET_TOKEN} but the first, which has
   * {@code firstToken} when not null.
   */
  private void start(String firstToken) throws Exception {
    cluster = TestCluster.start(tmp, 2, Map.of());
    for (int i = 0; i < 2; i++) {
      String token = i == 0 && firstToken != null ? firstToken : FLEET_TOKEN;
      SluiceConf adminConf = SluiceConf.of(Map.of("sluice.admin.token", token));
      admins.add(
          new AdminHttpServer(
              new MetricRegistry(),
              new AdminApi(cluster.server(i), new AdminConf(adminConf)),
              "127.0.0.1",
              0,
              Tls.fromConf(SluiceConf.empty())));
    }
  }

  /** Registers shuffle 0 (4 partitions, placed round robin on both servers) and pushes to it. */
  private void pushData() throws Exception {
    cluster.coordinator().registerShuffle(0, 1, 4);
    try (MapOutputPusher pusher = cluster.pusher(0, 0, 0)) {
      for (int p = 0; p < 4; p++) {
        byte[] r = Records.record(0, p, 0, 5000);
        pusher.write(p, r, 0, r.length);
      }
      pusher.finish();
    }
  }

  private String admin(int i) {
    return "127.0.0.1:" + admins.get(i).port();
  }

  private String servers() {
    return admin(0) + "," + admin(1);
  }

  private static int closedPort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  /** The table row naming {@code server} (and containing {@code also}), or fails. */
  private static String row(Result r, String server, String also) {
    for (String line : r.out.split("\n")) {
      if (line.startsWith(server + " ") && line.contains(also)) {
        return line;
      }
    }
    throw new AssertionError("no row for " + server + " with '" + also + "' in\n" + r);
  }

  @AfterEach
  void close() throws Exception {
    for (AutoCloseable c : closeLater) {
      c.close();
    }
    for (AdminHttpServer a : admins) {
      a.close();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void statusAppsAndShufflesShowEveryServer() throws Exception {
    start(null);
    pushData();

    Result status = ctl("status", "--servers", servers());
    assertThat(status.code).as(status.toString()).isZero();
    assertThat(status.out).startsWith("SERVER").contains("STATE", "UPTIME", "DIRECTORIES");
    row(status, admin(0), "SERVING");
    row(status, admin(1), "SERVING");
    assertThat(row(status, admin(0), "SERVING")).contains("2 HEALTHY", "/ 64.0 MiB", "local");
    assertThat(status.out).contains("STORAGE");
    assertThat(status.err).isEmpty();

    // options before the command work too
    Result json = ctl("--servers", servers(), "--json", "status");
    assertThat(json.code).as(json.toString()).isZero();
    List<Map<String, Object>> docs = json.json();
    assertThat(docs).hasSize(2);
    for (int i = 0; i < 2; i++) {
      Map<String, Object> doc = docs.get(i);
      assertThat(doc.get("server")).isEqualTo(admin(i));
      assertThat(doc.get("shuffleServer")).isEqualTo("127.0.0.1:" + cluster.server(i).port());
      assertThat(doc.get("state")).isEqualTo("SERVING");
      assertThat(doc)
          .containsKeys(
              "version",
              "uptimeMillis",
              "memory",
              "directories",
              "applications",
              "shuffles",
              "openSplits",
              "openStreams",
              "connections");
      assertThat(doc.get("applications")).isEqualTo(1L);
    }

    Result apps = ctl("apps", "--servers", servers());
    assertThat(apps.code).as(apps.toString()).isZero();
    assertThat(apps.out).startsWith("SERVER").contains("APPLICATION", "LAST HEARTBEAT");
    assertThat(row(apps, admin(0), APP)).contains("ago");
    row(apps, admin(1), APP);
    List<Map<String, Object>> appDocs = ctl("apps", "--json", "--servers", servers()).json();
    assertThat(appDocs).hasSize(2);
    for (int i = 0; i < 2; i++) {
      assertThat(appDocs.get(i).get("server")).isEqualTo(admin(i));
      @SuppressWarnings("unchecked")
      List<Map<String, Object>> list =
          (List<Map<String, Object>>) appDocs.get(i).get("applications");
      assertThat(list).hasSize(1);
      assertThat(list.get(0).get("id")).isEqualTo(APP);
      assertThat(list.get(0))
          .containsKeys("shuffles", "storedBytes", "pushedBytes", "readBytes")
          .containsKey("lastHeartbeatMillisAgo");
      assertThat((Long) list.get(0).get("pushedBytes")).isPositive();
    }

    Result shuffles = ctl("shuffles", APP, "--servers", servers());
    assertThat(shuffles.code).as(shuffles.toString()).isZero();
    assertThat(shuffles.out).startsWith("SERVER").contains("SHUFFLE", "PARTITIONS", "STORED");
    assertThat(row(shuffles, admin(0), "yes")).matches(".*\\s0\\s+1\\s+4\\s+yes.*");
    row(shuffles, admin(1), "yes");
    List<Map<String, Object>> shuffleDocs =
        ctl("shuffles", APP, "--servers", servers(), "--json").json();
    assertThat(shuffleDocs).hasSize(2);
    for (Map<String, Object> doc : shuffleDocs) {
      assertThat(doc.get("application")).isEqualTo(APP);
      @SuppressWarnings("unchecked")
      Map<String, Object> s = ((List<Map<String, Object>>) doc.get("shuffles")).get(0);
      assertThat(s.get("shuffleId")).isEqualTo(0L);
      assertThat(s.get("partitions")).isEqualTo(4L);
      assertThat(s.get("committed")).isEqualTo(true);
      assertThat(s).containsKeys("maps", "openSplits", "committedSplits", "storedBytes");
    }

    Result unknown = ctl("shuffles", "no-such-app", "--servers", servers());
    assertThat(unknown.code).as(unknown.toString()).isEqualTo(1);
    assertThat(unknown.err).contains("no-such-app", "no data on any of the 2 server(s)");
  }

  @Test
  void aServerThatIsDownIsNamedAndFailsTheRun() throws Exception {
    start(null);
    pushData();
    String down = "127.0.0.1:" + closedPort();
    String both = admin(0) + "," + down;

    for (String command : List.of("status", "apps", "drain-status", "watch")) {
      Result r =
          command.equals("watch")
              ? ctl(command, "--servers", both, "--count", "1")
              : ctl(command, "--servers", both);
      assertThat(r.code).as(command + ": " + r).isEqualTo(1);
      assertThat(r.err).as(command).contains(down, "unreachable").doesNotContain(admin(0));
      assertThat(r.out).as(command).contains(admin(0));
      if (!command.equals("apps")) {
        row(r, down, "ERROR");
      }
    }
    Result shuffles = ctl("shuffles", APP, "--servers", both);
    assertThat(shuffles.code).as(shuffles.toString()).isEqualTo(1);
    row(shuffles, admin(0), "yes");
    assertThat(shuffles.err).contains(down);

    Result json = ctl("status", "--servers", both, "--json", "--timeout", "5");
    assertThat(json.code).isEqualTo(1);
    List<Map<String, Object>> docs = json.json();
    assertThat(docs.get(0).get("state")).isEqualTo("SERVING");
    assertThat(docs.get(1).get("server")).isEqualTo(down);
    assertThat((String) docs.get(1).get("error")).contains("unreachable");

    // a port that answers, but not with the admin API
    HttpServer other = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 4);
    other.createContext(
        "/",
        ex -> {
          byte[] body = "<html>hello</html>".getBytes(StandardCharsets.UTF_8);
          ex.sendResponseHeaders(200, body.length);
          try (OutputStream o = ex.getResponseBody()) {
            o.write(body);
          }
        });
    other.start();
    closeLater.add(() -> other.stop(0));
    String foreign = "127.0.0.1:" + other.getAddress().getPort();
    Result r = ctl("status", "--servers", foreign);
    assertThat(r.code).isEqualTo(1);
    assertThat(r.err).contains(foreign, "not the admin API's JSON");
  }

  @Test
  void usageErrorsExitTwoNamingWhatWasWrong() throws Exception {
    Result noPort = ctl("status", "--servers", "host");
    assertThat(noPort.code).isEqualTo(2);
    assertThat(noPort.err).contains("'host'", "host:port");

    Result badPort = ctl("status", "--servers", "127.0.0.1:9291,h2:abc");
    assertThat(badPort.code).isEqualTo(2);
    assertThat(badPort.err).contains("h2:abc", "not a number");

    Result range = ctl("status", "--servers", "h:70000");
    assertThat(range.code).isEqualTo(2);
    assertThat(range.err).contains("70000");

    Result unknown = ctl("frobnicate", "--servers", "h:1");
    assertThat(unknown.code).isEqualTo(2);
    assertThat(unknown.err).contains("unknown command 'frobnicate'", "drain-status");

    for (String command : List.of("shuffles", "expire")) {
      Result missing = ctl(command, "--servers", "h:1");
      assertThat(missing.code).as(missing.toString()).isEqualTo(2);
      assertThat(missing.err).contains(command + " needs the application id");
    }

    Result noServers = ctl("status");
    assertThat(noServers.code).isEqualTo(2);
    assertThat(noServers.err).contains("--servers", "--yarn");

    Result both = ctl("status", "--servers", "h:1", "--yarn", "rm:8088");
    assertThat(both.code).isEqualTo(2);
    assertThat(both.err).contains("not both");

    Result badOption = ctl("status", "--servers", "h:1", "--frob");
    assertThat(badOption.code).isEqualTo(2);
    assertThat(badOption.err).contains("--frob");

    Result badTimeout = ctl("status", "--servers", "h:1", "--timeout", "soon");
    assertThat(badTimeout.code).isEqualTo(2);
    assertThat(badTimeout.err).contains("--timeout");

    Result badCount = ctl("watch", "--servers", "h:1", "--count", "0");
    assertThat(badCount.code).isEqualTo(2);
    assertThat(badCount.err).contains("--count");

    Result extra = ctl("status", "--servers", "h:1", "stray");
    assertThat(extra.code).isEqualTo(2);
    assertThat(extra.err).contains("stray");

    Result nothing = ctl();
    assertThat(nothing.code).isEqualTo(2);
    assertThat(nothing.err).contains("no command given", "Usage");

    Result help = ctl("--help");
    assertThat(help.code).isZero();
    assertThat(help.out)
        .contains(
            "Usage: sluice-ctl", "drain-status", "Exit codes:", "until sluice-ctl drain-status");
    assertThat(ctl("drain-status", "--help").out).contains("Exit codes:");
  }

  @Test
  void drainStatusExitsThreeUntilEveryServerIsDrained() throws Exception {
    start(null);
    pushData();

    Result serving = ctl("drain-status", "--servers", servers());
    assertThat(serving.code).as(serving.toString()).isEqualTo(3);
    row(serving, admin(0), "SERVING");
    row(serving, admin(1), "SERVING");
    assertThat(serving.out).contains("0 of 2 server(s) DRAINED");

    Result decommission = ctl("decommission", "--servers", servers());
    assertThat(decommission.code).as(decommission.toString()).isZero();
    assertThat(row(decommission, admin(0), "DECOMMISSIONING")).endsWith(" 1");
    row(decommission, admin(1), "DECOMMISSIONING");

    Result holding = ctl("drain-status", "--servers", servers());
    assertThat(holding.code).as(holding.toString()).isEqualTo(3);
    row(holding, admin(0), "DECOMMISSIONING");

    cluster.server(0).registry().unregisterApplication(APP).join();
    Result half = ctl("drain-status", "--servers", servers(), "--json");
    assertThat(half.code).isEqualTo(3);
    assertThat(half.json().get(0).get("state")).isEqualTo("DRAINED");
    assertThat(half.json().get(1).get("state")).isEqualTo("DECOMMISSIONING");

    cluster.server(1).registry().unregisterApplication(APP).join();
    Result drained = ctl("drain-status", "--servers", servers());
    assertThat(drained.code).as(drained.toString()).isZero();
    row(drained, admin(0), "DRAINED");
    row(drained, admin(1), "DRAINED");
    assertThat(drained.out).contains("2 of 2 server(s) DRAINED");

    Result cancel = ctl("cancel-decommission", "--servers", servers(), "--json");
    assertThat(cancel.code).as(cancel.toString()).isZero();
    for (Map<String, Object> doc : cancel.json()) {
      assertThat(doc.get("state")).isEqualTo("SERVING");
      assertThat(doc.get("shuffles")).isEqualTo(0L);
    }
    Result status = ctl("status", "--servers", servers());
    row(status, admin(0), "SERVING");
    row(status, admin(1), "SERVING");
  }

  @Test
  void decommissionThenCancelServesAgain() throws Exception {
    start(null);
    pushData();
    Result decommission = ctl("decommission", "--servers", servers(), "--json");
    assertThat(decommission.code).isZero();
    for (Map<String, Object> doc : decommission.json()) {
      assertThat(doc).containsOnlyKeys("server", "state", "shuffles");
      assertThat(doc.get("state")).isEqualTo("DECOMMISSIONING");
    }
    Result cancel = ctl("cancel-decommission", "--servers", servers());
    assertThat(cancel.code).as(cancel.toString()).isZero();
    row(cancel, admin(0), "SERVING");
    row(cancel, admin(1), "SERVING");
    assertThat(ctl("drain-status", "--servers", servers()).code).isEqualTo(3);
  }

  @Test
  void expireRemovesTheApplication() throws Exception {
    start(null);
    pushData();
    assertThat(ctl("apps", "--servers", servers()).out).contains(APP);

    Result expire = ctl("expire", APP, "--servers", servers());
    assertThat(expire.code).as(expire.toString()).isZero();
    row(expire, admin(0), "expired");
    row(expire, admin(1), "expired");

    Result apps = ctl("apps", "--servers", servers());
    assertThat(apps.code).isZero();
    assertThat(apps.out).doesNotContain(APP);
    row(apps, admin(0), "(none)");
    assertThat(cluster.server(0).registry().application(APP)).isNull();

    Result again = ctl("expire", APP, "--servers", servers(), "--json");
    assertThat(again.code).isEqualTo(1);
    assertThat(again.err).contains("no data on any");
    for (Map<String, Object> doc : again.json()) {
      assertThat(doc).containsEntry("application", APP).containsEntry("expired", false);
    }
  }

  @Test
  void actionsNeedTheTokenOfAServerThatHasOne() throws Exception {
    start(TOKEN);
    pushData();

    Result without = ctl(Map.of(), "decommission", "--servers", admin(0));
    assertThat(without.code).as(without.toString()).isEqualTo(1);
    assertThat(without.err).contains(admin(0), "401", "--token");
    row(without, admin(0), "ERROR");
    Result otherToken = ctl("decommission", "--servers", servers());
    assertThat(otherToken.err).contains(admin(0), "401").doesNotContain(admin(1));
    row(otherToken, admin(1), "DECOMMISSIONING");
    assertThat(cluster.server(0).lifecycle().name()).isEqualTo("SERVING");

    Result wrong = ctl("decommission", "--servers", admin(0), "--token", "x" + TOKEN);
    assertThat(wrong.code).isEqualTo(1);
    assertThat(wrong.err).contains("not this server's sluice.admin.token");

    // reads need no token
    assertThat(ctl("status", "--servers", servers()).code).isZero();

    Result with = ctl("decommission", "--servers", admin(0), "--token", TOKEN);
    assertThat(with.code).as(with.toString()).isZero();
    row(with, admin(0), "DECOMMISSIONING");
    assertThat(cluster.server(0).lifecycle().name()).isEqualTo("DECOMMISSIONING");

    Path tokenFile = Files.writeString(tmp.resolve("token"), TOKEN + "\n");
    Result fromFile =
        ctl("cancel-decommission", "--servers", admin(0), "--token-file", tokenFile.toString());
    assertThat(fromFile.code).as(fromFile.toString()).isZero();
    row(fromFile, admin(0), "SERVING");

    Result fromEnv = ctl(Map.of("SLUICE_ADMIN_TOKEN", TOKEN), "expire", APP, "--servers", admin(0));
    assertThat(fromEnv.code).as(fromEnv.toString()).isZero();
    row(fromEnv, admin(0), "expired");
  }

  @Test
  void findsTheServersThroughTheResourceManager() throws Exception {
    start(null);
    AtomicReference<String> nodes =
        new AtomicReference<>(
            "{\"nodes\":{\"node\":[{\"nodeHostName\":\"127.0.0.1\",\"state\":\"RUNNING\","
                + "\"nodeHTTPAddress\":\"127.0.0.1:8042\",\"numContainers\":0}]}}");
    List<String> asked = new ArrayList<>();
    HttpServer rm = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 4);
    rm.createContext(
        "/ws/v1/cluster/nodes",
        ex -> {
          synchronized (asked) {
            asked.add(ex.getRequestURI().toString());
          }
          byte[] body = nodes.get().getBytes(StandardCharsets.UTF_8);
          ex.getResponseHeaders().set("Content-Type", "application/json");
          ex.sendResponseHeaders(200, body.length);
          try (OutputStream o = ex.getResponseBody()) {
            o.write(body);
          }
        });
    rm.start();
    closeLater.add(() -> rm.stop(0));
    String address = "127.0.0.1:" + rm.getAddress().getPort();
    String port = String.valueOf(admins.get(1).port());

    Result status = ctl("status", "--yarn", address, "--admin-port", port);
    assertThat(status.code).as(status.toString()).isZero();
    row(status, "127.0.0.1:" + port, "SERVING");
    assertThat(asked).contains("/ws/v1/cluster/nodes?states=RUNNING");

    Result url = ctl("--yarn", "http://" + address + "/", "--admin-port", port, "--json", "status");
    assertThat(url.code).as(url.toString()).isZero();
    assertThat(url.json()).hasSize(1);
    assertThat(url.json().get(0).get("server")).isEqualTo("127.0.0.1:" + port);

    nodes.set("{\"nodes\":null}");
    Result none = ctl("status", "--yarn", address, "--admin-port", port);
    assertThat(none.code).isEqualTo(1);
    assertThat(none.err).contains("no RUNNING NodeManager");

    Result rmDown = ctl("status", "--yarn", "127.0.0.1:" + closedPort(), "--timeout", "5");
    assertThat(rmDown.code).isEqualTo(1);
    assertThat(rmDown.err).contains("--yarn", "no ResourceManager answered");

    Result badRm = ctl("status", "--yarn", "rm-without-port");
    assertThat(badRm.code).isEqualTo(2);
    assertThat(badRm.err).contains("rm-without-port");
  }

  @Test
  void watchRefreshesTheStatusTable() throws Exception {
    start(null);
    Result watch = ctl("watch", "--servers", servers(), "--count", "2", "--interval", "0.2");
    assertThat(watch.code).as(watch.toString()).isZero();
    assertThat(watch.out).contains("refresh 1 of 2", "refresh 2 of 2");
    assertThat(watch.out.split("\nSERVER ", -1)).hasSize(3); // two tables
    assertThat(watch.out.split(admin(1) + " ", -1)).hasSize(3);

    Result json =
        ctl("watch", "--json", "--servers", servers(), "--count", "2", "--interval", "0.1");
    assertThat(json.code).isZero();
    String[] lines = json.out.strip().split("\n");
    assertThat(lines).hasSize(2);
    for (String line : lines) {
      assertThat((List<?>) Json.parse(line)).hasSize(2);
    }
  }

  @Test
  void talksHttpsToServersWithTls() throws Exception {
    cluster = TestCluster.start(tmp, 1, Map.of());
    TestCertificates certs = TestCertificates.create(tmp.resolve("certs"), "admin");
    admins.add(
        new AdminHttpServer(
            new MetricRegistry(),
            new AdminApi(cluster.server(0), new AdminConf(SluiceConf.empty())),
            "127.0.0.1",
            0,
            Tls.fromConf(SluiceConf.of(certs.conf()))));
    Result ok =
        ctl(
            Map.of("SLUICE_TRUST_STORE_PASSWORD", TestCertificates.PASSWORD),
            "status",
            "--servers",
            admin(0),
            "--https",
            "--trust-store",
            certs.trustStore.toString());
    assertThat(ok.code).as(ok.toString()).isZero();
    row(ok, admin(0), "SERVING");

    Result untrusted = ctl("status", "--servers", admin(0), "--https", "--timeout", "5");
    assertThat(untrusted.code).isEqualTo(1);
    assertThat(untrusted.err).contains(admin(0), "--trust-store");

    Result plain = ctl("status", "--servers", admin(0), "--timeout", "5");
    assertThat(plain.code).as(plain.toString()).isEqualTo(1);
    assertThat(plain.err).contains(admin(0), "--https");

    Result badStore =
        ctl(
            "status",
            "--servers",
            admin(0),
            "--https",
            "--trust-store",
            certs.trustStore.toString(),
            "--trust-store-password",
            "wrong");
    assertThat(badStore.code).isEqualTo(2);
    assertThat(badStore.err).contains("--trust-store");
  }

  private static Path script() {
    Path here = Paths.get("").toAbsolutePath();
    for (Path p = here; p != null; p = p.getParent()) {
      if (Files.isRegularFile(p.resolve("bin/sluice-ctl"))) {
        return p.resolve("bin/sluice-ctl");
      }
    }
    throw new AssertionError("bin/sluice-ctl not found above " + here);
  }

  private Result runScript(Map<String, String> env, String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of("bash", script().toString()));
    command.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(command);
    pb.environment().remove("SLUICE_CLASSPATH");
    pb.environment().remove("SLUICE_ADMIN_TOKEN");
    pb.environment().put("JAVA_HOME", System.getProperty("java.home"));
    pb.environment().putAll(env);
    pb.redirectOutput(tmp.resolve("out").toFile());
    pb.redirectError(tmp.resolve("err").toFile());
    Process p = pb.start();
    assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("bin/sluice-ctl finished").isTrue();
    return new Result(
        p.exitValue(), Files.readString(tmp.resolve("out")), Files.readString(tmp.resolve("err")));
  }

  @Test
  void theScriptRunsTheCli() throws Exception {
    Map<String, String> cp = Map.of("SLUICE_CLASSPATH", System.getProperty("java.class.path"));
    Result help = runScript(cp, "--help");
    assertThat(help.code).as(help.toString()).isZero();
    assertThat(help.out).contains("Usage: sluice-ctl", "Exit codes:");

    Result usage = runScript(cp, "status", "--servers", "host");
    assertThat(usage.code).as(usage.toString()).isEqualTo(2);
    assertThat(usage.err).contains("'host'");

    start(null);
    Result status = runScript(cp, "status", "--servers", servers(), "--json");
    assertThat(status.code).as(status.toString()).isZero();
    assertThat(status.json()).hasSize(2);
  }

  @Test
  void theScriptRunsFromTheBuiltJar() throws Exception {
    Path target = script().getParent().getParent().resolve("core/target");
    Path jar = null;
    if (Files.isDirectory(target)) {
      try (var files = Files.list(target)) {
        jar =
            files
                .filter(
                    p -> p.getFileName().toString().matches("sluice-core-[^-]+(-SNAPSHOT)?\\.jar"))
                .findFirst()
                .orElse(null);
      }
    }
    assumeTrue(jar != null && Files.isDirectory(target.resolve("lib")), "core's jar is not built");
    try (JarFile j = new JarFile(jar.toFile())) {
      assumeTrue(
          j.getEntry("io/sluice/ctl/SluiceCtl.class") != null,
          "core's jar predates sluice-ctl; rebuild it with mvn -pl core package");
    }
    Result help = runScript(Map.of(), "--help");
    assertThat(help.code).as(help.toString()).isZero();
    assertThat(help.out).contains("Exit codes:");
  }
}
