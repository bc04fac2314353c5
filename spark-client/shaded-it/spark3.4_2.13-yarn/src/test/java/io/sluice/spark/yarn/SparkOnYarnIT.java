package io.sluice.spark.yarn;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.apache.hadoop.yarn.server.nodemanager.containermanager.ContainerManagerImpl;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerExecutorAdded;
import org.apache.spark.scheduler.SparkListenerStageSubmitted;
import io.sluice.spark.jobs.SkewJoin;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Spark 3.4 application in YARN client mode on a MiniYARNCluster whose NodeManager runs the
 * Sluice aux service from its shaded jar and no Spark external shuffle service, with dynamic
 * allocation on and the Spark client's shaded jar as the only Sluice jar; the servers are found
 * through YARN (no {@code spark.sluice.servers}). An AQE skew join gives the built-in shuffle's
 * result, and executors released while a shuffle waits to be read take no map output with them:
 * the next read runs on new executors without rerunning a map. Spark 3.4 cannot be told that the
 * shuffle storage is reliable (3.5 can), so dynamic allocation runs with shuffle tracking, as the
 * README tells 3.3 and 3.4 users, and a short tracking timeout releases the executors.
 */
class SparkOnYarnIT {
  private static final String AUX_SERVICE = "sluice_shuffle";
  private static final long WAIT_MILLIS = TimeUnit.SECONDS.toMillis(120);

  @TempDir static Path tmp;
  private static MiniYARNCluster cluster;
  private static int port;

  @BeforeAll
  static void startCluster() throws Exception {
    Path jar = Paths.get(System.getProperty("sluice.auxServiceJar"));
    assertThat(jar).as("the aux service's shaded jar, copied by the build").isRegularFile();
    YarnConfiguration conf = new YarnConfiguration();
    conf.set(YarnConfiguration.NM_AUX_SERVICES, AUX_SERVICE);
    conf.set(
        "yarn.nodemanager.aux-services." + AUX_SERVICE + ".class",
        "io.sluice.yarn.SluiceShuffleService");
    conf.set("yarn.nodemanager.aux-services." + AUX_SERVICE + ".classpath", jar.toString());
    conf.set("sluice.server.port", "0");
    conf.set("sluice.memory.max", "64m");
    conf.set("sluice.network.ioThreads", "2");
    conf.set("sluice.commit.fsync", "false");
    conf.setInt(YarnConfiguration.NM_PMEM_MB, 6144);
    conf.setInt(YarnConfiguration.NM_VCORES, 4);
    conf.setBoolean(YarnConfiguration.NM_PMEM_CHECK_ENABLED, false);
    conf.setBoolean(YarnConfiguration.NM_VMEM_CHECK_ENABLED, false);
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_MB, 128);
    conf.setInt(YarnConfiguration.RM_AM_MAX_ATTEMPTS, 1);
    cluster = new MiniYARNCluster("sluice-spark-yarn", 1, 1, 1);
    cluster.init(conf);
    cluster.start();
    assertThat(cluster.waitForNodeManagersToConnect(WAIT_MILLIS)).isTrue();
    Map<String, ByteBuffer> meta =
        ((ContainerManagerImpl) cluster.getNodeManager(0).getNMContext().getContainerManager())
            .getAuxServiceMetaData();
    assertThat(meta.keySet()).as("no Spark external shuffle service").containsOnly(AUX_SERVICE);
    port = meta.get(AUX_SERVICE).getInt(0);
  }

  @AfterAll
  static void stopCluster() {
    if (cluster != null) {
      cluster.stop();
    }
  }

  @Test
  void aSkewJoinAndExecutorsReleasedBetweenStagesWithoutTheExternalShuffleService()
      throws Exception {
    Executors executors = new Executors();
    List<Row> joined;
    String plan;
    SparkSession spark = yarnSession();
    try {
      spark.sparkContext().addSparkListener(executors);
      Dataset<Row> join = SkewJoin.of(spark);
      joined = join.collectAsList();
      plan = join.queryExecution().executedPlan().toString();

      // AQE runs the map stage when the RDD is made; each count reads it
      JavaRDD<Row> shuffled =
          spark
              .range(0, 100_000, 1, 4)
              .selectExpr("id % 100 AS k", "id AS v")
              .repartition(6, functions.col("k"))
              .javaRDD();
      assertThat(shuffled.count()).isEqualTo(100_000);
      await(() -> liveExecutors(spark) == 0, "every executor released");
      int added = executors.added.get();
      int stages = executors.stagesSubmitted.get();
      assertThat(shuffled.count()).isEqualTo(100_000);
      assertThat(executors.added.get()).as("a new executor read the shuffle").isGreaterThan(added);
      assertThat(executors.stagesSubmitted.get() - stages)
          .as("the read ran alone: no map stage reran")
          .isEqualTo(1);
    } finally {
      spark.stop();
    }
    assertThat(plan).as("the final plan splits the skewed partition:\n%s", plan).contains("skew=true");

    SparkSession builtin =
        SparkSession.builder()
            .appName("yarn-skew-join-builtin")
            .master("local[2]")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.adaptive.enabled", "true")
            .getOrCreate();
    try {
      assertThat(joined).isEqualTo(SkewJoin.of(builtin).collectAsList());
    } finally {
      builtin.stop();
    }
  }

  /**
   * Client mode against the MiniYARNCluster: its configuration as {@code spark.hadoop.*}, every jar
   * of this JVM's class path (Spark, Hadoop, the Sluice client jar) as {@code local:} jars of the
   * containers, dynamic allocation without the external shuffle service, with shuffle tracking.
   */
  private static SparkSession yarnSession() throws Exception {
    String java = System.getProperty("java.home");
    SparkSession.Builder b =
        SparkSession.builder()
            .appName("sluice-on-yarn")
            .master("yarn")
            .config("spark.submit.deployMode", "client")
            .config("spark.ui.enabled", "false")
            .config("spark.driver.host", "localhost")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.yarn.jars", localJars())
            .config("spark.yarn.stagingDir", Files.createDirectories(tmp.resolve("staging")).toUri().toString())
            .config("spark.yarn.am.memory", "512m")
            .config("spark.executor.memory", "512m")
            .config("spark.executor.cores", "1")
            .config("spark.yarn.appMasterEnv.JAVA_HOME", java)
            .config("spark.executorEnv.JAVA_HOME", java)
            .config("spark.shuffle.manager", "org.apache.spark.shuffle.sluice.SluiceShuffleManager")
            .config(
                "spark.shuffle.sort.io.plugin.class",
                "org.apache.spark.shuffle.sluice.SluiceShuffleDataIO")
            .config("spark.sluice.server.port", Integer.toString(port))
            .config("spark.sluice.fallback", "never")
            .config("spark.shuffle.service.enabled", "false")
            .config("spark.dynamicAllocation.enabled", "true")
            .config("spark.dynamicAllocation.shuffleTracking.enabled", "true")
            .config("spark.dynamicAllocation.shuffleTracking.timeout", "2s")
            .config("spark.dynamicAllocation.minExecutors", "0")
            .config("spark.dynamicAllocation.initialExecutors", "1")
            .config("spark.dynamicAllocation.maxExecutors", "2")
            .config("spark.dynamicAllocation.executorIdleTimeout", "2s")
            .config("spark.dynamicAllocation.schedulerBacklogTimeout", "1s")
            .config("spark.sql.adaptive.enabled", "true")
            .config("spark.locality.wait", "0s");
    for (Map.Entry<String, String> e : cluster.getConfig()) {
      b = b.config("spark.hadoop." + e.getKey(), e.getValue());
    }
    return b.getOrCreate();
  }

  /** {@code spark.yarn.jars}: every jar on this JVM's class path, as present on the node. */
  private static String localJars() {
    return Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
        .filter(p -> p.endsWith(".jar"))
        .map(p -> "local:" + p)
        .collect(Collectors.joining(","));
  }


  private static void await(BooleanSupplier condition, String what) throws InterruptedException {
    long deadline = System.currentTimeMillis() + WAIT_MILLIS;
    while (!condition.getAsBoolean()) {
      assertThat(System.currentTimeMillis()).as("waiting for %s", what).isLessThan(deadline);
      Thread.sleep(100);
    }
  }

  /** The application's executors now, without the driver. */
  private static int liveExecutors(SparkSession spark) {
    return spark.sparkContext().statusTracker().getExecutorInfos().length - 1;
  }

  /** Executors added and stages submitted, as the driver's listener bus tells. */
  private static final class Executors extends SparkListener {
    final AtomicInteger added = new AtomicInteger();
    final AtomicInteger stagesSubmitted = new AtomicInteger();

    @Override
    public void onExecutorAdded(SparkListenerExecutorAdded event) {
      added.incrementAndGet();
    }

    @Override
    public void onStageSubmitted(SparkListenerStageSubmitted event) {
      stagesSubmitted.incrementAndGet();
    }
  }
}
