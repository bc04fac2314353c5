package io.sluice.e2e.spark;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.server.ShuffleServer;
import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.spark.HashPartitioner;
import org.apache.spark.Success$;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.function.MapFunction;
import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import scala.Tuple2;

/**
 * Sluice servers restarted gracefully under a running Spark job that keeps one copy of its data, as
 * {@code shuffle-daemon restart} and a NodeManager restart do: the server stops (answering new
 * pushes HARD_SPLIT and committing what it accepted), then starts again on the same port and state
 * store. The job must not notice: no failed task, no fetch failure, no stage attempt after the
 * first, and the built-in shuffle's result. It holds for a lone server restarted in the map stage
 * and in the reduce stage, and for each of three servers restarted one after another during one
 * job.
 *
 * <p>No timing is guessed: every task but the first of the stage under test stops halfway through
 * its records (its first pushes acknowledged, or its first chunks read) until the restart begins,
 * which the first task's end starts; so the restart always lands in the middle of that stage.
 */
class SparkRestartIT {
  private static final Duration BOUND = Duration.ofSeconds(240);
  private static final int MAPS = 6;
  private static final int REDUCERS = 5;
  private static final int RECORDS = 180_000;

  /** How long a restarted server's port stays closed: a daemon's restart takes seconds. */
  private static final Duration DOWN = Duration.ofSeconds(3);

  @TempDir Path tmp;

  @Test
  void aLoneServerRestartedInTheMapStageCostsTheJobNothing() throws Exception {
    runWithRestarts(1, "ShuffleMapTask", List.of(0));
  }

  @Test
  void aLoneServerRestartedInTheReduceStageCostsTheJobNothing() throws Exception {
    runWithRestarts(1, "ResultTask", List.of(0));
  }

  @Test
  void threeServersRestartedOneAfterAnotherDuringOneJobCostItNothing() throws Exception {
    runWithRestarts(3, "ShuffleMapTask", List.of(0, 1, 2));
  }

  /** The reads of an AQE skew join (map-index ranges of the skewed partition) wait as well. */
  @Test
  void aLoneServerRestartedWhileAnAqeSkewJoinReadsCostsTheJobNothing() throws Exception {
    AtomicReference<String> plan = new AtomicReference<>();
    runWithRestarts(
        1,
        "ResultTask",
        List.of(0),
        (spark, mapMarker, reduceMarker) -> {
          Dataset<String> rows =
              SqlJobs.skewJoinFrame(spark)
                  .map((MapFunction<Row, String>) r -> r.toString(), Encoders.STRING())
                  .mapPartitions(
                      (MapPartitionsFunction<String, String>)
                          it -> new PauseHalfway<>(it, reduceMarker, 1),
                      Encoders.STRING());
          List<String> sorted = Jobs.sorted(rows.collectAsList());
          plan.set(rows.queryExecution().executedPlan().toString());
          return sorted;
        });
    assertThat(plan.get()).as("the plan read with the restart").contains("skew=true");
  }

  /** A job of the suite: its rows, pausing the map or reduce tasks at the marker when not null. */
  private interface Job {
    List<String> run(SparkSession spark, String mapMarker, String reduceMarker);
  }

  private void runWithRestarts(int servers, String stage, List<Integer> restarted)
      throws Exception {
    runWithRestarts(servers, stage, restarted, SparkRestartIT::job);
  }

  /**
   * Runs {@code job} on {@code servers} servers and restarts {@code restarted} (one after another)
   * once the first task of type {@code stage} ended; checks it against the built-in shuffle.
   */
  private void runWithRestarts(int servers, String stage, List<Integer> restarted, Job job)
      throws Exception {
    List<String> expected;
    SparkSession builtin = SparkSessions.builtin("SparkRestartIT");
    try {
      expected = job.run(builtin, null, null);
    } finally {
      builtin.stop();
    }
    String marker = tmp.resolve("restart-begun").toString();
    try (SluiceServers sluice = new SluiceServers(tmp.resolve("servers"), servers)) {
      SparkSession spark = SparkSessions.sluice("SparkRestartIT", sluice.list(), Map.of());
      try {
        TaskFailureCounter failures = new TaskFailureCounter();
        Restarter restarter = new Restarter(sluice, stage, restarted, Path.of(marker));
        spark.sparkContext().addSparkListener(failures);
        spark.sparkContext().addSparkListener(restarter);
        boolean inMaps = stage.equals("ShuffleMapTask");
        List<String> rows =
            BoundedQuery.run(
                spark, () -> job.run(spark, inMaps ? marker : null, inMaps ? null : marker), BOUND);
        spark.sparkContext().listenerBus().waitUntilEmpty();
        List<ShuffleServer> back = restarter.done.get(1, TimeUnit.MINUTES);

        assertThat(rows).isEqualTo(expected);
        assertThat(back).as("servers restarted").hasSize(restarted.size());
        assertThat(restarter.stageTasksEndedBeforeRestart.get())
            .as("tasks of the stage that ended before the restart: it landed mid-stage")
            .isLessThan(inMaps ? MAPS : REDUCERS);
        assertThat(back.get(0).recovery().splits())
            .as("committed splits the first restarted server serves again")
            .isPositive();
        assertThat(failures.failures).as("failed tasks").isEmpty();
        assertThat(failures.fetchFailures.get()).as("fetch failures").isZero();
        assertThat(failures.retriedStages.get()).as("stage attempts after the first").isZero();
        assertThat(restarter.errors).isEmpty();
      } finally {
        spark.stop();
      }
    }
  }

  /**
   * Per reduce partition, its record count and an order-independent checksum: records move between
   * map attempts' pushes and splits, so only what each reducer saw counts. {@code mapMarker} and
   * {@code reduceMarker}: when not null, every task of that stage but partition 0's stops halfway
   * until the file exists.
   */
  private static List<String> job(SparkSession spark, String mapMarker, String reduceMarker) {
    return Jobs.sorted(
        Jobs.jsc(spark)
            .parallelize(Jobs.range(RECORDS), MAPS)
            .mapPartitions(it -> new PauseHalfway<>(it, mapMarker, RECORDS / MAPS / 2))
            .mapToPair(i -> new Tuple2<>(i % 997, payload(i)))
            .partitionBy(new HashPartitioner(REDUCERS))
            .mapPartitions(it -> new PauseHalfway<>(it, reduceMarker, 2000))
            .mapPartitionsWithIndex(
                (index, it) -> {
                  long count = 0;
                  long sum = 0;
                  while (it.hasNext()) {
                    Tuple2<Integer, String> r = it.next();
                    count++;
                    sum += r._1() * 31L + r._2().hashCode();
                  }
                  return List.of(index + " " + count + " " + sum).iterator();
                },
                false)
            .collect());
  }

  /** About 70 bytes that compress about as much as real rows do. */
  private static String payload(int i) {
    StringBuilder b = new StringBuilder(72);
    long x = i * 0x9E3779B97F4A7C15L;
    while (b.length() < 64) {
      x ^= x >>> 29;
      x *= 0xBF58476D1CE4E5B9L;
      b.append(Long.toHexString(x));
    }
    return b.append('-').append(i).toString();
  }

  /**
   * Passes records through; at record {@code pauseAt} of a task of any partition but 0, waits (at
   * most a minute) for the marker file, unless the marker is null.
   */
  static final class PauseHalfway<T> implements Iterator<T>, Serializable {
    private static final long serialVersionUID = 1L;
    private final Iterator<T> in;
    private final String marker;
    private final int pauseAt;
    private int passed;

    PauseHalfway(Iterator<T> in, String marker, int pauseAt) {
      this.in = in;
      this.marker = marker;
      this.pauseAt = pauseAt;
    }

    @Override
    public boolean hasNext() {
      return in.hasNext();
    }

    @Override
    public T next() {
      if (passed++ == pauseAt && marker != null && TaskContext.getPartitionId() > 0) {
        try {
          SpeculationMarker.await(marker, 60_000);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return in.next();
    }
  }

  /**
   * Once the first task of its stage ended, restarts the servers one after another on a thread of
   * its own (the listener bus goes on), creating the marker first so that the paused tasks push or
   * read while each server stops and starts.
   */
  private static final class Restarter extends SparkListener {
    final CompletableFuture<List<ShuffleServer>> done = new CompletableFuture<>();
    final AtomicInteger stageTasksEndedBeforeRestart = new AtomicInteger(-1);
    final List<String> errors = new CopyOnWriteArrayList<>();
    private final SluiceServers servers;
    private final String stage;
    private final List<Integer> restarted;
    private final Path marker;
    private final AtomicInteger stageTasksEnded = new AtomicInteger();
    private final AtomicBoolean started = new AtomicBoolean();

    Restarter(SluiceServers servers, String stage, List<Integer> restarted, Path marker) {
      this.servers = servers;
      this.stage = stage;
      this.restarted = restarted;
      this.marker = marker;
    }

    @Override
    public void onTaskEnd(SparkListenerTaskEnd end) {
      if (!end.taskType().equals(stage) || end.reason() != Success$.MODULE$) {
        return;
      }
      stageTasksEnded.incrementAndGet();
      if (!started.compareAndSet(false, true)) {
        return;
      }
      Thread t = new Thread(this::restartAll, "restarter");
      t.setDaemon(true);
      t.start();
    }

    private void restartAll() {
      List<ShuffleServer> back = new ArrayList<>();
      try {
        stageTasksEndedBeforeRestart.set(stageTasksEnded.get());
        Files.createFile(marker);
        for (int i : restarted) {
          back.add(servers.restart(i, DOWN));
        }
        done.complete(back);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        done.completeExceptionally(e);
      } catch (IOException e) {
        errors.add(e.toString());
        done.completeExceptionally(new UncheckedIOException(e));
      } catch (RuntimeException e) {
        errors.add(e.toString());
        done.completeExceptionally(e);
      }
    }
  }
}
