package io.sluice.benchmarks;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.spark.FetchFailed;
import org.apache.spark.Success$;
import org.apache.spark.TaskFailedReason;
import org.apache.spark.TaskKilled;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerStageSubmitted;
import org.apache.spark.scheduler.SparkListenerTaskEnd;

/**
 * A listener of the benchmark's Spark driver that counts what a shuffle that lost data or a server
 * costs a job: tasks that failed (killed ones, such as speculative copies, are not failures), fetch
 * failures among them (the reducer could not read its input and Spark reruns the map stage), and
 * stage attempts after the first (reruns). Only Spark and the JDK are used, so it runs on every
 * Spark line.
 */
final class SparkJobIncidents extends SparkListener {
  private final AtomicInteger taskFailures = new AtomicInteger();
  private final AtomicInteger fetchFailures = new AtomicInteger();
  private final AtomicInteger stageReruns = new AtomicInteger();
  private final AtomicReference<String> firstFailure = new AtomicReference<>("");

  @Override
  public void onTaskEnd(SparkListenerTaskEnd end) {
    if (end.reason() == Success$.MODULE$ || end.reason() instanceof TaskKilled) {
      return;
    }
    taskFailures.incrementAndGet();
    if (end.reason() instanceof FetchFailed) {
      fetchFailures.incrementAndGet();
    }
    String reason =
        end.reason() instanceof TaskFailedReason
            ? ((TaskFailedReason) end.reason()).toErrorString()
            : end.reason().toString();
    String first = "stage " + end.stageId() + "." + end.stageAttemptId() + ": " + reason;
    firstFailure.compareAndSet("", first.length() > 300 ? first.substring(0, 300) : first);
  }

  @Override
  public void onStageSubmitted(SparkListenerStageSubmitted submitted) {
    if (submitted.stageInfo().attemptNumber() > 0) {
      stageReruns.incrementAndGet();
    }
  }

  /** Starts counting again (before a timed run). */
  void reset() {
    taskFailures.set(0);
    fetchFailures.set(0);
    stageReruns.set(0);
    firstFailure.set("");
  }

  /** The counts since the last {@link #reset}, and the first failure's reason if any. */
  Map<String, String> counts() {
    Map<String, String> counts = new LinkedHashMap<>();
    counts.put("taskFailures", Integer.toString(taskFailures.get()));
    counts.put("fetchFailures", Integer.toString(fetchFailures.get()));
    counts.put("stageReruns", Integer.toString(stageReruns.get()));
    counts.put("firstFailure", firstFailure.get().replace('\n', ' '));
    return counts;
  }
}
