package io.sluice.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.client.push.MapOutputPusher;
import io.sluice.client.read.PartitionReader;
import io.sluice.client.read.ShuffleBatch;
import io.sluice.server.ShuffleServer;
import io.sluice.testutil.Records;
import io.sluice.testutil.TestCluster;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A server restarted in the middle of a shuffle while a map task keeps pushing to it: its stop
 * answers pushes HARD_SPLIT and commits what it acknowledged, the pushes move to the other server
 * and back, and after the restart every record reads back exactly once. Whatever the interleaving
 * of the pushes with the stop, the outcome is the same.
 */
class GracefulRestartIT {
  private static final int PARTITIONS = 10;
  private static final int RECORDS = 400;

  @TempDir Path tmp;

  private static void write(MapOutputPusher pusher, int map, int from, int to) throws Exception {
    for (int seq = from; seq < to; seq++) {
      for (int p = 0; p < PARTITIONS; p++) {
        byte[] r = Records.record(map, p, seq, 100 + (seq * 13 + p) % 400);
        pusher.write(p, r, 0, r.length);
      }
    }
  }

  @Test
  void pushesInFlightDuringAStopMoveOnAndEverythingAcknowledgedIsServedAfterTheRestart()
      throws Exception {
    try (TestCluster cluster =
        TestCluster.start(
            tmp,
            2,
            Map.of(
                "sluice.flush.size", "8k",
                "sluice.push.bufferSize", "2k",
                "sluice.network.connectTimeout", "2s"))) {
      cluster.coordinator().registerShuffle(0, 2, PARTITIONS);
      // map 0 is acknowledged on both servers but not committed: the shuffle waits for map 1
      try (MapOutputPusher pusher = cluster.pusher(0, 0, 0)) {
        write(pusher, 0, 0, RECORDS);
        pusher.finish();
      }

      CountDownLatch halfway = new CountDownLatch(1);
      CountDownLatch restarted = new CountDownLatch(1);
      CompletableFuture<Void> map1 =
          CompletableFuture.runAsync(
              () -> {
                try (MapOutputPusher pusher = cluster.pusher(0, 1, 0)) {
                  write(pusher, 1, 0, RECORDS / 2);
                  halfway.countDown();
                  write(pusher, 1, RECORDS / 2, RECORDS); // while server 1 stops and restarts
                  // its report commits the shuffle, which needs server 1 back
                  restarted.await();
                  pusher.finish();
                } catch (Exception e) {
                  throw new IllegalStateException(e);
                }
              });
      halfway.await();
      ShuffleServer server = cluster.restartServer(1);
      restarted.countDown();
      map1.get(2, TimeUnit.MINUTES);

      assertThat(server.recovery().shuffles()).isEqualTo(1);
      assertThat(server.recovery().splits()).as("splits the stop committed").isPositive();
      assertThat(server.recovery().lostShuffles()).isZero();
      Records.Checker checker = new Records.Checker();
      try (PartitionReader reader = cluster.reader(0, 0, PARTITIONS, 0, 2)) {
        ShuffleBatch b;
        while ((b = reader.next()) != null) {
          checker.accept(b.partitionId(), b.payload());
        }
      }
      for (int m = 0; m < 2; m++) {
        for (int p = 0; p < PARTITIONS; p++) {
          assertThat(checker.count(m, p)).as("map %d partition %d", m, p).isEqualTo(RECORDS);
        }
      }
      assertThat(cluster.memoryHeld()).isZero();
    }
  }
}
