package io.sluice.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.client.push.MapOutputPusher;
import io.sluice.testutil.OtherApplication;
import io.sluice.testutil.Records;
import io.sluice.testutil.TestCluster;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A client closed under a map task that is still pushing (an executor stopping while its tasks are
 * killed, a job aborted with pushes in flight): every push it can no longer send fails the task at
 * once, naming why, and gives its buffers back. The leak detector every test runs with fails a test
 * that leaves one unreleased, and a push that never completes would show as the task waiting out
 * {@code sluice.push.timeout} instead.
 */
class ClosedClientIT {
  private static final String APP = "app-closing";
  private static final int PARTITIONS = 8;

  @TempDir Path tmp;

  @Test
  void pushesSentAfterTheClientClosedFailAndReleaseTheirBuffers() throws Exception {
    try (TestCluster cluster = TestCluster.start(tmp, 1)) {
      OtherApplication app =
          new OtherApplication(cluster, APP, Map.of("sluice.push.timeout", "60s"));
      app.coordinator().registerShuffle(0, 1, PARTITIONS);
      try (MapOutputPusher pusher = app.pusher(0)) {
        write(pusher, 200); // small batches, merged per server when they are sent
        app.close();
        assertThatThrownBy(pusher::finish)
            .hasStackTraceContaining("the client (sluice-push) is closed")
            .hasMessageNotContaining("made no progress");
      }
    }
  }

  @Test
  void aRetryWaitingWhenTheClientClosesIsGivenUp() throws Exception {
    try (TestCluster cluster = TestCluster.start(tmp, 1)) {
      OtherApplication app =
          new OtherApplication(
              cluster,
              APP,
              Map.of(
                  "sluice.push.timeout", "60s",
                  "sluice.push.retryWait", "30s",
                  "sluice.push.retryMaxWait", "30s"));
      app.coordinator().registerShuffle(0, 1, PARTITIONS);
      try (MapOutputPusher pusher = app.pusher(0)) {
        ScheduledThreadPoolExecutor scheduler =
            (ScheduledThreadPoolExecutor) app.context().scheduler();
        int before = scheduler.getQueue().size();
        cluster.server(0).close(); // every push now fails to connect and waits to retry
        write(pusher, 200);
        pusher.flush();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (scheduler.getQueue().size() <= before && System.nanoTime() < deadline) {
          Thread.sleep(10);
        }
        assertThat(scheduler.getQueue().size()).as("a retry is waiting").isGreaterThan(before);
        app.close();
        assertThatThrownBy(pusher::finish)
            .hasMessageContaining("given up: the Sluice client closed before its retry")
            .hasMessageNotContaining("made no progress");
      }
    }
  }

  private static void write(MapOutputPusher pusher, int records) throws Exception {
    int[] seq = new int[PARTITIONS];
    for (int i = 0; i < records; i++) {
      int p = i % PARTITIONS;
      byte[] r = Records.record(0, p, seq[p]++, 100);
      pusher.write(p, r, 0, r.length);
    }
  }
}
