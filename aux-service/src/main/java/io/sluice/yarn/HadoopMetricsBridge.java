package io.sluice.yarn;

import com.codahale.metrics.Counter;
import com.codahale.metrics.Histogram;
import com.codahale.metrics.Meter;
import com.codahale.metrics.MetricRegistry;
import com.codahale.metrics.Snapshot;
import com.codahale.metrics.Timer;
import io.sluice.server.ServerMetrics;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.metrics2.MetricsCollector;
import org.apache.hadoop.metrics2.MetricsInfo;
import org.apache.hadoop.metrics2.MetricsRecordBuilder;
import org.apache.hadoop.metrics2.MetricsSource;
import org.apache.hadoop.metrics2.lib.Interns;

/**
 * Shows the server's Dropwizard metrics in the NodeManager's Hadoop metrics system (and so in its
 * JMX, as {@code Hadoop:service=NodeManager,name=SluiceShuffleService}) and its sinks. Each
 * snapshot reads the registry as it is; nothing is copied in between.
 *
 * <p>Names drop the {@code sluice.server.} prefix and turn other characters than letters, digits
 * and {@code _} into {@code _}: a gauge or counter {@code x} is a gauge {@code x}; a meter is a
 * counter {@code xCount} and a gauge {@code xRate1m} (per second); a timer is {@code xCount},
 * {@code xMeanMillis}, {@code xP99Millis} and {@code xMaxMillis}; a histogram is {@code xCount},
 * {@code xMean}, {@code xP99} and {@code xMax}. Gauges of text are tags.
 */
final class HadoopMetricsBridge implements MetricsSource {
  static final String SOURCE = "SluiceShuffleService";
  static final String DESCRIPTION = "Sluice shuffle server in the NodeManager";

  private final MetricRegistry registry;

  HadoopMetricsBridge(MetricRegistry registry) {
    this.registry = registry;
  }

  @Override
  public void getMetrics(MetricsCollector collector, boolean all) {
    MetricsRecordBuilder record = collector.addRecord(SOURCE).setContext("sluice");
    // Dropwizard hands out gauges as a raw type; the lambda keeps that out of this source
    registry.getGauges().forEach((key, gauge) -> addGauge(record, name(key), gauge.getValue()));
    for (Map.Entry<String, Counter> e : registry.getCounters().entrySet()) {
      // a Dropwizard counter may go down (open splits), so it is a gauge here
      record.addGauge(info(name(e.getKey())), e.getValue().getCount());
    }
    for (Map.Entry<String, Meter> e : registry.getMeters().entrySet()) {
      String name = name(e.getKey());
      record.addCounter(info(name + "Count"), e.getValue().getCount());
      record.addGauge(info(name + "Rate1m"), e.getValue().getOneMinuteRate());
    }
    for (Map.Entry<String, Timer> e : registry.getTimers().entrySet()) {
      String name = name(e.getKey());
      Snapshot s = e.getValue().getSnapshot();
      record.addCounter(info(name + "Count"), e.getValue().getCount());
      record.addGauge(info(name + "MeanMillis"), millis(s.getMean()));
      record.addGauge(info(name + "P99Millis"), millis(s.get99thPercentile()));
      record.addGauge(info(name + "MaxMillis"), millis(s.getMax()));
    }
    for (Map.Entry<String, Histogram> e : registry.getHistograms().entrySet()) {
      String name = name(e.getKey());
      Snapshot s = e.getValue().getSnapshot();
      record.addCounter(info(name + "Count"), e.getValue().getCount());
      record.addGauge(info(name + "Mean"), s.getMean());
      record.addGauge(info(name + "P99"), s.get99thPercentile());
      record.addGauge(info(name + "Max"), s.getMax());
    }
  }

  private static void addGauge(MetricsRecordBuilder record, String name, Object value) {
    if (value instanceof Integer || value instanceof Long) {
      record.addGauge(info(name), ((Number) value).longValue());
    } else if (value instanceof Number) {
      record.addGauge(info(name), ((Number) value).doubleValue());
    } else if (value != null) {
      record.tag(info(name), value.toString());
    }
  }

  static String name(String dropwizardName) {
    String n =
        dropwizardName.startsWith(ServerMetrics.PREFIX)
            ? dropwizardName.substring(ServerMetrics.PREFIX.length())
            : dropwizardName;
    return n.replaceAll("[^A-Za-z0-9_]", "_");
  }

  private static MetricsInfo info(String name) {
    return Interns.info(name, "Sluice " + name);
  }

  private static double millis(double nanos) {
    return nanos / TimeUnit.MILLISECONDS.toNanos(1);
  }
}
