package io.sluice.e2e.spark;

import static org.assertj.core.api.Assertions.assertThat;

import com.codahale.metrics.MetricRegistry;
import io.sluice.common.SluiceConf;
import io.sluice.network.Tls;
import io.sluice.server.ShuffleServer;
import io.sluice.server.admin.AdminApi;
import io.sluice.server.admin.AdminConf;
import io.sluice.server.admin.AdminHttpServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.spark.Success$;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import scala.Tuple2;

/**
 * A server of the HDFS tier ({@code sluice.storage.policy=local,hdfs} on a MiniDFSCluster)
 * decommissioned through its admin API after the first map task of a Spark job: the decommission
 * commits its open splits early and moves them to HDFS, the stage commit that follows reports those
 * placements (it does not place them again), and the reduce stage reads them from HDFS: the job
 * returns the built-in shuffle's result with no failed task and no stage retried. Before, the stage
 * commit's second copy failed on the moved local file, deleted the HDFS copy and reported the
 * missing local file: the reducers got NOT_FOUND and the map stage ran again.
 */
class SparkHdfsTierDecommissionIT {
  private static final String ADMIN_TOKEN = "an-operators-admin-token-1234";
  private static final Duration BOUND = Duration.ofSeconds(100);

  @TempDir Path tmp;
  private MiniDFSCluster dfs;

  @BeforeEach
  void startHdfs() throws Exception {
    Configuration conf = new Configuration();
    conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, tmp.resolve("hdfs").toString());
    dfs = new MiniDFSCluster.Builder(conf).numDataNodes(1).build();
    dfs.waitActive();
  }

  @AfterEach
  void stopHdfs() {
    if (dfs != null) {
      dfs.shutdown();
    }
  }

  private static List<String> sums(SparkSession spark) {
    JavaPairRDD<Integer, Long> sums =
        Jobs.jsc(spark)
            .parallelize(Jobs.range(120_000), 8)
            .mapToPair(i -> new Tuple2<>(i % 211, (long) i))
            .reduceByKey(Long::sum, 6);
    return Jobs.sorted(Jobs.strings(sums.collect()));
  }

  @Test
  void splitsADecommissionMovedToHdfsAreReadFromThereWithNoStageRetried() throws Exception {
    SparkSession builtin = SparkSessions.builtin("SparkHdfsTierDecommissionIT");
    List<String> expected;
    try {
      expected = sums(builtin);
    } finally {
      builtin.stop();
    }
    Map<String, String> tier =
        Map.of(
            "sluice.storage.policy", "local,hdfs",
            "sluice.storage.hdfs.dir", "hdfs://127.0.0.1:" + dfs.getNameNodePort() + "/sluice",
            "sluice.storage.hdfs.minSplitSize", "0");
    try (SluiceServers servers = new SluiceServers(tmp.resolve("servers"), 2, tier);
        AdminHttpServer admin =
            new AdminHttpServer(
                new MetricRegistry(),
                new AdminApi(
                    servers.all().get(1),
                    new AdminConf(SluiceConf.of(Map.of("sluice.admin.token", ADMIN_TOKEN)))),
                "127.0.0.1",
                0,
                Tls.fromConf(SluiceConf.empty()))) {
      ShuffleServer leaving = servers.all().get(1);
      SparkSession spark =
          SparkSessions.sluice("SparkHdfsTierDecommissionIT", servers.list(), Map.of());
      try {
        TaskFailureCounter observed = new TaskFailureCounter();
        DecommissionAfterFirstMap decommission = new DecommissionAfterFirstMap(admin.port());
        spark.sparkContext().addSparkListener(observed);
        spark.sparkContext().addSparkListener(decommission);
        List<String> result = BoundedQuery.run(spark, () -> sums(spark), BOUND);
        spark.sparkContext().listenerBus().waitUntilEmpty();

        assertThat(decommission.answer).as("the admin API's answer").hasSize(1);
        assertThat(decommission.answer.get(0)).contains("DECOMMISSIONING");
        assertThat(result).isEqualTo(expected);
        assertThat(observed.failures).as("failed tasks").isEmpty();
        assertThat(observed.retriedStages).as("stage attempts after the first").hasValue(0);
        assertThat(leaving.metrics().hdfsTierSplits().getCount())
            .as("splits the decommissioned server moved to HDFS")
            .isPositive();
        assertThat(leaving.metrics().hdfsTierFailures().getCount())
            .as("failed moves to HDFS")
            .isZero();
      } finally {
        spark.stop();
      }
    }
  }

  /** Decommissions the server through its admin API once the first map task ended. */
  private static final class DecommissionAfterFirstMap extends SparkListener {
    final List<String> answer = new CopyOnWriteArrayList<>();
    private final AtomicBoolean done = new AtomicBoolean();
    private final int adminPort;

    DecommissionAfterFirstMap(int adminPort) {
      this.adminPort = adminPort;
    }

    @Override
    public void onTaskEnd(SparkListenerTaskEnd end) {
      if (end.reason() == Success$.MODULE$
          && end.taskType().equals("ShuffleMapTask")
          && done.compareAndSet(false, true)) {
        try {
          HttpResponse<String> r =
              HttpClient.newHttpClient()
                  .send(
                      HttpRequest.newBuilder(
                              URI.create("http://127.0.0.1:" + adminPort + "/api/v1/decommission"))
                          .header("Authorization", "Bearer " + ADMIN_TOKEN)
                          .POST(HttpRequest.BodyPublishers.noBody())
                          .build(),
                      HttpResponse.BodyHandlers.ofString());
          answer.add(r.statusCode() + " " + r.body());
        } catch (Exception e) {
          answer.add("failed: " + e);
        }
      }
    }
  }
}
