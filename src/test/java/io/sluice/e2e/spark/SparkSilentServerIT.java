package io.sluice.e2e.spark;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.testutil.BlackHoleProxy;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.spark.Success$;
import org.apache.spark.TaskFailedReason;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerStageSubmitted;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import scala.Tuple2;

/**
 * A server goes silent in the middle of a Spark job's map stage (a black-holed host: its
 * connections stay open and nothing is answered), with sluice.replication.factor 2. Each push to it
 * used to wait sluice.network.requestTimeout (120s) and the retries as long again, so the map tasks
 * ran into sluice.push.timeout; now the pushers find the server silent after
 * sluice.network.silentAfter, its partitions move in one round, the commit leaves it out and the
 * readers use the other copies: the job returns the built-in shuffle's result with no failed task
 * and no stage retry, long before one request timeout.
 */
class SparkSilentServerIT {
  private static final Duration BOUND = Duration.ofSeconds(100);

  @TempDir Path tmp;

  private static List<String> sums(SparkSession spark) {
    JavaPairRDD<Integer, Long> sums =
        Jobs.jsc(spark)
            .parallelize(Jobs.range(80_000), 8)
            .mapToPair(i -> new Tuple2<>(i % 211, (long) i))
            .reduceByKey(Long::sum, 6);
    return Jobs.sorted(Jobs.strings(sums.collect()));
  }

  @Test
  void aServerThatGoesSilentMidMapStageFailsNoTaskWithReplicas() throws Exception {
    SparkSession builtin = SparkSessions.builtin("SparkSilentServerIT");
    List<String> expected;
    try {
      expected = sums(builtin);
    } finally {
      builtin.stop();
    }
    try (SluiceServers servers = new SluiceServers(tmp, 3)) {
      List<BlackHoleProxy> proxies = new ArrayList<>();
      StringBuilder list = new StringBuilder();
      try {
        for (int i = 0; i < 3; i++) {
          BlackHoleProxy p = new BlackHoleProxy("127.0.0.1", servers.all().get(i).port());
          proxies.add(p);
          list.append(i == 0 ? "" : ",").append("127.0.0.1:").append(p.port());
        }
        SparkSession spark =
            SparkSessions.sluice(
                "SparkSilentServerIT",
                list.toString(),
                Map.of(
                    "spark.sluice.replication.factor", "2",
                    "spark.sluice.network.silentAfter", "1s"));
        try {
          SilenceAfterFirstTask silence = new SilenceAfterFirstTask(proxies.get(2));
          spark.sparkContext().addSparkListener(silence);
          assertThat(BoundedQuery.run(spark, () -> sums(spark), BOUND)).isEqualTo(expected);
          spark.sparkContext().listenerBus().waitUntilEmpty();
          assertThat(silence.silenced.get()).as("server 2 went silent mid-job").isTrue();
          assertThat(silence.failedTasks).as("failed tasks").isEmpty();
          assertThat(silence.retriedStages).as("stage attempts after the first").isEmpty();
        } finally {
          spark.stop();
        }
      } finally {
        proxies.forEach(BlackHoleProxy::close);
      }
    }
  }

  /** Black-holes a server once the first map task ended; records failures and stage retries. */
  private static final class SilenceAfterFirstTask extends SparkListener {
    final AtomicBoolean silenced = new AtomicBoolean();
    final List<String> failedTasks = new CopyOnWriteArrayList<>();
    final List<String> retriedStages = new CopyOnWriteArrayList<>();
    private final BlackHoleProxy victim;

    SilenceAfterFirstTask(BlackHoleProxy victim) {
      this.victim = victim;
    }

    @Override
    public void onTaskEnd(SparkListenerTaskEnd end) {
      if (end.reason() != Success$.MODULE$) {
        failedTasks.add(
            "stage "
                + end.stageId()
                + "."
                + end.stageAttemptId()
                + " task "
                + end.taskInfo().index()
                + ": "
                + (end.reason() instanceof TaskFailedReason
                    ? ((TaskFailedReason) end.reason()).toErrorString()
                    : end.reason().toString()));
      } else if (silenced.compareAndSet(false, true)) {
        victim.blackHole();
      }
    }

    @Override
    public void onStageSubmitted(SparkListenerStageSubmitted submitted) {
      if (submitted.stageInfo().attemptNumber() > 0) {
        retriedStages.add(
            "stage " + submitted.stageInfo().stageId() + " " + submitted.stageInfo().name());
      }
    }
  }
}
