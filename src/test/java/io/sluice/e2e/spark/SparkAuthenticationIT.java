package io.sluice.e2e.spark;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.server.ShuffleServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Spark job with {@code spark.authenticate=true} on servers that require authentication: the
 * driver registers its application's key with the cluster secret from a file only it reads, the
 * executors (two JVMs, without that file) derive the key from Spark's application secret, and the
 * job returns what it returns on the built-in shuffle.
 */
class SparkAuthenticationIT {
  private static final String CLUSTER_SECRET = "sluice-cluster-secret-for-the-spark-suite";

  @TempDir Path tmp;

  @Test
  void authenticatedJobMatchesTheBuiltinShuffle() throws Exception {
    Path clusterSecret = Files.writeString(tmp.resolve("cluster.secret"), CLUSTER_SECRET + "\n");
    SparkSession builtin = SparkSessions.builtin("SparkAuthenticationIT");
    List<String> expectedSums;
    List<String> expectedGroups;
    try {
      expectedSums = Jobs.reduceByKey(builtin);
      expectedGroups = Jobs.groupByKey(builtin);
    } finally {
      builtin.stop();
    }
    Map<String, String> serverAuth =
        Map.of(
            "sluice.auth.enabled",
            "true",
            "sluice.auth.clusterSecretFile",
            clusterSecret.toString());
    try (SluiceServers servers = new SluiceServers(tmp.resolve("servers"), 2, serverAuth)) {
      SparkSession spark =
          SparkSessions.sluice(
              "SparkAuthenticationIT",
              servers.list(),
              Map.of(
                  "spark.authenticate", "true",
                  "spark.authenticate.secret", "the-spark-application-secret-0123",
                  "spark.sluice.auth.enabled", "true",
                  "spark.sluice.auth.clusterSecretFile", clusterSecret.toString()));
      try {
        assertThat(Jobs.reduceByKey(spark)).isEqualTo(expectedSums);
        assertThat(Jobs.groupByKey(spark)).isEqualTo(expectedGroups);
      } finally {
        spark.stop();
      }
      for (ShuffleServer s : servers.all()) {
        // every connection authenticated: nothing was refused
        assertThat(s.metrics().authFailures().getCount()).isZero();
      }
    }
  }
}
