package io.sluice.e2e.flink;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.testutil.BlackHoleProxy;
import io.sluice.testutil.TestCluster;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Flink batch job whose server list includes a black-holed host (it accepts connections, never
 * answers and never closes one) for the whole job: the job returns the built-in shuffle's result
 * and the healthy servers never expire it, although an unanswered request waits longer than their
 * application timeout. Timeouts are shortened through configuration only.
 */
class FlinkBlackHoleIT {
  @TempDir Path tmp;

  @Test
  void aSilentHostNeitherFailsTheJobNorExpiresItElsewhere() throws Exception {
    List<String> expected;
    MiniCluster builtin = FlinkHarness.builtin();
    try {
      expected = FlinkHarness.collectSorted(FlinkJobs.wordCount(FlinkHarness.batch(builtin, 3)));
    } finally {
      builtin.close();
    }
    try (TestCluster servers =
            TestCluster.start(
                tmp,
                3,
                Map.of("sluice.app.timeout", "3s", "sluice.app.expiryCheckInterval", "100ms"));
        BlackHoleProxy silent = new BlackHoleProxy("127.0.0.1", servers.server(2).port())) {
      silent.blackHole();
      Configuration settings = new Configuration();
      settings.setString(
          "sluice.servers",
          "127.0.0.1:"
              + servers.server(0).port()
              + ",127.0.0.1:"
              + servers.server(1).port()
              + ",127.0.0.1:"
              + silent.port());
      // longer than the servers' application timeout, as in production
      settings.setString("sluice.network.requestTimeout", "8s");
      settings.setString("sluice.coordinator.heartbeatInterval", "250ms");
      MiniCluster flink = FlinkHarness.sluice(servers, settings);
      try {
        List<String> result =
            FlinkHarness.collectSorted(FlinkJobs.wordCount(FlinkHarness.batch(flink, 3)));
        assertThat(result).isNotEmpty().isEqualTo(expected);
      } finally {
        flink.close();
      }
      for (int i = 0; i < 2; i++) {
        assertThat(servers.server(i).metrics().applicationsExpired().getCount())
            .as("applications server %d expired while they ran", i)
            .isZero();
      }
    }
  }
}
