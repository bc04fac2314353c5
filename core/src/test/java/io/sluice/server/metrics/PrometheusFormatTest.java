package io.sluice.server.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import com.codahale.metrics.Gauge;
import com.codahale.metrics.MetricRegistry;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class PrometheusFormatTest {
  @Test
  void rendersEveryKindOfMetric() {
    MetricRegistry r = new MetricRegistry();
    r.register("sluice.server.memoryHeld", (Gauge<Long>) () -> 42L);
    r.register("sluice.server.memoryState", (Gauge<String>) () -> "ACCEPTING");
    r.counter("sluice.server.activeSplits").inc(3);
    r.meter("sluice.server.bytesPushed").mark(1000);
    r.timer("sluice.server.flushLatency").update(2, TimeUnit.MILLISECONDS);
    String text = PrometheusFormat.render(r);
    assertThat(text)
        .contains("# TYPE sluice_server_memoryHeld gauge\nsluice_server_memoryHeld 42\n")
        .contains("sluice_server_activeSplits 3\n")
        .contains(
            "# TYPE sluice_server_bytesPushed_total counter\nsluice_server_bytesPushed_total 1000\n")
        .contains("sluice_server_flushLatency_seconds{quantile=\"0.5\"} 0.002")
        .contains("sluice_server_flushLatency_seconds_count 1")
        .doesNotContain("memoryState");
  }
}
