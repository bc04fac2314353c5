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
import org.apache.spark.Success$;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerStageSubmitted;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import scala.Tuple2;

/**
 * A server decommissioned through its admin API in the middle of a Spark job's map stage (a rolling
 * upgrade taking it out): the open splits it holds are committed, the pushes that follow move to
 * the other server, no task fails and no stage is retried, the job returns the built-in shuffle's
 * result, the next job's shuffle is placed on the other server only, and the server reports itself
 * drained once the application ends.
 */
class SparkDecommissionIT {
  private static final String ADMIN_TOKEN = "an-operators-admin-token-1234";

  private static final Duration BOUND = Duration.ofSeconds(100);

  @TempDir Path tmp;

  private static List<String> sums(SparkSession spark) {
    JavaPairRDD<Integer, Long> sums =
        Jobs.jsc(spark)
            .parallelize(Jobs.range(120_000), 8)
            .mapToPair(i -> new Tuple2<>(i % 211, (long) i))
            .reduceByKey(Long::sum, 6);
    return Jobs.sorted(Jobs.strings(sums.collect()));
  }

  @Test
  void aServerDecommissionedMidJobFailsNoTaskAndDrainsWhenTheApplicationEnds() throws Exception {
    SparkSession builtin = SparkSessions.builtin("SparkDecommissionIT");
    List<String> expected;
    try {
      expected = sums(builtin);
    } finally {
      builtin.stop();
    }
    try (SluiceServers servers = new SluiceServers(tmp, 2);
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
      SparkSession spark = SparkSessions.sluice("SparkDecommissionIT", servers.list(), Map.of());
      String appId = spark.sparkContext().applicationId();
      try {
        DecommissionAfterFirstMap decommission = new DecommissionAfterFirstMap(admin.port());
        spark.sparkContext().addSparkListener(decommission);
        assertThat(BoundedQuery.run(spark, () -> sums(spark), BOUND)).isEqualTo(expected);
        spark.sparkContext().listenerBus().waitUntilEmpty();
        assertThat(decommission.answer).as("the admin API's answer").hasSize(1);
        assertThat(decommission.answer.get(0)).contains("DECOMMISSIONING");
        assertThat(decommission.failedTasks).as("failed tasks").isEmpty();
        assertThat(decommission.retriedStages).as("stage attempts after the first").isEmpty();
        assertThat(leaving.lifecycle())
            .as("the application still holds data on it")
            .isEqualTo(ShuffleServer.Lifecycle.DECOMMISSIONING);
        assertThat(leaving.registry().contains(appId, 0)).isTrue();

        // a later job's shuffle (shuffle 1) goes to the server that stays only, same result
        assertThat(BoundedQuery.run(spark, () -> sums(spark), BOUND)).isEqualTo(expected);
        assertThat(servers.all().get(0).registry().contains(appId, 1)).isTrue();
        assertThat(leaving.registry().contains(appId, 1))
            .as("the later shuffle on the decommissioned server")
            .isFalse();
        assertThat(decommission.failedTasks).as("failed tasks").isEmpty();
      } finally {
        spark.stop();
      }
      assertThat(leaving.registry().application(appId)).isNull();
      assertThat(leaving.lifecycle()).isEqualTo(ShuffleServer.Lifecycle.DRAINED);
    }
  }

  /** Decommissions the server through its admin API once the first map task ended. */
  private static final class DecommissionAfterFirstMap extends SparkListener {
    final List<String> answer = new CopyOnWriteArrayList<>();
    final List<String> failedTasks = new CopyOnWriteArrayList<>();
    final List<String> retriedStages = new CopyOnWriteArrayList<>();
    private final AtomicBoolean done = new AtomicBoolean();
    private final int adminPort;

    DecommissionAfterFirstMap(int adminPort) {
      this.adminPort = adminPort;
    }

    @Override
    public void onTaskEnd(SparkListenerTaskEnd end) {
      if (end.reason() != Success$.MODULE$) {
        failedTasks.add("stage " + end.stageId() + " task " + end.taskInfo().index());
      } else if (end.taskType().equals("ShuffleMapTask") && done.compareAndSet(false, true)) {
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

    @Override
    public void onStageSubmitted(SparkListenerStageSubmitted submitted) {
      if (submitted.stageInfo().attemptNumber() > 0) {
        retriedStages.add("stage " + submitted.stageInfo().stageId());
      }
    }
  }
}
