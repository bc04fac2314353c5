package io.sluice.server.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import com.codahale.metrics.Gauge;
import com.codahale.metrics.MetricRegistry;
import io.sluice.common.Clock;
import io.sluice.common.SluiceConf;
import io.sluice.server.ServerConf;
import io.sluice.server.ServerMetrics;
import io.sluice.server.memory.MemoryBudget;
import io.sluice.server.sort.SortMetrics;
import io.sluice.server.state.ServerStateStore;
import io.sluice.server.storage.DataDirectories;
import io.sluice.server.storage.ShuffleRegistry;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PrometheusFormatTest {
  @TempDir Path tmp;

  private static final Pattern SAMPLE =
      Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{(.*)\\})? (\\S+)");
  private static final Pattern LABEL =
      Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");
  private static final Pattern FAMILY =
      Pattern.compile("(?:sluice|jvm|process)_[a-z][a-z0-9]*(_[a-z0-9]+)*");

  /** One sample line: its name, labels and value. */
  static final class Sample {
    final String name;
    final Map<String, String> labels;
    final String value;

    Sample(String name, Map<String, String> labels, String value) {
      this.name = name;
      this.labels = labels;
      this.value = value;
    }
  }

  /** The exposition, parsed; checks that HELP and TYPE come once per family, before its samples. */
  static final class Exposition {
    final Map<String, String> types = new LinkedHashMap<>();
    final Map<String, String> helps = new LinkedHashMap<>();
    final List<Sample> samples = new ArrayList<>();

    static Exposition parse(String text) {
      Exposition e = new Exposition();
      String family = null;
      for (String line : text.split("\n")) {
        if (line.startsWith("# HELP ")) {
          String[] parts = line.split(" ", 4);
          assertThat(e.helps.put(parts[2], parts[3])).as("second HELP of %s", parts[2]).isNull();
          family = parts[2];
        } else if (line.startsWith("# TYPE ")) {
          String[] parts = line.split(" ");
          assertThat(parts).as(line).hasSize(4);
          assertThat(parts[2]).as("TYPE after its HELP").isEqualTo(family);
          assertThat(e.types.put(parts[2], parts[3])).as("second TYPE of %s", parts[2]).isNull();
        } else {
          Matcher m = SAMPLE.matcher(line);
          assertThat(m.matches()).as("sample line '%s'", line).isTrue();
          String name = m.group(1);
          assertThat(name.equals(family) || name.equals(family + "_count"))
              .as("sample %s under the family %s", name, family)
              .isTrue();
          Map<String, String> labels = new LinkedHashMap<>();
          if (m.group(3) != null) {
            Matcher l = LABEL.matcher(m.group(3));
            while (l.find()) {
              labels.put(l.group(1), l.group(2));
            }
          }
          e.samples.add(new Sample(name, labels, m.group(4)));
        }
      }
      return e;
    }

    List<Sample> of(String name) {
      List<Sample> list = new ArrayList<>();
      for (Sample s : samples) {
        if (s.name.equals(name)) {
          list.add(s);
        }
      }
      return list;
    }

    /** The value of the one sample of {@code name} with {@code label=value} (or no label). */
    String value(String name, String label, String labelValue) {
      List<String> found = new ArrayList<>();
      for (Sample s : of(name)) {
        if (label == null || labelValue.equals(s.labels.get(label))) {
          found.add(s.value);
        }
      }
      assertThat(found).as("%s{%s=%s}", name, label, labelValue).hasSize(1);
      return found.get(0);
    }
  }

  @Test
  void everyFamilyOfTheTableFollowsPrometheusConventions() {
    List<PrometheusNames.Family> families = new ArrayList<>(PrometheusNames.all().values());
    families.addAll(PrometheusNames.APPLICATION_FAMILIES);
    Map<String, String> seen = new HashMap<>();
    for (PrometheusNames.Family f : families) {
      String n = f.name();
      assertThat(seen.put(n, n)).as("family %s named twice", n).isNull();
      assertThat(n).as("snake_case under sluice_, jvm_ or process_").matches(FAMILY);
      assertThat(n.endsWith("_total"))
          .as("%s: _total exactly on counters", n)
          .isEqualTo(f.type() == PrometheusNames.Type.COUNTER);
      if (f.type() == PrometheusNames.Type.SUMMARY) {
        assertThat(n).as("timers are summaries in seconds").endsWith("_seconds");
        assertThat(f.scale()).isEqualTo(1e-9);
      }
      if (n.contains("bytes")) {
        assertThat(n).as("bytes is the unit, last").matches(".*_bytes(_total)?");
      }
      if (n.contains("seconds")) {
        assertThat(n).matches(".*_seconds(_total)?");
      }
      assertThat(f.help()).isNotBlank().doesNotContain("\n");
    }
  }

  @Test
  void everyMetricOfTheServerHasAFamilyAndEverySampleTheServerLabel() throws Exception {
    MetricRegistry r = new MetricRegistry();
    ServerConf conf =
        new ServerConf(
            SluiceConf.of(
                Map.of("sluice.server.dirs", tmp.resolve("a") + "," + tmp.resolve("b c"))));
    MemoryBudget memory = new MemoryBudget(1 << 20, 0.8, 0.9, 0.5, Clock.SYSTEM);
    ServerMetrics metrics = new ServerMetrics(r, memory);
    metrics.registerOpenStreams(() -> 2);
    r.register(ServerMetrics.PREFIX + "nettyDirectMemoryPinned", (Gauge<Long>) () -> 1L);
    r.register(ServerMetrics.PREFIX + "nettyDirectMemoryUsed", (Gauge<Long>) () -> 4L);
    r.register(ServerMetrics.PREFIX + "openConnections", (Gauge<Integer>) () -> 3);
    new SortMetrics(r);
    DataDirectories dirs = new DataDirectories(conf, memory, metrics);
    try (ServerStateStore state = ServerStateStore.open(tmp.resolve("state"), false, r)) {
      ShuffleRegistry shuffles = new ShuffleRegistry(dirs, Clock.SYSTEM);
      PrometheusSource.register(r, "host-1:9290", 20, shuffles, dirs, memory);
      metrics.bytesPushed().mark(1000);

      Exposition e = Exposition.parse(PrometheusFormat.render(r));

      for (String family : e.types.keySet()) {
        assertThat(family).as("no metric of the server without a family").matches(FAMILY);
        assertThat(e.helps.get(family)).doesNotContain("no Prometheus name");
      }
      for (Sample s : e.samples) {
        assertThat(s.labels).as(s.name).containsEntry("server", "host-1:9290");
      }
      assertThat(e.value("sluice_pushed_bytes_total", null, null)).isEqualTo("1000");
      assertThat(e.value("sluice_memory_max_bytes", null, null)).isEqualTo("1048576");
      assertThat(e.value("sluice_memory_pause_watermark_bytes", null, null))
          .isEqualTo(Long.toString((long) ((1 << 20) * 0.8)));
      assertThat(e.value("sluice_memory_replica_pause_watermark_bytes", null, null))
          .isEqualTo(Long.toString((long) ((1 << 20) * 0.9)));
      assertThat(e.value("sluice_memory_resume_watermark_bytes", null, null))
          .isEqualTo(Long.toString(1 << 19));
      assertThat(e.value("sluice_memory_state", "state", "ACCEPTING")).isEqualTo("1");
      assertThat(e.value("sluice_memory_state", "state", "PUSH_PAUSED")).isEqualTo("0");
      assertThat(e.value("sluice_applications", null, null)).isEqualTo("0");
      assertThat(e.types)
          .containsEntry("sluice_pushed_bytes_total", "counter")
          .containsEntry("sluice_commit_duration_seconds", "summary")
          .containsEntry("sluice_memory_paused_seconds_total", "counter")
          .containsEntry("sluice_active_splits", "gauge")
          .containsEntry("sluice_directory_usage_ratio", "gauge")
          .containsKeys(
              "sluice_sorts_total",
              "sluice_sort_duration_seconds",
              "sluice_state_writes_total",
              "sluice_state_recovered_splits_total",
              "sluice_open_streams",
              "sluice_open_connections",
              "sluice_netty_direct_memory_pinned_bytes");

      // one family per directory metric, the path as its label
      for (String family :
          List.of(
              "sluice_directory_flushed_bytes_total",
              "sluice_directory_health",
              "sluice_directory_usage_ratio",
              "sluice_directory_checksum_failures_total",
              "sluice_directory_suspect")) {
        List<String> labels = new ArrayList<>();
        for (Sample s : e.of(family)) {
          labels.add(s.labels.get("directory"));
        }
        assertThat(labels)
            .as(family)
            .containsExactlyInAnyOrder(
                tmp.resolve("a").toAbsolutePath().toString(),
                tmp.resolve("b c").toAbsolutePath().toString());
      }
    } finally {
      dirs.close();
    }
  }

  @Test
  void convertsEachKindOfMetricWithoutAServerLabelWhenThereIsNoSource() {
    MetricRegistry r = new MetricRegistry();
    r.register("sluice.server.memoryHeld", (Gauge<Long>) () -> 42L);
    r.register("sluice.server.memoryPausedMillis", (Gauge<Long>) () -> 1500L);
    r.register("sluice.server.memoryState", (Gauge<String>) () -> "PUSH_PAUSED");
    r.counter("sluice.server.activeSplits").inc(3);
    r.counter("sluice.server.checksumFailures").inc(2);
    r.meter("sluice.server.bytesPushed").mark(1000);
    r.timer("sluice.server.flushLatency").update(2, TimeUnit.MILLISECONDS);
    r.meter("sluice.server.dir._data_1.bytesFlushed").mark(5);

    String text = PrometheusFormat.render(r);

    assertThat(text)
        .contains(
            "# HELP sluice_memory_held_bytes Bytes of pushed data held, not yet flushed.\n"
                + "# TYPE sluice_memory_held_bytes gauge\n"
                + "sluice_memory_held_bytes 42\n")
        .contains("# TYPE sluice_memory_paused_seconds_total counter\n")
        .contains("sluice_memory_paused_seconds_total 1.5\n")
        .contains("sluice_memory_state{state=\"ACCEPTING\"} 0\n")
        .contains("sluice_memory_state{state=\"PUSH_PAUSED\"} 1\n")
        .contains("# TYPE sluice_active_splits gauge\nsluice_active_splits 3\n")
        .contains("# TYPE sluice_checksum_failures_total counter\n")
        .contains("# TYPE sluice_pushed_bytes_total counter\nsluice_pushed_bytes_total 1000\n")
        .contains("# TYPE sluice_flush_duration_seconds summary\n")
        .contains("sluice_flush_duration_seconds{quantile=\"0.5\"} 0.002\n")
        .contains("sluice_flush_duration_seconds_count 1\n")
        // without the directory list the label is the name's segment
        .contains("sluice_directory_flushed_bytes_total{directory=\"_data_1\"} 5\n")
        .doesNotContain("server=")
        .doesNotContain("sluice_server_")
        .doesNotContain("sluice_application_");
    Exposition.parse(text);
  }

  @Test
  void metricsTheTableDoesNotKnowAreStillExportedUnderTheirMangledNames() {
    MetricRegistry r = new MetricRegistry();
    r.counter("sluice.server.test").inc(7);
    r.meter("sluice.server.somethingNew").mark(2);
    r.timer("jvm.gc-pause").update(1, TimeUnit.SECONDS);
    r.register("9lives", (Gauge<Double>) () -> 0.25);
    PrometheusSource source = new PrometheusSource("h:1", 3, List::of, List::of);

    Exposition e = Exposition.parse(PrometheusFormat.render(r, source));

    assertThat(e.types)
        .containsEntry("sluice_server_test", "gauge")
        .containsEntry("sluice_server_somethingNew_total", "counter")
        .containsEntry("jvm_gc_pause_seconds", "summary")
        .containsEntry("_9lives", "gauge");
    assertThat(e.value("sluice_server_test", "server", "h:1")).isEqualTo("7");
    assertThat(e.value("sluice_server_somethingNew_total", "server", "h:1")).isEqualTo("2");
    assertThat(e.value("jvm_gc_pause_seconds_count", "server", "h:1")).isEqualTo("1");
    assertThat(e.value("jvm_gc_pause_seconds", "quantile", "0.99")).isEqualTo("1");
    assertThat(e.value("_9lives", "server", "h:1")).isEqualTo("0.25");
  }

  @Test
  void applicationsAreBoundedToTheTopNByStoredBytesPlusOther() {
    List<PrometheusSource.Application> apps = new ArrayList<>();
    long otherStored = 0;
    for (int i = 0; i < 25; i++) {
      // app-24 holds the most; app-0 the least
      PrometheusSource.Application a =
          new PrometheusSource.Application("app-" + i, 1000L * i, 10L * i, i, 2, i % 2, 0);
      apps.add(a);
      if (i < 22) {
        otherStored += 1000L * i;
      }
    }
    MetricRegistry r = new MetricRegistry();
    r.register(PrometheusSource.APPLICATIONS, new PrometheusSource("h:1", 3, List::of, () -> apps));

    Exposition e = Exposition.parse(PrometheusFormat.render(r));

    assertThat(e.value("sluice_applications", null, null)).isEqualTo("25");
    for (PrometheusNames.Family f : PrometheusNames.APPLICATION_FAMILIES) {
      List<String> ids = new ArrayList<>();
      for (Sample s : e.of(f.name())) {
        assertThat(s.labels).containsEntry("server", "h:1");
        ids.add(s.labels.get("application"));
      }
      assertThat(ids).as(f.name()).containsExactlyInAnyOrder("app-24", "app-23", "app-22", "other");
    }
    assertThat(e.types)
        .containsEntry("sluice_application_stored_bytes", "gauge")
        .containsEntry("sluice_application_pushed_bytes_total", "counter")
        .containsEntry("sluice_application_read_bytes_total", "counter")
        .containsEntry("sluice_application_splits", "gauge")
        .containsEntry("sluice_application_memory_held_bytes", "gauge");
    assertThat(e.value("sluice_application_stored_bytes", "application", "app-24"))
        .isEqualTo("24000");
    assertThat(e.value("sluice_application_stored_bytes", "application", "other"))
        .isEqualTo(Long.toString(otherStored));
    assertThat(e.value("sluice_application_pushed_bytes_total", "application", "other"))
        .isEqualTo(Long.toString(otherStored / 100));
    assertThat(e.value("sluice_application_read_bytes_total", "application", "other"))
        .isEqualTo(Long.toString(otherStored / 1000));
    assertThat(e.value("sluice_application_splits", "application", "other")).isEqualTo("44");
    assertThat(e.value("sluice_application_memory_held_bytes", "application", "other"))
        .isEqualTo("11");
  }

  @Test
  void noOtherSeriesWhenEveryApplicationFitsAndLabelValuesAreEscaped() {
    List<PrometheusSource.Application> apps =
        List.of(
            new PrometheusSource.Application("a\"b\\c", 5, 1, 1, 1, 0, 0),
            new PrometheusSource.Application("plain", 3, 1, 1, 1, 0, 0));
    PrometheusSource source = new PrometheusSource("h:1", 20, List::of, () -> apps);

    String text = PrometheusFormat.render(new MetricRegistry(), source);

    assertThat(text)
        .contains("sluice_application_stored_bytes{server=\"h:1\",application=\"a\\\"b\\\\c\"} 5\n")
        .contains("sluice_application_stored_bytes{server=\"h:1\",application=\"plain\"} 3\n")
        .doesNotContain("\"other\"");
    assertThat(Exposition.parse(text).of("sluice_application_splits")).hasSize(2);

    PrometheusSource none = new PrometheusSource("h:1", 0, List::of, () -> apps);
    Exposition e = Exposition.parse(PrometheusFormat.render(new MetricRegistry(), none));
    assertThat(e.value("sluice_application_stored_bytes", "application", "other")).isEqualTo("8");
    assertThat(e.of("sluice_application_stored_bytes")).hasSize(1);
  }

  @Test
  void topApplicationsSettingDefaultsTo20AndMustNotBeNegative() {
    assertThat(new MetricsConf(SluiceConf.empty()).topApplications()).isEqualTo(20);
    assertThat(
            new MetricsConf(SluiceConf.of(Map.of("sluice.metrics.topApplications", "3")))
                .topApplications())
        .isEqualTo(3);
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> new MetricsConf(SluiceConf.of(Map.of("sluice.metrics.topApplications", "-1"))))
        .hasMessageContaining("sluice.metrics.topApplications");
  }
}
