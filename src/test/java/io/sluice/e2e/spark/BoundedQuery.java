package io.sluice.e2e.spark;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.spark.SparkStageInfo;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import scala.Option;

/**
 * Runs a query that might hang with a bound: collects it on a thread of its own and, when the bound
 * passes, cancels the session's jobs and fails with the stacks of every thread that was waiting in
 * Spark's scheduler or in Sluice, so a hang shows where it waits instead of stalling the suite.
 */
final class BoundedQuery {
  private BoundedQuery() {}

  /**
   * The rows of {@code df} as strings, sorted; fails when the query takes longer than {@code
   * bound}.
   */
  static List<String> collect(SparkSession spark, Dataset<Row> df, Duration bound)
      throws Exception {
    return run(spark, () -> Jobs.sorted(Jobs.strings(df.collectAsList())), bound);
  }

  /**
   * What {@code job} returns; fails like {@link #collect} when it takes longer than {@code bound}.
   */
  static <T> T run(SparkSession spark, Callable<T> job, Duration bound) throws Exception {
    ExecutorService runner =
        Executors.newSingleThreadExecutor(
            r -> {
              Thread t = new Thread(r, "bounded-query");
              t.setDaemon(true);
              return t;
            });
    try {
      Future<T> rows = runner.submit(job);
      try {
        return rows.get(bound.toMillis(), TimeUnit.MILLISECONDS);
      } catch (TimeoutException e) {
        String stacks = waitingThreads();
        String stages = activeStages(spark);
        spark.sparkContext().cancelAllJobs();
        throw new AssertionError(
            "the query did not return within "
                + bound
                + "; active stages: "
                + stages
                + "; waiting threads:\n"
                + stacks,
            e);
      } catch (ExecutionException e) {
        throw (e.getCause() instanceof Exception) ? (Exception) e.getCause() : e;
      }
    } finally {
      runner.shutdownNow();
    }
  }

  /** "stage 3 (2 tasks: 1 running, 1 done, 0 failed)", for each active stage. */
  private static String activeStages(SparkSession spark) {
    StringBuilder out = new StringBuilder();
    for (int id : spark.sparkContext().statusTracker().getActiveStageIds()) {
      Option<SparkStageInfo> info = spark.sparkContext().statusTracker().getStageInfo(id);
      if (info.isEmpty()) {
        continue;
      }
      SparkStageInfo stage = info.get();
      out.append(out.length() > 0 ? ", " : "")
          .append("stage ")
          .append(id)
          .append(" (")
          .append(stage.numTasks())
          .append(" tasks: ")
          .append(stage.numActiveTasks())
          .append(" running, ")
          .append(stage.numCompletedTasks())
          .append(" done, ")
          .append(stage.numFailedTasks())
          .append(" failed)");
    }
    return out.length() > 0 ? out.toString() : "none";
  }

  private static String waitingThreads() {
    StringBuilder out = new StringBuilder();
    for (Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
      StringBuilder stack = new StringBuilder();
      boolean relevant = false;
      for (StackTraceElement frame : e.getValue()) {
        String c = frame.getClassName();
        relevant |= c.contains("sluice") || c.contains("adaptive");
        stack.append("    at ").append(frame).append('\n');
      }
      if (relevant && !e.getKey().getName().equals("main")
          || e.getKey().getName().equals("bounded-query")) {
        out.append('"')
            .append(e.getKey().getName())
            .append("\" ")
            .append(e.getKey().getState())
            .append('\n')
            .append(stack);
      }
    }
    return out.toString();
  }
}
