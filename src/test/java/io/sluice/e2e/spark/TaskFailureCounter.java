package io.sluice.e2e.spark;

import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.FetchFailed;
import org.apache.spark.Success$;
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

  @Override
  public void onTaskEnd(SparkListenerTaskEnd end) {
    if (end.taskType().equals("ShuffleMapTask")) {
      shuffleMapTasks.incrementAndGet();
    }
    if (end.reason() == Success$.MODULE$) {
      return;
    }
    failedTasks.incrementAndGet();
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
  }
}
