package io.sluice.e2e.spark;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.client.coordinator.ShuffleCoordinator;
import io.sluice.protocol.proto.CommittedSplit;
import io.sluice.server.ShuffleServer;
import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.RemoteIterator;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.shuffle.sluice.SluiceShuffleManager;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import scala.Tuple2;

/**
 * The distributed storage tier on HDFS (a MiniDFSCluster in the test JVM) under real Spark jobs:
 * servers with {@code sluice.storage.policy=local,hdfs} move every committed split to HDFS and keep
 * no local file; the executors read the splits from HDFS; with every server stopped after the map
 * stage's commit the reduce stage still reads everything, with no stage retry and no failed task;
 * the application's end deletes its HDFS files; AQE's skew splits and local shuffle reader read
 * their map ranges from HDFS too. Results equal the built-in shuffle's.
 */
class SparkHdfsTierIT {
  private static final Duration BOUND = Duration.ofSeconds(150);

  @TempDir static Path tmp;
  private static MiniDFSCluster dfs;
  private static List<String> expected;

  @BeforeAll
  static void startHdfsAndTheReference() throws Exception {
    Configuration conf = new Configuration();
    conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, tmp.resolve("hdfs").toString());
    dfs = new MiniDFSCluster.Builder(conf).numDataNodes(1).build();
    dfs.waitActive();
    SparkSession builtin = SparkSessions.builtin("SparkHdfsTierIT");
    try {
      expected = sums(builtin, pairs(builtin));
    } finally {
      builtin.stop();
    }
  }

  @AfterAll
  static void stopHdfs() {
    if (dfs != null) {
      dfs.shutdown();
    }
  }

  private static String tierDir() {
    return "hdfs://127.0.0.1:" + dfs.getNameNodePort() + "/sluice";
  }

  private static Map<String, String> tier() {
    return Map.of(
        "sluice.storage.policy", "local,hdfs",
        "sluice.storage.hdfs.dir", tierDir(),
        "sluice.storage.hdfs.minSplitSize", "0");
  }

  private static JavaPairRDD<Integer, Long> pairs(SparkSession spark) {
    return Jobs.jsc(spark)
        .parallelize(Jobs.range(200_000), 4)
        .mapToPair(i -> new Tuple2<>(i % 1013, (long) i * 7 + 3));
  }

  private static List<String> sums(SparkSession spark, JavaPairRDD<Integer, Long> pairs) {
    return Jobs.sorted(Jobs.strings(pairs.reduceByKey(Long::sum, 6).collect()));
  }

  /** The application's files in the tier (a test whose servers were stopped leaves its own). */
  private static List<String> hdfsFiles(String appId) throws IOException {
    FileSystem fs = dfs.getFileSystem();
    List<String> files = new ArrayList<>();
    org.apache.hadoop.fs.Path root = new org.apache.hadoop.fs.Path("/sluice");
    if (!fs.exists(root)) {
      return files;
    }
    RemoteIterator<LocatedFileStatus> it = fs.listFiles(root, true);
    while (it.hasNext()) {
      String file = it.next().getPath().toString();
      if (file.contains("/" + appId + "/")) {
        files.add(file);
      }
    }
    return files;
  }

  private static List<Path> localSplitFiles() throws IOException {
    try (Stream<Path> files = Files.walk(tmp.resolve("servers"))) {
      return files
          .filter(f -> f.getFileName().toString().endsWith(".data"))
          .collect(Collectors.toList());
    }
  }

  @Test
  void splitsGoToHdfsAreReadFromThereAndGoWithTheApplication() throws Exception {
    try (SluiceServers servers = new SluiceServers(tmp.resolve("servers"), 2, tier())) {
      SparkSession spark = SparkSessions.sluice("SparkHdfsTierIT", servers.list(), Map.of());
      String appId = spark.sparkContext().applicationId();
      try {
        assertThat(BoundedQuery.run(spark, () -> sums(spark, pairs(spark)), BOUND))
            .isEqualTo(expected);
        long moved = 0;
        for (ShuffleServer s : servers.all()) {
          moved += s.metrics().hdfsTierSplits().getCount();
        }
        assertThat(moved).as("splits moved to HDFS").isGreaterThanOrEqualTo(6);
        assertThat(hdfsFiles(appId)).as("split files in HDFS").hasSize((int) moved);
        assertThat(localSplitFiles()).as("split files left on local disks").isEmpty();
      } finally {
        spark.stop();
      }
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (!hdfsFiles(appId).isEmpty() && System.nanoTime() < deadline) {
        Thread.sleep(50);
      }
      assertThat(hdfsFiles(appId)).as("HDFS files after the application ended").isEmpty();
    }
  }

  @Test
  void aqeSkewSplitsAndTheLocalShuffleReaderReadMapRangesFromHdfs() throws Exception {
    SparkSession builtin = SparkSessions.builtin("SparkHdfsTierIT-sql");
    SqlJobs.Outcome skew;
    SqlJobs.Outcome local;
    try {
      skew = SqlJobs.skewJoin(builtin);
      local = SqlJobs.localShuffleReader(builtin);
    } finally {
      builtin.stop();
    }
    try (SluiceServers servers = new SluiceServers(tmp.resolve("servers-sql"), 2, tier())) {
      SparkSession spark = SparkSessions.sluice("SparkHdfsTierIT-sql", servers.list(), Map.of());
      try {
        SqlJobs.Outcome skewed = BoundedQuery.run(spark, () -> SqlJobs.skewJoin(spark), BOUND);
        assertThat(skewed.plan).contains("skew=true").contains("skewed");
        assertThat(skewed.rows).isEqualTo(skew.rows);
        SqlJobs.Outcome perMapper =
            BoundedQuery.run(spark, () -> SqlJobs.localShuffleReader(spark), BOUND);
        assertThat(perMapper.plan).contains("AQEShuffleRead local");
        assertThat(perMapper.rows).isEqualTo(local.rows);
        // every read went to HDFS: the servers served no map range and sorted nothing
        assertThat(servers.indexedRangeReads()).isZero();
        assertThat(servers.sorts()).isZero();
        long moved = 0;
        for (ShuffleServer s : servers.all()) {
          moved += s.metrics().hdfsTierSplits().getCount();
        }
        assertThat(moved).isPositive();
      } finally {
        spark.stop();
      }
    }
  }

  @Test
  void withEveryServerStoppedAfterTheCommitTheReduceStageReadsEverythingFromHdfs()
      throws Exception {
    SluiceServers servers = new SluiceServers(tmp.resolve("servers-stopped"), 2, tier());
    SparkSession spark =
        SparkSessions.sluice(
            "SparkHdfsTierIT-stopped",
            servers.list(),
            Map.of(
                "spark.sluice.network.connectTimeout", "2s",
                "spark.sluice.network.requestTimeout", "20s"));
    try {
      TaskFailureCounter observed = new TaskFailureCounter();
      spark.sparkContext().addSparkListener(observed);
      JavaPairRDD<Integer, Long> shuffled =
          pairs(spark).partitionBy(new org.apache.spark.HashPartitioner(6));
      ShuffleDependency<?, ?, ?> dependency =
          (ShuffleDependency<?, ?, ?>) shuffled.rdd().dependencies().head();
      BoundedQuery.run(spark, () -> spark.sparkContext().submitMapStage(dependency).get(), BOUND);
      ShuffleCoordinator coordinator = coordinator(spark);
      List<CommittedSplit> committed =
          coordinator.commit(dependency.shuffleId()).get(60, TimeUnit.SECONDS).splits();
      assertThat(committed).isNotEmpty().allMatch(s -> s.getRemotePath().startsWith(tierDir()));
      servers.close(); // every server gone: only HDFS holds the shuffle

      List<String> result =
          BoundedQuery.run(
              spark,
              () -> Jobs.sorted(Jobs.strings(shuffled.reduceByKey(Long::sum).collect())),
              BOUND);
      spark.sparkContext().listenerBus().waitUntilEmpty();
      assertThat(result).isEqualTo(expected);
      assertThat(observed.failures).as("failed tasks").isEmpty();
      assertThat(observed.retriedStages).as("stage attempts after the first").hasValue(0);
    } finally {
      spark.stop();
      servers.close();
    }
  }

  private static ShuffleCoordinator coordinator(SparkSession spark) throws Exception {
    SluiceShuffleManager manager =
        (SluiceShuffleManager) spark.sparkContext().env().shuffleManager();
    Field field = SluiceShuffleManager.class.getDeclaredField("coordinator");
    field.setAccessible(true);
    return (ShuffleCoordinator) field.get(manager);
  }
}
