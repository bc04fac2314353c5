package io.sluice.e2e.spark;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.spark.FetchFailed;
import org.apache.spark.SparkEnv;
import org.apache.spark.Success$;
import org.apache.spark.TaskFailedReason;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerStageSubmitted;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.scheduler.SparkListenerTaskStart;
import org.apache.spark.scheduler.StageInfo;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 11: an INDETERMINATE map stage whose output is lost mid-job. Stage A ({@code repartition}
 * over an unordered shuffle read) wrote its shuffle; the first task of stage B to start damages all
 * of A's committed output before it reads (once, on B's first attempt; a marker file makes it once
 * across tasks and executor JVMs), so B's reads fail with {@code FetchFailed}. Spark then rolls
 * back: it reruns the whole of stage A (every partition, not only the lost ones, since a new
 * attempt of an indeterminate stage may send other records to each partition) and B after it. The
 * result must be every number read once, as on the built-in shuffle with the same failure (its map
 * output files of A deleted). Stage A's attempts do send other numbers to each partition (see
 * {@link Jobs#indeterminateStageRerun}), so a read mixing A's attempts, or B's, shows in the
 * result.
 */
class SparkIndeterminateStageIT {
  private static final Duration BOUND = Duration.ofSeconds(90);

  @TempDir Path tmp;

  /**
   * Claims the one damage of a run: true for the first caller only, in any JVM on this machine. The
   * others wait until the damage is done ({@link #done}), so no task of stage B's first attempt
   * reads A's output undamaged.
   */
  private static boolean claim(String marker) throws IOException, InterruptedException {
    try {
      Files.createFile(Path.of(marker));
      return true;
    } catch (FileAlreadyExistsException e) {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (!Files.exists(Path.of(marker + ".done")) && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      return false;
    }
  }

  /** Records what the claimer damaged, and that it is done. */
  private static void done(String marker, List<String> damaged) throws IOException {
    Files.writeString(Path.of(marker), String.join("\n", damaged));
    Files.createFile(Path.of(marker + ".done"));
  }

  /** Built-in shuffle, local mode: deletes the map output files of shuffle {@code shuffleId}. */
  private static Jobs.TaskHook deleteBuiltinOutput(int shuffleId, String marker) {
    return task -> {
      if (task.stageAttemptNumber() != 0 || !claim(marker)) {
        return;
      }
      List<String> deleted = new ArrayList<>();
      for (File dir : SparkEnv.get().blockManager().diskBlockManager().localDirs()) {
        try (Stream<Path> files = Files.walk(dir.toPath())) {
          for (Path f : files.collect(Collectors.toList())) {
            String name = f.getFileName().toString();
            if (name.startsWith("shuffle_" + shuffleId + "_") && name.endsWith(".data")) {
              Files.delete(f);
              deleted.add(f.toString());
            }
          }
        }
      }
      done(marker, deleted);
    };
  }

  /**
   * Sluice: flips a header byte (of the first batch's id) in every committed split file of shuffle
   * {@code shuffleId} of application {@code appId} under {@code root}: its CRC32C check fails.
   */
  private static Jobs.TaskHook damageSluiceOutput(
      String root, String appId, int shuffleId, String marker) {
    return task -> {
      if (task.stageAttemptNumber() != 0 || !claim(marker)) {
        return;
      }
      List<String> damaged = new ArrayList<>();
      try (Stream<Path> files = Files.walk(Path.of(root))) {
        for (Path f : files.collect(Collectors.toList())) {
          if (f.getFileName().toString().matches("\\d+-\\d+\\.data")
              && f.getParent().getFileName().toString().equals(Integer.toString(shuffleId))
              && f.toString().contains(appId)
              && Files.size(f) > 16) {
            byte[] bytes = Files.readAllBytes(f);
            try (FileChannel ch = FileChannel.open(f, StandardOpenOption.WRITE)) {
              ch.write(ByteBuffer.wrap(new byte[] {(byte) (bytes[15] ^ 1)}), 15);
            }
            damaged.add(f.toString());
          }
        }
      }
      done(marker, damaged);
    };
  }

  /** Stage attempts, task starts per stage attempt, and the tasks that did not succeed. */
  private static final class StageLog extends SparkListener {
    /** "stage.attempt" to the stage's shuffle id (-1 for a result stage) and number of tasks. */
    final Map<String, int[]> attempts = new ConcurrentHashMap<>();

    final Map<String, AtomicInteger> taskStarts = new ConcurrentHashMap<>();
    final List<String> failures = new CopyOnWriteArrayList<>();

    @Override
    public void onStageSubmitted(SparkListenerStageSubmitted submitted) {
      StageInfo info = submitted.stageInfo();
      int shuffle = info.shuffleDepId().isDefined() ? (Integer) info.shuffleDepId().get() : -1;
      attempts.put(
          info.stageId() + "." + info.attemptNumber(), new int[] {shuffle, info.numTasks()});
    }

    @Override
    public void onTaskStart(SparkListenerTaskStart start) {
      taskStarts
          .computeIfAbsent(start.stageId() + "." + start.stageAttemptId(), k -> new AtomicInteger())
          .incrementAndGet();
    }

    @Override
    public void onTaskEnd(SparkListenerTaskEnd end) {
      if (end.reason() == Success$.MODULE$) {
        return;
      }
      String where = "stage " + end.stageId() + "." + end.stageAttemptId() + ": ";
      if (end.reason() instanceof FetchFailed) {
        FetchFailed f = (FetchFailed) end.reason();
        failures.add(where + "FetchFailed shuffle " + f.shuffleId() + ": " + f.message());
      } else {
        failures.add(
            where
                + (end.reason() instanceof TaskFailedReason
                    ? ((TaskFailedReason) end.reason()).toErrorString()
                    : end.reason().toString()));
      }
    }

    /** The stage attempts that wrote shuffle {@code shuffleId}, as "stage.attempt". */
    List<String> attemptsOf(int shuffleId) {
      return attempts.entrySet().stream()
          .filter(e -> e.getValue()[0] == shuffleId)
          .map(Map.Entry::getKey)
          .sorted()
          .collect(Collectors.toList());
    }
  }

  /**
   * Runs the job, {@code damage} (given the id of A's shuffle) before stage B's reads; checks the
   * rollback happened as described above.
   */
  private List<String> runAndCheck(
      SparkSession spark, java.util.function.IntFunction<Jobs.TaskHook> damage, String marker)
      throws Exception {
    StageLog log = new StageLog();
    spark.sparkContext().addSparkListener(log);
    Jobs.IndeterminateStageRerun job = new Jobs.IndeterminateStageRerun(spark);
    Jobs.TaskHook hook = damage.apply(job.stageAShuffle);
    List<String> result = BoundedQuery.run(spark, () -> job.run(hook), BOUND);
    spark.sparkContext().listenerBus().waitUntilEmpty();

    String stages = "stage attempts (shuffle written, tasks): " + describe(log.attempts);
    assertThat(Files.readString(Path.of(marker))).as("the damaged output of stage A").isNotBlank();
    List<String> stageA = log.attemptsOf(job.stageAShuffle);
    assertThat(stageA).as("stage A's attempts; " + stages).hasSize(2);
    for (String attempt : stageA) {
      assertThat(log.attempts.get(attempt)[1])
          .as("tasks of stage A attempt " + attempt)
          .isEqualTo(3);
      assertThat(log.taskStarts.get(attempt).get())
          .as("task starts of stage A attempt " + attempt)
          .isEqualTo(3);
    }
    // the partitionBy stage may run again too: on the built-in shuffle a fetch failure unregisters
    // every map output of the executor that served it
    List<String> readers =
        log.attempts.keySet().stream()
            .filter(a -> !stageA.contains(a) && !log.attemptsOf(job.inputShuffle).contains(a))
            .filter(a -> log.attempts.get(a)[0] >= 0)
            .sorted()
            .collect(Collectors.toList());
    assertThat(readers).as("stage B's attempts; " + stages).hasSize(2);
    assertThat(log.failures)
        .as("failed tasks: only stage B's first attempt, with fetch failures of A's output")
        .isNotEmpty()
        .allMatch(
            f ->
                f.startsWith(
                    "stage "
                        + readers.get(0)
                        + ": FetchFailed shuffle "
                        + job.stageAShuffle
                        + ": "));
    return result;
  }

  private static String describe(Map<String, int[]> attempts) {
    return attempts.entrySet().stream()
        .sorted(Map.Entry.comparingByKey())
        .map(e -> e.getKey() + " (" + e.getValue()[0] + ", " + e.getValue()[1] + ")")
        .collect(Collectors.joining(", "));
  }

  @Test
  void aLostIndeterminateStageIsRerunWholeWithTheBuiltinResult() throws Exception {
    List<String> expected = Jobs.indeterminateStageRerunResult();
    SparkSession builtin = SparkSessions.builtin("SparkIndeterminateStageIT");
    try {
      String marker = tmp.resolve("builtin-damaged").toString();
      assertThat(runAndCheck(builtin, id -> deleteBuiltinOutput(id, marker), marker))
          .isEqualTo(expected);
    } finally {
      builtin.stop();
    }

    Path root = tmp.resolve("sluice");
    try (SluiceServers servers = new SluiceServers(root, 2)) {
      SparkSession spark =
          SparkSessions.sluice("SparkIndeterminateStageIT", servers.list(), Map.of());
      try {
        String marker = tmp.resolve("sluice-damaged").toString();
        String appId = spark.sparkContext().applicationId();
        assertThat(
                runAndCheck(
                    spark, id -> damageSluiceOutput(root.toString(), appId, id, marker), marker))
            .isEqualTo(expected);
      } finally {
        spark.stop();
      }
    }
  }
}
