package io.sluice.server.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.client.push.MapOutputPusher;
import io.sluice.client.read.PartitionReader;
import io.sluice.client.read.ShuffleBatch;
import io.sluice.common.Json;
import io.sluice.common.SluiceConf;
import io.sluice.network.Tls;
import io.sluice.server.ShuffleServer;
import io.sluice.server.admin.AdminHttpServer;
import io.sluice.testutil.Records;
import io.sluice.testutil.TestCluster;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Grafana dashboard and the Prometheus example against a real server: every metric the
 * dashboard's queries name is in the server's {@code /metrics} once an application pushed and read
 * data, with the server label, the directory paths and the application's series.
 */
class DashboardMetricsIT {
  /** The repository's conf dir, seen from the core module's directory (surefire's cwd). */
  private static final Path CONF = Paths.get("..", "conf");

  private static final Pattern METRIC = Pattern.compile("\\b(?:sluice|jvm|process)_[a-z0-9_]+");

  @TempDir Path tmp;

  @Test
  void everyMetricTheDashboardQueriesIsScraped() throws Exception {
    Map<String, Object> dashboard = dashboard();
    List<String> queries = new ArrayList<>();
    collectQueries(dashboard, null, queries);
    Set<String> names = new TreeSet<>();
    for (String q : queries) {
      Matcher m = METRIC.matcher(q);
      while (m.find()) {
        names.add(m.group());
      }
    }
    // the panels the dashboard promises, by what they query
    assertThat(names)
        .contains(
            "sluice_pushed_bytes_total",
            "sluice_read_bytes_total",
            "sluice_memory_held_bytes",
            "sluice_memory_max_bytes",
            "sluice_memory_pause_watermark_bytes",
            "sluice_memory_resume_watermark_bytes",
            "sluice_memory_paused_seconds_total",
            "sluice_directory_usage_ratio",
            "sluice_commit_duration_seconds",
            "sluice_flush_duration_seconds",
            "sluice_congested_pushes_total",
            "sluice_open_connections",
            "sluice_open_streams",
            "sluice_application_stored_bytes",
            "jvm_memory_heap_used_bytes",
            "jvm_buffer_direct_used_bytes",
            "jvm_gc_collection_seconds_total",
            "process_open_fds",
            "process_max_fds");

    try (TestCluster cluster = TestCluster.start(tmp, 1)) {
      pushAndRead(cluster);
      ShuffleServer server = cluster.server(0);
      String scrape;
      try (AdminHttpServer http =
          new AdminHttpServer(
              server.metrics().registry(),
              null,
              "127.0.0.1",
              0,
              Tls.fromConf(SluiceConf.empty()))) {
        scrape = get("http://127.0.0.1:" + http.port() + "/metrics");
      }
      Set<String> scraped = new TreeSet<>();
      for (String line : scrape.split("\n")) {
        if (!line.startsWith("#")) {
          Matcher m = Pattern.compile("^[a-zA-Z_:][a-zA-Z0-9_:]*").matcher(line);
          assertThat(m.find()).as(line).isTrue();
          scraped.add(m.group());
        }
      }
      for (String name : names) {
        assertThat(scraped).as("metric %s of the dashboard in the scrape", name).contains(name);
      }
      assertThat(scrape)
          .as("every metric of the server has a Prometheus name")
          .doesNotContain("sluice_server_")
          .doesNotContain("no Prometheus name");

      String label = "server=\"" + server.host() + ":" + server.port() + "\"";
      for (String line : scrape.split("\n")) {
        if (!line.startsWith("#")) {
          assertThat(line).as("server label").contains("{" + label);
        }
      }
      for (String disk : List.of("disk1", "disk2")) {
        String dir = tmp.resolve("server0").resolve(disk).toAbsolutePath().toString();
        assertThat(scrape)
            .contains(
                "sluice_directory_usage_ratio{" + label + ",directory=\"" + dir + "\"}",
                "sluice_directory_flushed_bytes_total{" + label + ",directory=\"" + dir + "\"}");
      }
      String app = ",application=\"" + TestCluster.APP_ID + "\"} ";
      assertThat(value(scrape, "sluice_application_stored_bytes{" + label + app)).isPositive();
      assertThat(value(scrape, "sluice_application_pushed_bytes_total{" + label + app))
          .isPositive();
      assertThat(value(scrape, "sluice_application_read_bytes_total{" + label + app)).isPositive();
      assertThat(value(scrape, "sluice_application_splits{" + label + app)).isPositive();
      assertThat(value(scrape, "sluice_application_memory_held_bytes{" + label + app)).isZero();
      assertThat(value(scrape, "sluice_pushed_bytes_total{" + label + "} ")).isPositive();
      assertThat(value(scrape, "sluice_read_bytes_total{" + label + "} ")).isPositive();
      assertThat(value(scrape, "sluice_applications{" + label + "} ")).isEqualTo(1);
      assertThat(value(scrape, "jvm_memory_heap_used_bytes{" + label + "} ")).isPositive();
      assertThat(value(scrape, "process_open_fds{" + label + "} ")).isPositive();
      assertThat(value(scrape, "process_max_fds{" + label + "} "))
          .isGreaterThanOrEqualTo(value(scrape, "process_open_fds{" + label + "} "));
      assertThat(value(scrape, "process_cpu_seconds_total{" + label + "} ")).isPositive();
    }
  }

  @Test
  void dashboardIsAnImportableGrafanaDashboardFilteredByServer() throws Exception {
    Map<String, Object> dashboard = dashboard();
    assertThat(dashboard.get("__inputs").toString()).contains("DS_PROMETHEUS");
    assertThat(((Number) dashboard.get("schemaVersion")).intValue()).isBetween(36, 39);
    List<?> variables = (List<?>) ((Map<?, ?>) dashboard.get("templating")).get("list");
    Map<?, ?> server = null;
    for (Object v : variables) {
      if ("server".equals(((Map<?, ?>) v).get("name"))) {
        server = (Map<?, ?>) v;
      }
    }
    assertThat(server).as("templating variable server").isNotNull();
    assertThat(server.get("definition").toString())
        .matches("label_values\\(sluice_\\w+, server\\)");
    List<String> exprs = new ArrayList<>();
    collectQueries(dashboard, "expr", exprs);
    assertThat(exprs).hasSizeGreaterThan(15);
    for (String expr : exprs) {
      assertThat(expr).as("queries filter by the server variable").contains("server=~\"$server\"");
    }
    List<?> panels = (List<?>) dashboard.get("panels");
    for (Object p : panels) {
      Map<?, ?> panel = (Map<?, ?>) p;
      if (!"row".equals(panel.get("type"))) {
        assertThat(panel.get("datasource").toString()).contains("${DS_PROMETHEUS}");
      }
    }
  }

  @Test
  void prometheusExampleScrapesTheMetricsPort() throws Exception {
    String yaml = Files.readString(CONF.resolve("prometheus").resolve("prometheus.yml.example"));
    assertThat(yaml)
        .contains("scrape_configs:", "metrics_path: /metrics", ":9291", "sluice.metrics.port")
        .contains("NodeManager")
        .doesNotContain("\t");
    Pattern yamlLine = Pattern.compile("( *)(- )?([A-Za-z_]+:( .*)?|[A-Za-z0-9.-]+:\\d+)( *#.*)?");
    for (String line : yaml.split("\n")) {
      if (line.isBlank() || line.trim().startsWith("#")) {
        continue;
      }
      assertThat(yamlLine.matcher(line).matches()).as("YAML line '%s'", line).isTrue();
      assertThat(line.indexOf(line.trim()) % 2).as("indented by twos: '%s'", line).isZero();
    }
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> dashboard() throws Exception {
    String text =
        Files.readString(
            CONF.resolve("grafana").resolve("sluice-dashboard.json"), StandardCharsets.UTF_8);
    return (Map<String, Object>) Json.parse(text);
  }

  /** The strings under the keys PromQL is in (every one of them, or only {@code onlyKey}'s). */
  private static void collectQueries(Object node, String onlyKey, List<String> out) {
    if (node instanceof Map) {
      for (Map.Entry<?, ?> e : ((Map<?, ?>) node).entrySet()) {
        String key = e.getKey().toString();
        boolean query =
            onlyKey == null
                ? key.equals("expr") || key.equals("query") || key.equals("definition")
                : key.equals(onlyKey);
        if (query && e.getValue() instanceof String) {
          out.add((String) e.getValue());
        } else {
          collectQueries(e.getValue(), onlyKey, out);
        }
      }
    } else if (node instanceof List) {
      for (Object o : (List<?>) node) {
        collectQueries(o, onlyKey, out);
      }
    }
  }

  private static void pushAndRead(TestCluster cluster) throws Exception {
    int maps = 2;
    int partitions = 4;
    cluster.coordinator().registerShuffle(0, maps, partitions);
    for (int m = 0; m < maps; m++) {
      try (MapOutputPusher pusher = cluster.pusher(0, m, 0)) {
        for (int s = 0; s < 20; s++) {
          for (int p = 0; p < partitions; p++) {
            byte[] r = Records.record(m, p, s, 500);
            pusher.write(p, r, 0, r.length);
          }
        }
        pusher.finish();
      }
    }
    Records.Checker checker = new Records.Checker();
    try (PartitionReader reader = cluster.reader(0, 0, partitions, 0, maps)) {
      ShuffleBatch b;
      while ((b = reader.next()) != null) {
        checker.accept(b.partitionId(), b.payload());
      }
    }
    for (int m = 0; m < maps; m++) {
      for (int p = 0; p < partitions; p++) {
        assertThat(checker.count(m, p)).isEqualTo(20);
      }
    }
  }

  private static String get(String url) throws Exception {
    HttpResponse<String> response =
        HttpClient.newBuilder()
            .connectTimeout(Duration.ofSeconds(30))
            .build()
            .send(
                HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30)).build(),
                HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.headers().firstValue("Content-Type")).contains("text/plain; version=0.0.4");
    return response.body();
  }

  /** The value of the sample line starting with {@code prefix} (name, labels and the space). */
  private static long value(String scrape, String prefix) {
    for (String line : scrape.split("\n")) {
      if (line.startsWith(prefix)) {
        return (long) Double.parseDouble(line.substring(prefix.length()));
      }
    }
    throw new AssertionError("no sample " + prefix + " in\n" + scrape);
  }
}
