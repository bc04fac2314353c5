package io.sluice.e2e.spark;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.server.ShuffleServer;
import io.sluice.testutil.BlackHoleProxy;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Spark job whose server list includes a black-holed host (it accepts connections and never
 * answers, never closes one) for the whole job: the job returns the built-in shuffle's result, and
 * the healthy servers never expire the running application although an unanswered request waits
 * longer than their application timeout. Timeouts are shortened through configuration only.
 */
class SparkBlackHoleIT {
  @TempDir Path tmp;

  @Test
  void aSilentHostNeitherFailsTheJobNorExpiresItElsewhere() throws Exception {
    SparkSession builtin = SparkSessions.builtin("SparkBlackHoleIT");
    List<String> expected;
    try {
      expected = Jobs.reduceByKey(builtin);
    } finally {
      builtin.stop();
    }
    Map<String, String> shortExpiry =
        Map.of("sluice.app.timeout", "3s", "sluice.app.expiryCheckInterval", "100ms");
    try (SluiceServers servers = new SluiceServers(tmp, 3, shortExpiry);
        BlackHoleProxy silent = new BlackHoleProxy("127.0.0.1", servers.all().get(2).port())) {
      silent.blackHole();
      String list =
          "127.0.0.1:"
              + servers.all().get(0).port()
              + ",127.0.0.1:"
              + servers.all().get(1).port()
              + ",127.0.0.1:"
              + silent.port();
      SparkSession spark =
          SparkSessions.sluice(
              "SparkBlackHoleIT",
              list,
              Map.of(
                  // longer than the servers' application timeout, as in production
                  "spark.sluice.network.requestTimeout", "8s",
                  "spark.sluice.coordinator.heartbeatInterval", "250ms"));
      try {
        assertThat(Jobs.reduceByKey(spark)).isEqualTo(expected);
        assertThat(Jobs.reduceByKey(spark)).isEqualTo(expected);
      } finally {
        spark.stop();
      }
      for (int i = 0; i < 2; i++) {
        ShuffleServer healthy = servers.all().get(i);
        assertThat(healthy.metrics().applicationsExpired().getCount())
            .as("applications server %d expired while they ran", i)
            .isZero();
      }
    }
  }
}
