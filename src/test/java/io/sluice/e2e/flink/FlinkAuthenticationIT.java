package io.sluice.e2e.flink;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.server.ShuffleServer;
import io.sluice.testutil.TestCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Flink batch job on servers that require authentication: the JobManager's shuffle master
 * registers each job's key with the cluster secret, the TaskManagers (which drop the cluster
 * secret) derive it from the configured application secret, and the job returns what it returns on
 * Flink's built-in shuffle.
 */
class FlinkAuthenticationIT {
  private static final String CLUSTER_SECRET = "sluice-cluster-secret-for-the-flink-suite";
  private static final String APP_SECRET = "the-flink-clusters-app-secret-0123";

  @TempDir Path tmp;

  @Test
  void authenticatedJobMatchesTheBuiltinShuffle() throws Exception {
    List<String> expected;
    MiniCluster builtin = FlinkHarness.builtin();
    try {
      expected = FlinkHarness.collectSorted(FlinkJobs.wordCount(FlinkHarness.batch(builtin, 3)));
    } finally {
      builtin.close();
    }
    Path clusterSecret = Files.writeString(tmp.resolve("cluster.secret"), CLUSTER_SECRET);
    Map<String, String> serverAuth =
        Map.of(
            "sluice.auth.enabled", "true",
            "sluice.auth.clusterSecretFile", clusterSecret.toString(),
            // the test cluster's own client is a coordinator of another application
            "sluice.auth.appSecret", "the-test-clusters-own-secret-0123");
    try (TestCluster servers = TestCluster.start(tmp.resolve("sluice"), 2, serverAuth)) {
      Configuration settings = new Configuration();
      settings.setString("sluice.auth.enabled", "true");
      settings.setString("sluice.auth.appSecret", APP_SECRET);
      settings.setString("sluice.auth.clusterSecretFile", clusterSecret.toString());
      MiniCluster flink = FlinkHarness.sluice(servers, settings);
      try {
        List<String> result =
            FlinkHarness.collectSorted(FlinkJobs.wordCount(FlinkHarness.batch(flink, 3)));
        assertThat(result).isNotEmpty().isEqualTo(expected);
      } finally {
        flink.close();
      }
      long pushed = FlinkHarness.totals(servers).bytesPushed;
      assertThat(pushed).isPositive();
      for (ShuffleServer s : servers.servers()) {
        assertThat(s.metrics().authFailures().getCount()).isZero();
      }
    }
  }
}
