package io.sluice.server.admin;

import static org.assertj.core.api.Assertions.assertThat;

import com.codahale.metrics.MetricRegistry;
import io.sluice.client.push.MapOutputPusher;
import io.sluice.common.Json;
import io.sluice.common.SluiceConf;
import io.sluice.network.Tls;
import io.sluice.server.ShuffleServer;
import io.sluice.testutil.Records;
import io.sluice.testutil.TestCluster;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The admin REST API of a real server over HTTP: the JSON of every endpoint has its documented
 * fields with their types, actions do what they say, and bad requests get a JSON error naming what
 * was wrong.
 */
class AdminApiIT {
  private static final String TOKEN = "an-admin-token-of-some-length";

  @TempDir Path tmp;
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(30)).build();

  private HttpResponse<String> call(int port, String method, String path, String token)
      throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
            .timeout(Duration.ofSeconds(30))
            .method(method, HttpRequest.BodyPublishers.noBody());
    if (token != null) {
      b.header("Authorization", "Bearer " + token);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> json(HttpResponse<String> r) {
    assertThat(r.headers().firstValue("Content-Type")).hasValue("application/json");
    return (Map<String, Object>) Json.parse(r.body());
  }

  /** Asserts {@code doc} has exactly {@code fields}, each of its type (null allowed with null). */
  private static void schema(Map<String, Object> doc, Object... fieldsAndTypes) {
    assertThat(doc).hasSize(fieldsAndTypes.length / 2);
    for (int i = 0; i < fieldsAndTypes.length; i += 2) {
      String field = (String) fieldsAndTypes[i];
      assertThat(doc).as(doc.toString()).containsKey(field);
      Class<?> type = (Class<?>) fieldsAndTypes[i + 1];
      if (type != null) {
        assertThat(doc.get(field)).as(field).isInstanceOf(type);
      }
    }
  }

  private static AdminHttpServer admin(ShuffleServer server, Map<String, String> conf)
      throws Exception {
    return new AdminHttpServer(
        new MetricRegistry(),
        new AdminApi(server, new AdminConf(SluiceConf.of(conf))),
        "127.0.0.1",
        0,
        Tls.fromConf(SluiceConf.empty()));
  }

  @Test
  @SuppressWarnings("unchecked")
  void everyEndpointAnswersItsDocumentedJson() throws Exception {
    try (TestCluster cluster = TestCluster.start(tmp, 1);
        AdminHttpServer admin = admin(cluster.server(0), Map.of("sluice.admin.token", TOKEN))) {
      int port = admin.port();
      cluster.coordinator().registerShuffle(0, 1, 4);
      try (MapOutputPusher pusher = cluster.pusher(0, 0, 0)) {
        for (int p = 0; p < 4; p++) {
          byte[] r = Records.record(0, p, 0, 1000);
          pusher.write(p, r, 0, r.length);
        }
        pusher.finish();
      }

      Map<String, Object> status = json(call(port, "GET", "/api/v1/status", null));
      schema(
          status,
          "version",
          String.class,
          "server",
          String.class,
          "state",
          String.class,
          "uptimeMillis",
          Long.class,
          "memory",
          Map.class,
          "directories",
          List.class,
          "storage",
          Map.class,
          "applications",
          Long.class,
          "shuffles",
          Long.class,
          "openSplits",
          Long.class,
          "openStreams",
          Long.class,
          "connections",
          Long.class);
      assertThat(status.get("state")).isEqualTo("SERVING");
      assertThat(status.get("server")).isEqualTo("127.0.0.1:" + cluster.server(0).port());
      assertThat(status.get("applications")).isEqualTo(1L);
      schema(
          (Map<String, Object>) status.get("memory"),
          "heldBytes",
          Long.class,
          "maxBytes",
          Long.class,
          "peakBytes",
          Long.class,
          "state",
          String.class,
          "pausedMillis",
          Long.class);
      Map<String, Object> storage = (Map<String, Object>) status.get("storage");
      schema(
          storage,
          "policy",
          String.class,
          "memoryTierSplits",
          Long.class,
          "memoryTierBytes",
          Long.class,
          "hdfsDir",
          String.class,
          "hdfsTierSplits",
          Long.class,
          "hdfsTierBytes",
          Long.class,
          "hdfsTierFailures",
          Long.class);
      assertThat(storage.get("policy")).isEqualTo("local");
      List<Object> dirs = (List<Object>) status.get("directories");
      assertThat(dirs).hasSize(2);
      for (Object d : dirs) {
        schema(
            (Map<String, Object>) d,
            "path",
            String.class,
            "health",
            String.class,
            "healthReason",
            null,
            "usage",
            Number.class,
            "checksumFailures",
            Long.class);
      }

      Map<String, Object> apps = json(call(port, "GET", "/api/v1/applications", null));
      schema(apps, "applications", List.class);
      List<Object> list = (List<Object>) apps.get("applications");
      assertThat(list).hasSize(1);
      Map<String, Object> app = (Map<String, Object>) list.get(0);
      schema(
          app,
          "id",
          String.class,
          "shuffles",
          Long.class,
          "storedBytes",
          Long.class,
          "pushedBytes",
          Long.class,
          "readBytes",
          Long.class,
          "refusedBytes",
          Long.class,
          "memoryHeldBytes",
          Long.class,
          "weight",
          Long.class,
          "openWriters",
          Long.class,
          "openStreams",
          Long.class,
          "lastHeartbeatMillisAgo",
          Long.class);
      assertThat(app.get("id")).isEqualTo(TestCluster.APP_ID);
      assertThat(app.get("weight")).isEqualTo(1L);
      assertThat(app.get("openWriters")).as("its shuffle is committed").isEqualTo(0L);
      assertThat((Long) app.get("storedBytes")).isGreaterThan(4000L);
      assertThat(app.get("pushedBytes")).isEqualTo(app.get("storedBytes"));

      Map<String, Object> shuffles =
          json(call(port, "GET", "/api/v1/applications/" + TestCluster.APP_ID + "/shuffles", null));
      schema(shuffles, "application", String.class, "shuffles", List.class);
      Map<String, Object> shuffle =
          (Map<String, Object>) ((List<Object>) shuffles.get("shuffles")).get(0);
      schema(
          shuffle,
          "shuffleId",
          Long.class,
          "maps",
          Long.class,
          "partitions",
          Long.class,
          "committed",
          Boolean.class,
          "openSplits",
          Long.class,
          "committedSplits",
          Long.class,
          "mapPartitions",
          Long.class,
          "storedBytes",
          Long.class);
      assertThat(shuffle.get("committed")).isEqualTo(true);
      assertThat(shuffle.get("committedSplits")).isEqualTo(4L);
      assertThat(shuffle.get("partitions")).isEqualTo(4L);

      HttpResponse<String> decommission = call(port, "POST", "/api/v1/decommission", TOKEN);
      assertThat(decommission.statusCode()).isEqualTo(200);
      schema(json(decommission), "state", String.class, "shuffles", Long.class);
      assertThat(json(decommission).get("state")).isEqualTo("DECOMMISSIONING");
      HttpResponse<String> expire =
          call(port, "POST", "/api/v1/applications/" + TestCluster.APP_ID + "/expire", TOKEN);
      assertThat(expire.statusCode()).isEqualTo(200);
      schema(json(expire), "application", String.class, "expired", Boolean.class);
      assertThat(json(call(port, "GET", "/api/v1/status", null)).get("state")).isEqualTo("DRAINED");
      assertThat(json(call(port, "POST", "/api/v1/cancel-decommission", TOKEN)).get("state"))
          .isEqualTo("SERVING");
    }
  }

  @Test
  void badRequestsGetAJsonErrorNamingWhatWasWrong() throws Exception {
    try (TestCluster cluster = TestCluster.start(tmp, 1);
        AdminHttpServer admin = admin(cluster.server(0), Map.of("sluice.admin.token", TOKEN))) {
      int port = admin.port();
      assertError(call(port, "GET", "/api/v1/nothing", null), 404, "no such endpoint");
      assertError(call(port, "GET", "/api/v2/status", null), 404, "/api/v1");
      assertError(call(port, "POST", "/api/v1/status", null), 405, "use GET");
      assertError(call(port, "GET", "/api/v1/decommission", null), 405, "use POST");
      assertError(
          call(port, "GET", "/api/v1/applications/app-nobody/shuffles", null),
          404,
          "application app-nobody has no data");
      assertError(
          call(port, "POST", "/api/v1/applications/app-nobody/expire", TOKEN), 404, "app-nobody");
      assertThat(cluster.server(0).lifecycle()).isEqualTo(ShuffleServer.Lifecycle.SERVING);
    }
  }

  @Test
  void actionsNeedTheTokenWhenOneIsSetAndAreClosedUnderAuthenticationWithoutOne() throws Exception {
    try (TestCluster cluster = TestCluster.start(tmp, 1);
        AdminHttpServer withToken = admin(cluster.server(0), Map.of("sluice.admin.token", TOKEN));
        AdminHttpServer closed = admin(cluster.server(0), Map.of("sluice.auth.enabled", "true"))) {
      assertError(
          call(withToken.port(), "POST", "/api/v1/decommission", null), 401, "sluice.admin.token");
      assertError(
          call(withToken.port(), "POST", "/api/v1/decommission", "wrong-token-of-some-length"),
          401,
          "Bearer");
      assertThat(cluster.server(0).lifecycle()).isEqualTo(ShuffleServer.Lifecycle.SERVING);
      assertThat(call(withToken.port(), "GET", "/api/v1/status", null).statusCode())
          .as("reads need no token")
          .isEqualTo(200);
      assertError(
          call(closed.port(), "POST", "/api/v1/decommission", TOKEN),
          403,
          "sluice.admin.tokenFile");
      assertThat(cluster.server(0).lifecycle()).isEqualTo(ShuffleServer.Lifecycle.SERVING);

      assertThat(call(withToken.port(), "POST", "/api/v1/decommission", TOKEN).statusCode())
          .isEqualTo(200);
      assertThat(cluster.server(0).lifecycle()).isEqualTo(ShuffleServer.Lifecycle.DRAINED);
    }
  }

  @Test
  void aDefaultInstallRefusesEveryActionAndKeepsItsData() throws Exception {
    try (TestCluster cluster = TestCluster.start(tmp, 1);
        AdminHttpServer defaults = admin(cluster.server(0), Map.of())) {
      cluster.coordinator().registerShuffle(0, 1, 1);
      try (MapOutputPusher pusher = cluster.pusher(0, 0, 0)) {
        byte[] r = Records.record(0, 0, 0, 1000);
        pusher.write(0, r, 0, r.length);
        pusher.finish();
      }
      int port = defaults.port();
      for (String action :
          List.of(
              "/api/v1/decommission",
              "/api/v1/cancel-decommission",
              "/api/v1/applications/" + TestCluster.APP_ID + "/expire")) {
        assertError(call(port, "POST", action, null), 403, "sluice.admin.tokenFile");
        assertError(call(port, "POST", action, TOKEN), 403, "no admin token");
      }
      assertThat(cluster.server(0).lifecycle()).isEqualTo(ShuffleServer.Lifecycle.SERVING);
      assertThat(cluster.server(0).registry().application(TestCluster.APP_ID))
          .as("the application's data is still there")
          .isNotNull();
      assertThat(call(port, "GET", "/api/v1/applications", null).statusCode())
          .as("without authentication, listings stay open")
          .isEqualTo(200);
    }
  }

  @Test
  void underAuthenticationApplicationListingsNeedTheToken() throws Exception {
    try (TestCluster cluster = TestCluster.start(tmp, 1);
        AdminHttpServer guarded =
            admin(
                cluster.server(0),
                Map.of("sluice.auth.enabled", "true", "sluice.admin.token", TOKEN));
        AdminHttpServer closed = admin(cluster.server(0), Map.of("sluice.auth.enabled", "true"))) {
      String shuffles = "/api/v1/applications/" + TestCluster.APP_ID + "/shuffles";
      for (String listing : List.of("/api/v1/applications", shuffles)) {
        assertError(call(guarded.port(), "GET", listing, null), 401, "sluice.auth.enabled");
        assertError(
            call(guarded.port(), "GET", listing, "wrong-token-of-some-length"), 401, "Bearer");
        assertError(call(closed.port(), "GET", listing, TOKEN), 403, "sluice.admin.tokenFile");
      }
      assertThat(call(guarded.port(), "GET", "/api/v1/applications", TOKEN).statusCode())
          .isEqualTo(200);
      assertThat(call(guarded.port(), "GET", "/api/v1/status", null).statusCode())
          .as("status (counts only) stays open for monitoring")
          .isEqualTo(200);
    }
  }

  /**
   * Under authentication {@code /metrics} stays open for scrapers, but names applications only to a
   * scrape with the admin token: without it every application is one series, {@code other}.
   */
  @Test
  void underAuthenticationMetricsNameApplicationsOnlyWithTheToken() throws Exception {
    try (TestCluster cluster = TestCluster.start(tmp, 1)) {
      cluster.coordinator().registerShuffle(0, 1, 2);
      try (MapOutputPusher pusher = cluster.pusher(0, 0, 0)) {
        byte[] r = Records.record(0, 0, 0, 1000);
        pusher.write(0, r, 0, r.length);
        pusher.finish();
      }
      String named = "application=\"" + TestCluster.APP_ID + "\"";
      try (AdminHttpServer guarded =
              metricsAndAdmin(
                  cluster.server(0),
                  Map.of("sluice.auth.enabled", "true", "sluice.admin.token", TOKEN));
          AdminHttpServer open = metricsAndAdmin(cluster.server(0), Map.of())) {
        HttpResponse<String> anonymous = call(guarded.port(), "GET", "/metrics", null);
        assertThat(anonymous.statusCode()).isEqualTo(200);
        assertThat(anonymous.body())
            .doesNotContain(TestCluster.APP_ID)
            .contains("sluice_application_stored_bytes{")
            .contains("application=\"other\"");
        assertThat(call(guarded.port(), "GET", "/metrics", "wrong-token-of-some-length").body())
            .doesNotContain(TestCluster.APP_ID);
        assertThat(call(guarded.port(), "GET", "/metrics", TOKEN).body()).contains(named);
        assertThat(call(open.port(), "GET", "/metrics", null).body())
            .as("without authentication, ids are shown to anyone")
            .contains(named);
      }
    }
  }

  private static AdminHttpServer metricsAndAdmin(ShuffleServer server, Map<String, String> conf)
      throws Exception {
    return new AdminHttpServer(
        server.metrics().registry(),
        new AdminApi(server, new AdminConf(SluiceConf.of(conf))),
        "127.0.0.1",
        0,
        Tls.fromConf(SluiceConf.empty()));
  }

  @Test
  void aTooShortTokenIsRefusedAtStartNamingTheSetting() {
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> new AdminConf(SluiceConf.of(Map.of("sluice.admin.token", "short"))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("sluice.admin.token");
  }

  private static void assertError(HttpResponse<String> r, int status, String says) {
    assertThat(r.statusCode()).as(r.body()).isEqualTo(status);
    Map<String, Object> body = json(r);
    assertThat(body).containsOnlyKeys("error");
    assertThat((String) body.get("error")).contains(says);
  }
}
