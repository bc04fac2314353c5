package io.sluice.e2e.spark;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.FetchFailed;
import org.apache.spark.Success$;
import org.apache.spark.TaskFailedReason;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerStageCompleted;
import org.apache.spark.scheduler.SparkListenerTaskEnd;

/**
 * Counts failed tasks, fetch failures and stage attempts after the first, as Spark reports them.
 */
final class TaskFailureCounter extends SparkListener {
  final AtomicInteger failedTasks = new AtomicInteger();
  final AtomicInteger fetchFailures = new AtomicInteger();
  final AtomicInteger retriedStages = new AtomicInteger();
  final AtomicInteger shuffleMapTasks = new AtomicInteger();

  /** "stage 1.0 partition 2: reason" for each task that did not succeed. */
  final List<String> failures = new CopyOnWriteArrayList<>();

  @Override
  public void onTaskEnd(SparkListenerTaskEnd end) {
    if (end.taskType().equals("ShuffleMapTask")) {
      shuffleMapTasks.incrementAndGet();
    }
    if (end.reason() == Success$.MODULE$) {
      return;
    }
    failedTasks.incrementAndGet();
    String reason =
        end.reason() instanceof TaskFailedReason
            ? ((TaskFailedReason) end.reason()).toErrorString()
            : end.reason().toString();
    failures.add(
        "stage "
            + end.stageId()
            + "."
            + end.stageAttemptId()
            + " partition "
            + end.taskInfo().partitionId()
            + ": "
            + reason);
    if (end.reason() instanceof FetchFailed) {
      fetchFailures.incrementAndGet();
    }
  }

  @Override
  public void onStageCompleted(SparkListenerStageCompleted completed) {
    if (completed.stageInfo().attemptNumber() > 0) {
      retriedStages.incrementAndGet();
    }
  }

  void reset() {
    failedTasks.set(0);
    fetchFailures.set(0);
    retriedStages.set(0);
    shuffleMapTasks.set(0);
    failures.clear();
  }
}
