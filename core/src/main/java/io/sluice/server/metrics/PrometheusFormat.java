package io.sluice.server.metrics;

import com.codahale.metrics.Counter;
import com.codahale.metrics.Gauge;
import com.codahale.metrics.Histogram;
import com.codahale.metrics.Meter;
import com.codahale.metrics.MetricRegistry;
import com.codahale.metrics.Snapshot;
import com.codahale.metrics.Timer;
import java.util.Locale;
import java.util.Map;

/**
 * Renders a {@link MetricRegistry} in the Prometheus text exposition format (version 0.0.4). Names
 * become {@code [a-zA-Z0-9_]}; meters and timers are exported as counters of events (and, for
 * timers, summaries in seconds); gauges whose value is not a number are skipped.
 */
public final class PrometheusFormat {
  private PrometheusFormat() {}

  public static String render(MetricRegistry registry) {
    StringBuilder out = new StringBuilder();
    for (Map.Entry<String, Gauge> e : registry.getGauges().entrySet()) {
      Object value = e.getValue().getValue();
      if (value instanceof Number) {
        sample(out, name(e.getKey()), "gauge", ((Number) value).doubleValue());
      }
    }
    for (Map.Entry<String, Counter> e : registry.getCounters().entrySet()) {
      sample(out, name(e.getKey()), "gauge", e.getValue().getCount());
    }
    for (Map.Entry<String, Meter> e : registry.getMeters().entrySet()) {
      sample(out, name(e.getKey()) + "_total", "counter", e.getValue().getCount());
    }
    for (Map.Entry<String, Histogram> e : registry.getHistograms().entrySet()) {
      summary(out, name(e.getKey()), e.getValue().getSnapshot(), e.getValue().getCount(), 1.0);
    }
    for (Map.Entry<String, Timer> e : registry.getTimers().entrySet()) {
      summary(
          out,
          name(e.getKey()) + "_seconds",
          e.getValue().getSnapshot(),
          e.getValue().getCount(),
          1e-9);
    }
    return out.toString();
  }

  static String name(String dropwizardName) {
    String n = dropwizardName.replaceAll("[^a-zA-Z0-9_]", "_");
    return Character.isDigit(n.charAt(0)) ? "_" + n : n;
  }

  private static void sample(StringBuilder out, String name, String type, double value) {
    out.append("# TYPE ").append(name).append(' ').append(type).append('\n');
    out.append(name).append(' ').append(format(value)).append('\n');
  }

  private static void summary(
      StringBuilder out, String name, Snapshot s, long count, double scale) {
    out.append("# TYPE ").append(name).append(" summary\n");
    double[] quantiles = {0.5, 0.75, 0.95, 0.99};
    for (double q : quantiles) {
      out.append(name)
          .append("{quantile=\"")
          .append(q)
          .append("\"} ")
          .append(format(s.getValue(q) * scale))
          .append('\n');
    }
    out.append(name).append("_count ").append(count).append('\n');
  }

  private static String format(double v) {
    if (v == Math.rint(v) && !Double.isInfinite(v) && Math.abs(v) < 1e15) {
      return Long.toString((long) v);
    }
    return String.format(Locale.ROOT, "%s", v);
  }
}
