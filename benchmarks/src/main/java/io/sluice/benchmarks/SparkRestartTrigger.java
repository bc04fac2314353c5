package io.sluice.benchmarks;

import java.io.PrintStream;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.Success$;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerStageCompleted;
import org.apache.spark.scheduler.SparkListenerTaskEnd;

/**
 * A listener of the benchmark's Spark driver that asks the benchmark's JVM, which holds the Sluice
 * servers, to restart one: once armed for a timed run, the first task of the chosen type ({@code
 * ShuffleMapTask}: the map stage, {@code ResultTask}: the reduce stage) that ends successfully
 * makes it print {@code @@restart WORKLOAD COLUMN} on the driver's standard output, so the restart
 * begins while the rest of that stage's tasks run. It records when that stage attempt ended (wall
 * clock; a failed attempt ends early) and how many of its tasks ended successfully after the
 * request.
 */
final class SparkRestartTrigger extends SparkListener {
  static final String RESTART = "@@restart";

  private final String taskType;
  private final PrintStream out;
  private volatile String armedFor;
  private final AtomicInteger stage = new AtomicInteger(-1);
  private volatile int stageAttempt;
  private final AtomicInteger tasksAfter = new AtomicInteger();
  private final AtomicLong stageEndMillis = new AtomicLong();
  private volatile long requestedMillis;

  /**
   * @param taskType {@code ShuffleMapTask} or {@code ResultTask}
   */
  SparkRestartTrigger(String taskType, PrintStream out) {
    this.taskType = taskType;
    this.out = out;
  }

  /** Arms the trigger for one timed run of {@code workload} on {@code column}. */
  void arm(String workload, int column) {
    stage.set(-1);
    tasksAfter.set(0);
    stageEndMillis.set(0);
    requestedMillis = 0;
    armedFor = workload + " " + column;
  }

  @Override
  public void onTaskEnd(SparkListenerTaskEnd end) {
    if (!end.taskType().equals(taskType) || end.reason() != Success$.MODULE$) {
      return;
    }
    String run = armedFor;
    if (run != null && stage.compareAndSet(-1, end.stageId())) {
      stageAttempt = end.stageAttemptId();
      armedFor = null;
      requestedMillis = System.currentTimeMillis();
      out.println(RESTART + " " + run);
      out.flush();
    } else if (end.stageId() == stage.get() && end.stageAttemptId() == stageAttempt) {
      tasksAfter.incrementAndGet();
    }
  }

  @Override
  public void onStageCompleted(SparkListenerStageCompleted completed) {
    if (completed.stageInfo().stageId() == stage.get()
        && completed.stageInfo().attemptNumber() == stageAttempt) {
      stageEndMillis.compareAndSet(0, System.currentTimeMillis());
    }
  }

  /** What the last armed run saw: whether the restart was asked for, when the stage ended. */
  Map<String, String> report() {
    Map<String, String> report = new LinkedHashMap<>();
    report.put("restartTaskType", taskType);
    report.put("restartRequestedMillis", Long.toString(requestedMillis));
    report.put("restartStage", Integer.toString(stage.get()));
    report.put("restartStageTasksAfter", Integer.toString(tasksAfter.get()));
    report.put("restartStageEndMillis", Long.toString(stageEndMillis.get()));
    return report;
  }
}
