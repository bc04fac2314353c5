package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.client.push.MapOutputPusher;
import io.sluice.client.read.PartitionReader;
import io.sluice.client.read.ShuffleBatch;
import io.sluice.server.memory.MemoryBudget;
import io.sluice.testutil.Records;
import io.sluice.testutil.TestCluster;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Pausing and resuming pushers does not wait behind housekeeping: with the housekeeping thread held
 * up (as a disk probe stuck in fsync or a long expiry would hold it), pushers paused by memory
 * pressure are resumed once held memory falls to the resume mark, and the largest buffers are
 * flushed early, so a push workload three times the memory maximum completes.
 *
 * <p>Splits never reach their flush size here (sluice.flush.size is half the maximum, spread over
 * many partitions), so before the commit memory is freed only by flow control's early flushes: if
 * flow control ran on the housekeeping thread, the pushers would stay paused or congested until the
 * latch opens.
 */
class FlowControlThreadIT {
  @TempDir Path tmp;

  @Test
  void pausedPushersResumeWhileHousekeepingIsBlocked() throws Exception {
    int maps = 4;
    int partitions = 100;
    int recordsPerMap = 6_000; // about 6 MiB per map, three times the memory maximum in all
    try (TestCluster cluster =
        TestCluster.start(
            tmp,
            1,
            Map.of(
                "sluice.memory.max", "8m",
                "sluice.flush.size", "4m",
                "sluice.push.bufferSize", "16k"))) {
      ShuffleServer server = cluster.server(0);
      MemoryBudget memory = server.memory();
      CountDownLatch housekeepingBlocked = new CountDownLatch(1);
      CountDownLatch unblockHousekeeping = new CountDownLatch(1);
      server
          .housekeeping()
          .execute(
              () -> {
                housekeepingBlocked.countDown();
                try {
                  unblockHousekeeping.await();
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              });
      assertThat(housekeepingBlocked.await(30, TimeUnit.SECONDS)).isTrue();
      ExecutorService pool = Executors.newFixedThreadPool(maps);
      try {
        // paused before the first push: every pushing connection is paused as it first pushes
        long heldByTest = memory.pauseWatermarkBytes();
        assertThat(memory.tryReserve(heldByTest)).isTrue();
        assertThat(memory.state()).isEqualTo(MemoryBudget.State.PUSH_PAUSED);

        cluster.coordinator().registerShuffle(0, maps, partitions);
        List<Future<int[]>> futures = new ArrayList<>();
        for (int m = 0; m < maps; m++) {
          int map = m;
          futures.add(pool.submit(() -> push(cluster, map, partitions, recordsPerMap)));
        }
        // pushes arrived while paused; then memory falls below the resume mark
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (memory.held() <= heldByTest && System.nanoTime() < deadline) {
          Thread.sleep(1);
        }
        assertThat(memory.held()).as("bytes held once pushes arrived").isGreaterThan(heldByTest);
        memory.release(heldByTest);

        int[][] expected = new int[maps][];
        for (int m = 0; m < maps; m++) {
          // a bound on a hang, not a timing assertion: blocked, the pushers never finish
          expected[m] = futures.get(m).get(2, TimeUnit.MINUTES);
        }
        assertThat(housekeepingBlocked.getCount()).isZero();
        assertThat(unblockHousekeeping.getCount()).as("housekeeping still blocked").isOne();

        Records.Checker checker = new Records.Checker();
        try (PartitionReader reader = cluster.reader(0, 0, partitions, 0, maps)) {
          ShuffleBatch b;
          while ((b = reader.next()) != null) {
            checker.accept(b.partitionId(), b.payload());
          }
        }
        for (int m = 0; m < maps; m++) {
          for (int p = 0; p < partitions; p++) {
            assertThat(checker.count(m, p)).isEqualTo(expected[m][p]);
          }
        }
        assertThat(memory.peak()).isLessThanOrEqualTo(memory.max());
        assertThat(memory.state()).isEqualTo(MemoryBudget.State.ACCEPTING);
        assertThat(cluster.memoryHeld()).isZero();
      } finally {
        unblockHousekeeping.countDown();
        pool.shutdownNow();
      }
    }
  }

  private static int[] push(TestCluster cluster, int map, int partitions, int records)
      throws Exception {
    int[] seq = new int[partitions];
    Random random = new Random(map);
    try (MapOutputPusher pusher = cluster.pusher(0, map, 0)) {
      for (int i = 0; i < records; i++) {
        int p = random.nextInt(partitions);
        byte[] r = Records.record(map, p, seq[p]++, 500 + random.nextInt(1000));
        pusher.write(p, r, 0, r.length);
      }
      pusher.finish();
    }
    return seq;
  }
}
