package io.sluice.e2e.spark;

import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.Success$;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;

/**
 * Sums the shuffle metrics of successful tasks as Spark reports them to listeners (what its UI and
 * its own ShuffleSuite read): bytes and records written by map tasks, read by reduce tasks.
 */
final class ShuffleBytesCounter extends SparkListener {
  final AtomicLong bytesWritten = new AtomicLong();
  final AtomicLong recordsWritten = new AtomicLong();
  final AtomicLong bytesRead = new AtomicLong();
  final AtomicLong recordsRead = new AtomicLong();

  @Override
  public void onTaskEnd(SparkListenerTaskEnd end) {
    if (end.reason() != Success$.MODULE$ || end.taskMetrics() == null) {
      return;
    }
    bytesWritten.addAndGet(end.taskMetrics().shuffleWriteMetrics().bytesWritten());
    recordsWritten.addAndGet(end.taskMetrics().shuffleWriteMetrics().recordsWritten());
    bytesRead.addAndGet(end.taskMetrics().shuffleReadMetrics().totalBytesRead());
    recordsRead.addAndGet(end.taskMetrics().shuffleReadMetrics().recordsRead());
  }

  void reset() {
    bytesWritten.set(0);
    recordsWritten.set(0);
    bytesRead.set(0);
    recordsRead.set(0);
  }

  @Override
  public String toString() {
    return "written "
        + bytesWritten
        + " bytes, "
        + recordsWritten
        + " records; read "
        + bytesRead
        + " bytes, "
        + recordsRead
        + " records";
  }
}
