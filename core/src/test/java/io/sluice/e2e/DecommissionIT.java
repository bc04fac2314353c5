package io.sluice.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.client.PartitionLocations;
import io.sluice.client.push.MapOutputPusher;
import io.sluice.client.read.PartitionReader;
import io.sluice.client.read.ShuffleBatch;
import io.sluice.protocol.proto.PartitionLocation;
import io.sluice.protocol.proto.ServerAddress;
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
 * A server decommissioned in the middle of a shuffle while a map task keeps pushing to it: it
 * commits what it took, the pushes move to the other server, no write fails, every record reads
 * back exactly once (from both servers), new shuffles go elsewhere, and the server reports itself
 * drained once the application's data is gone.
 */
class DecommissionIT {
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
  void aServerDecommissionedMidShuffleLosesNothingTakesNothingNewAndDrains() throws Exception {
    try (TestCluster cluster =
        TestCluster.start(
            tmp, 2, Map.of("sluice.flush.size", "8k", "sluice.push.bufferSize", "2k"))) {
      cluster.coordinator().registerShuffle(0, 2, PARTITIONS);
      try (MapOutputPusher pusher = cluster.pusher(0, 0, 0)) {
        write(pusher, 0, 0, RECORDS);
        pusher.finish();
      }
      ShuffleServer leaving = cluster.server(1);
      CountDownLatch halfway = new CountDownLatch(1);
      CountDownLatch decommissioned = new CountDownLatch(1);
      CompletableFuture<Void> map1 =
          CompletableFuture.runAsync(
              () -> {
                try (MapOutputPusher pusher = cluster.pusher(0, 1, 0)) {
                  write(pusher, 1, 0, RECORDS / 2);
                  halfway.countDown();
                  decommissioned.await();
                  write(pusher, 1, RECORDS / 2, RECORDS);
                  pusher.finish();
                } catch (Exception e) {
                  throw new IllegalStateException(e);
                }
              });
      halfway.await();
      int committed = leaving.decommission().get(1, TimeUnit.MINUTES);
      decommissioned.countDown();
      map1.get(2, TimeUnit.MINUTES);

      assertThat(committed).as("open splits the decommission committed").isPositive();
      assertThat(leaving.lifecycle()).isEqualTo(ShuffleServer.Lifecycle.DECOMMISSIONING);
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

      // a new shuffle is placed on the server that stays only
      cluster.coordinator().registerShuffle(1, 1, PARTITIONS);
      PartitionLocations locations = cluster.coordinator().locations(1);
      ServerAddress staying = cluster.addresses().get(0);
      for (int p = 0; p < PARTITIONS; p++) {
        PartitionLocation l = locations.location(p);
        assertThat(l.getServer()).as("partition %d of the new shuffle", p).isEqualTo(staying);
      }
      assertThat(leaving.registry().contains(TestCluster.APP_ID, 1)).isFalse();

      // it serves until the application's data is gone, then reports itself drained
      leaving.registry().unregisterApplication(TestCluster.APP_ID).get(1, TimeUnit.MINUTES);
      assertThat(leaving.lifecycle()).isEqualTo(ShuffleServer.Lifecycle.DRAINED);
      leaving.cancelDecommission();
      assertThat(leaving.lifecycle()).isEqualTo(ShuffleServer.Lifecycle.SERVING);
      assertThat(cluster.memoryHeld()).isZero();
    }
  }
}
