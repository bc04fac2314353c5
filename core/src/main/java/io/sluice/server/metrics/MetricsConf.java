package io.sluice.server.metrics;

import io.sluice.common.ConfigKey;
import io.sluice.common.SluiceConf;
import java.util.List;

/** How much the server's Prometheus exposition ({@code /metrics}) shows. */
public final class MetricsConf {
  /** {@link #TOP_APPLICATIONS}' default. */
  public static final int DEFAULT_TOP_APPLICATIONS = 20;

  public static final ConfigKey<Integer> TOP_APPLICATIONS =
      ConfigKey.integer(
          "sluice.metrics.topApplications",
          DEFAULT_TOP_APPLICATIONS,
          "Applications /metrics shows one by one (sluice_application_*, label application), the"
              + " ones holding the most bytes on the server; the rest are summed in one series"
              + " labelled application=\"other\", so the number of series stays bounded.");

  public static final List<ConfigKey<?>> KEYS = List.of(TOP_APPLICATIONS);

  private final int topApplications;

  /**
   * @throws IllegalArgumentException naming the setting when it is negative
   */
  public MetricsConf(SluiceConf conf) {
    this.topApplications = conf.get(TOP_APPLICATIONS);
    if (topApplications < 0) {
      throw new IllegalArgumentException(
          TOP_APPLICATIONS.name() + " must not be negative, got " + topApplications);
    }
  }

  public int topApplications() {
    return topApplications;
  }
}
