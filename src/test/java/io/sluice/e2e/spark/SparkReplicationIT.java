package io.sluice.e2e.spark;

import static org.assertj.core.api.Assertions.assertThat;

import com.codahale.metrics.Counting;
import io.sluice.client.ClientContext;
import io.sluice.client.PartitionLocations;
import io.sluice.client.coordinator.ShuffleCommit;
import io.sluice.client.coordinator.ShuffleCoordinator;
import io.sluice.e2e.DaemonCluster;
import io.sluice.protocol.proto.ServerAddress;
import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.lang.reflect.Field;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.spark.HashPartitioner;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkEnv;
import org.apache.spark.Success$;
import org.apache.spark.TaskContext;
import org.apache.spark.TaskFailedReason;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.metrics.source.Source;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerStageSubmitted;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.shuffle.sluice.SluiceShuffleManager;
import org.apache.spark.sql.SparkSession;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import scala.Tuple2;

/**
 * Replication (issue 14) on a real Spark job: three real daemons (started through {@code
 * bin/shuffle-daemon}), Spark in local-cluster mode (two executor JVMs, as {@link SparkSessions}
 * runs every Sluice suite), and {@code kill -9} of one daemon (a) in the middle of the map stage,
 * (b) after the commit, before anything is read, (c) in the middle of the reduce stage.
 *
 * <p>With {@code spark.sluice.replication.factor=2} the job returns what it returns on Spark's
 * built-in shuffle, Spark submits no stage attempt after the first, and no task fails: pushes move
 * off the dead server, the commit keeps the other copy of its splits, and readers fall back to the
 * other copy. With factor 1 a kill in the reduce stage gives the same result through Spark's reruns
 * (fetch failures, a map stage attempt after the first), as before replication.
 *
 * <p>The daemon killed holds the copy of reduce partition 0 that its reader reads first (see {@link
 * #firstCopyOfPartition0}), so it holds data of the shuffle (with three servers and two copies
 * every one holds copies of two thirds of the partitions), and in (c) the reader of partition 0 is
 * reading from it when it dies; readers' fail-overs are checked in the executors' logs. Kills are
 * deterministic, never timed; tasks find the daemon's pid in a file the driver writes once it knows
 * the placement (executors are other JVMs). (a) The last map kills it when it has written half its
 * records: some of its batches of every partition are pushed, and an earlier map has ended with
 * data on it (the last map starts in the slot an earlier one freed). (b) The test runs the map
 * stage alone ({@code submitMapStage}), waits for the coordinator's commit and kills it, then runs
 * the reduce stage on the registered map outputs. (c) Reduce partition 0 kills it after reading a
 * tenth of its records (the daemons serve 16k chunks, so most of the split is still on the server).
 * The killer returns once the process is dead. Kills happen only in the first attempt of a task in
 * the first attempt of its stage.
 *
 * <p>Every test has its own daemons and session (a server list is fixed for a session's life):
 * about 12 s each on two cores.
 *
 * <p>The reduce side is a {@code partitionBy} (no aggregator, no ordering), so the reduce task's
 * iterator reads lazily; the task sums each key's values itself.
 */
class SparkReplicationIT {
  private static final int RECORDS = 120_000;
  private static final int MAPS = 4;
  private static final int PARTITIONS = 6;
  private static final int KEYS = 101;
  private static final Duration BOUND = Duration.ofSeconds(150);

  @TempDir static Path tmp;
  private static List<String> expected;

  /** Where the daemon dies. */
  enum KillPoint {
    MID_MAP,
    AFTER_COMMIT,
    MID_REDUCE
  }

  @BeforeAll
  static void builtinResult() {
    SparkSession builtin = SparkSessions.builtin("SparkReplicationIT");
    try {
      expected = sums(pairs(builtin, Kill.NONE), Kill.NONE);
    } finally {
      builtin.stop();
    }
    assertThat(expected).hasSize(KEYS);
  }

  @ParameterizedTest(name = "kill -9 {0}")
  @EnumSource(KillPoint.class)
  void withReplicationFactor2NoStageIsRetriedAndNoTaskFails(KillPoint point) throws Exception {
    Run run = run(point, 2);
    SoftAssertions soft = new SoftAssertions();
    soft.assertThat(run.result).as("result with the daemon killed %s", point).isEqualTo(expected);
    soft.assertThat(run.lostPartitions)
        .as("partitions the commit of the shuffle declared lost: %s", run.lostReason)
        .isEmpty();
    soft.assertThat(run.observed.retriedStages).as("stage attempts after the first").isEmpty();
    soft.assertThat(run.observed.failedTasks).as("failed tasks").isEmpty();
    if (point == KillPoint.MID_MAP) {
      soft.assertThat(run.partitionsMoved)
          .as("partitions the coordinator moved off the killed daemon (driver metrics)")
          .isPositive();
    }
    if (point == KillPoint.MID_REDUCE) {
      // partition 0's reader was reading the killed daemon's copy and went on with the other one
      soft.assertThat(run.failovers)
          .as("readers that failed over from the killed daemon (executor logs)")
          .anyMatch(line -> line.contains(" partition 0 epoch 0 on ") && line.contains("chunk"));
    } else if (point == KillPoint.AFTER_COMMIT) {
      soft.assertThat(run.failovers)
          .as("readers that failed over from the killed daemon (executor logs)")
          .isNotEmpty();
    }
    soft.assertAll();
  }

  /**
   * The contrast, for one kill point (the reduce stage's, where Spark's fetch-failure path reruns
   * maps); the others cost a job each and show the same.
   */
  @ParameterizedTest(name = "kill -9 {0}")
  @EnumSource(value = KillPoint.class, names = "MID_REDUCE")
  void withReplicationFactor1TheResultIsRightThroughReruns(KillPoint point) throws Exception {
    Run run = run(point, 1);
    assertThat(run.result).as("result with the daemon killed %s", point).isEqualTo(expected);
    // the kill lost data: Spark reran maps (what factor 2 avoids)
    assertThat(run.observed.retriedStages).as("stage attempts after the first").isNotEmpty();
  }

  /** What one job on Sluice returned and what Spark reported while it ran. */
  private static final class Run {
    List<String> result;
    String lostPartitions;
    String lostReason;
    Observed observed;
    // executor log lines of readers that failed over from the killed daemon's copy
    List<String> failovers;
    // partitions the driver's coordinator moved, from its Spark metrics source "sluice"
    long partitionsMoved;
  }

  private Run run(KillPoint point, int factor) throws Exception {
    String name = "SparkReplicationIT-" + point + "-factor" + factor;
    try (DaemonCluster daemons =
        new DaemonCluster(
            tmp.resolve(name),
            3,
            // small chunks: a reader holds little of a split ahead of what it decoded
            Map.of("sluice.read.chunkSize", "16k"))) {
      SparkSession spark =
          SparkSessions.sluice(
              name,
              daemons.list(),
              Map.of(
                  "spark.sluice.replication.factor",
                  Integer.toString(factor),
                  // a killed daemon's sockets are reset at once; these bound anything else
                  "spark.sluice.network.connectTimeout",
                  "2s",
                  "spark.sluice.network.requestTimeout",
                  "30s",
                  "spark.sluice.push.timeout",
                  "60s",
                  "spark.sluice.coordinator.commitTimeout",
                  "60s"));
      try {
        Observed observed = new Observed();
        spark.sparkContext().addSparkListener(observed);

        // the placement is made when the dependency is created, before any task runs; the
        // tasks read the victim's pid from a file the driver writes once it knows the placement
        Path pidFile = tmp.resolve(name + ".victim");
        Kill kill = new Kill(point, pidFile.toString());
        JavaPairRDD<Integer, Long> shuffled = pairs(spark, kill);
        ShuffleDependency<?, ?, ?> dependency =
            (ShuffleDependency<?, ?, ?>) shuffled.rdd().dependencies().head();
        int shuffleId = dependency.shuffleId();
        ShuffleCoordinator coordinator = coordinator(spark);
        int victim = daemons.indexOfPort(firstCopyOfPartition0(coordinator, shuffleId).getPort());
        Files.writeString(pidFile, Long.toString(daemons.pid(victim)));

        if (point == KillPoint.AFTER_COMMIT) {
          ShuffleDependency<?, ?, ?> mapStage = dependency;
          BoundedQuery.run(spark, () -> spark.sparkContext().submitMapStage(mapStage).get(), BOUND);
          // the commit the first reducer would start (in Spark the readers start it)
          coordinator.commit(shuffleId).get(60, TimeUnit.SECONDS);
          kill(pidFile.toString());
        }

        JavaPairRDD<Integer, Long> input = shuffled;
        Run run = new Run();
        try {
          run.result = BoundedQuery.run(spark, () -> sums(input, kill), BOUND);
        } catch (Exception e) {
          throw new AssertionError(
              "the job failed with the daemon killed " + point + "; daemons:\n" + daemons.logs(),
              e);
        }
        spark.sparkContext().listenerBus().waitUntilEmpty();
        run.observed = observed;

        assertThat(Files.exists(Path.of(kill.killedMarker())))
            .as("daemon %d (port %d) was killed %s", victim, daemons.port(victim), point)
            .isTrue();
        assertThat(daemons.isAlive(victim))
            .as(
                "daemon %d (port %d) is alive after it was killed %s",
                victim, daemons.port(victim), point)
            .isFalse();
        String victimAddress = "127.0.0.1:" + daemons.port(victim);
        run.failovers =
            SparkSessions.executorLogLines(
                spark.sparkContext().applicationId(),
                line -> line.contains(" on " + victimAddress + " from its other copy"));
        run.partitionsMoved = driverMetric("sluice.client.partitionsMoved");
        ShuffleCommit commit = coordinator.committed(shuffleId).get(60, TimeUnit.SECONDS);
        run.lostPartitions =
            commit.lostPartitions().isEmpty() ? "" : commit.lostPartitions().toString();
        run.lostReason = commit.lostReason();
        return run;
      } finally {
        spark.stop();
      }
    }
  }

  /** A count of the driver's Spark metrics source {@code sluice}. */
  private static long driverMetric(String name) {
    scala.collection.Seq<Source> sources =
        SparkEnv.get().metricsSystem().getSourcesByName("sluice");
    assertThat(sources.size()).as("the driver's Spark metrics sources named sluice").isEqualTo(1);
    return ((Counting) sources.head().metricRegistry().getMetrics().get(name)).getCount();
  }

  /**
   * The server holding the copy of partition 0 that a reader of the whole partition reads first, by
   * PartitionReader's rule (the copies ordered by "host:port", rotated by the partition: by 0
   * here). With factor 1, the partition's one server. The kill mid-reduce checks in the executors'
   * logs that the reader did read it and failed over mid-stream, so a change of the rule fails the
   * test instead of making it test less.
   */
  private static ServerAddress firstCopyOfPartition0(
      ShuffleCoordinator coordinator, int shuffleId) {
    PartitionLocations locations = coordinator.locations(shuffleId);
    ServerAddress primary = locations.server(0);
    ServerAddress replica = locations.replica(0);
    if (replica == null) {
      return primary;
    }
    return ClientContext.format(primary).compareTo(ClientContext.format(replica)) <= 0
        ? primary
        : replica;
  }

  /**
   * The driver's Sluice coordinator, which holds the shuffle's placement (started with the first
   * shuffle; the test JVM is the driver).
   */
  private static ShuffleCoordinator coordinator(SparkSession spark) throws Exception {
    SluiceShuffleManager manager =
        (SluiceShuffleManager) spark.sparkContext().env().shuffleManager();
    Field field = SluiceShuffleManager.class.getDeclaredField("coordinator");
    field.setAccessible(true);
    ShuffleCoordinator coordinator = (ShuffleCoordinator) field.get(manager);
    assertThat(coordinator).as("the coordinator starts with the first shuffle").isNotNull();
    return coordinator;
  }

  /** The map stage: (key, value) pairs hash-partitioned into {@link #PARTITIONS}. */
  private static JavaPairRDD<Integer, Long> pairs(SparkSession spark, Kill kill) {
    return Jobs.jsc(spark)
        .parallelize(Jobs.range(RECORDS), MAPS)
        .mapPartitions(kill::duringMap)
        .mapToPair(i -> new Tuple2<>(i % KEYS, (long) i))
        .partitionBy(new HashPartitioner(PARTITIONS));
  }

  /** The reduce stage: each key's count and sum, computed by the task from its lazy input. */
  private static List<String> sums(JavaPairRDD<Integer, Long> shuffled, Kill kill) {
    return Jobs.sorted(
        shuffled
            .mapPartitionsWithIndex(
                (index, it) -> {
                  Iterator<Tuple2<Integer, Long>> records = kill.duringReduce(index, it);
                  TreeMap<Integer, long[]> byKey = new TreeMap<>();
                  while (records.hasNext()) {
                    Tuple2<Integer, Long> r = records.next();
                    long[] countAndSum = byKey.computeIfAbsent(r._1(), k -> new long[2]);
                    countAndSum[0]++;
                    countAndSum[1] += r._2();
                  }
                  List<String> out = new ArrayList<>();
                  byKey.forEach((k, v) -> out.add(k + ": " + v[0] + " values, sum " + v[1]));
                  return out.iterator();
                },
                false)
            .collect());
  }

  /**
   * Kills the daemon whose pid the driver wrote to {@link #pidFile} at {@link #point}, from inside
   * a task.
   */
  private static final class Kill implements Serializable {
    private static final long serialVersionUID = 1L;
    static final Kill NONE = new Kill(null, null);

    /** The last map: it starts when an earlier one has ended, with data on the victim. */
    private static final int KILLING_MAP = MAPS - 1;

    private static final int KILLING_REDUCE = 0;

    private final KillPoint point;
    private final String pidFile;

    Kill(KillPoint point, String pidFile) {
      this.point = point;
      this.pidFile = pidFile;
    }

    /** Written once the victim is gone. */
    String killedMarker() {
      return pidFile + ".killed";
    }

    private static boolean firstAttempt() {
      TaskContext task = TaskContext.get();
      return task.attemptNumber() == 0 && task.stageAttemptNumber() == 0;
    }

    Iterator<Integer> duringMap(Iterator<Integer> records) {
      TaskContext task = TaskContext.get();
      if (point != KillPoint.MID_MAP || task.partitionId() != KILLING_MAP || !firstAttempt()) {
        return records;
      }
      return new KillAfter<>(records, RECORDS / MAPS / 2, pidFile);
    }

    <T> Iterator<T> duringReduce(int partition, Iterator<T> records) {
      if (point != KillPoint.MID_REDUCE || partition != KILLING_REDUCE || !firstAttempt()) {
        return records;
      }
      // partition 0 holds the 17 keys that are multiples of 6: about RECORDS * 17 / KEYS records
      return new KillAfter<>(records, RECORDS * 17 / KEYS / 10, pidFile);
    }
  }

  /** Yields {@code records}, killing the victim before the record after the first n. */
  private static final class KillAfter<T> implements Iterator<T> {
    private final Iterator<T> records;
    private final String pidFile;
    private long left;

    KillAfter(Iterator<T> records, long n, String pidFile) {
      this.records = records;
      this.left = n;
      this.pidFile = pidFile;
    }

    @Override
    public boolean hasNext() {
      return records.hasNext();
    }

    @Override
    public T next() {
      if (left-- == 0) {
        kill(pidFile);
      }
      return records.next();
    }
  }

  /**
   * kill -9 of the daemon whose pid is in {@code pidFile}; writes {@code pidFile + ".killed"} and
   * returns once the process is dead.
   */
  static void kill(String pidFile) {
    try {
      long pid = Long.parseLong(Files.readString(Path.of(pidFile)).trim());
      ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
      Files.writeString(Path.of(pidFile + ".killed"), "killed " + pid + "\n");
      DaemonCluster.kill9(pid);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot kill the daemon in " + pidFile, e);
    }
  }

  /** Failed tasks and stage attempts after the first, as Spark reported them. */
  private static final class Observed extends SparkListener {
    final List<String> failedTasks = new CopyOnWriteArrayList<>();
    final List<String> retriedStages = new CopyOnWriteArrayList<>();

    @Override
    public void onTaskEnd(SparkListenerTaskEnd end) {
      if (end.reason() == Success$.MODULE$) {
        return;
      }
      String why =
          end.reason() instanceof TaskFailedReason
              ? ((TaskFailedReason) end.reason()).toErrorString()
              : end.reason().toString();
      failedTasks.add(
          "stage "
              + end.stageId()
              + "."
              + end.stageAttemptId()
              + " task "
              + end.taskInfo().index()
              + " attempt "
              + end.taskInfo().attemptNumber()
              + ": "
              + why);
    }

    @Override
    public void onStageSubmitted(SparkListenerStageSubmitted submitted) {
      if (submitted.stageInfo().attemptNumber() > 0) {
        retriedStages.add(
            "stage "
                + submitted.stageInfo().stageId()
                + " attempt "
                + submitted.stageInfo().attemptNumber()
                + " ("
                + submitted.stageInfo().name()
                + ")");
      }
    }
  }
}
