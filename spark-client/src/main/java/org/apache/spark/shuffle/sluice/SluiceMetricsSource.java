package org.apache.spark.shuffle.sluice;

import com.codahale.metrics.MetricRegistry;
import io.sluice.client.ClientMetrics;
import org.apache.spark.metrics.source.Source;

/**
 * The client metrics of a Spark JVM ({@link ClientMetrics}: read failovers, partitions moved,
 * failed servers, replica lag) as the Spark metrics source {@code sluice}, so the sinks configured
 * in {@code metrics.properties} (JMX, Prometheus servlet, ...) report them for the driver and every
 * executor.
 */
final class SluiceMetricsSource implements Source {
  static final String NAME = "sluice";

  private final MetricRegistry registry;

  SluiceMetricsSource(ClientMetrics metrics) {
    this.registry = metrics.registry();
  }

  @Override
  public String sourceName() {
    return NAME;
  }

  @Override
  public MetricRegistry metricRegistry() {
    return registry;
  }
}
