package io.sluice.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.client.push.MapOutputPusher;
import io.sluice.client.read.PartitionReader;
import io.sluice.client.read.ShuffleBatch;
import io.sluice.testutil.Records;
import io.sluice.testutil.TestCluster;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Many reducers, little data each: a map task's last batches (one per partition) go to each server
 * merged into one request, as first copies and, with replication, as replicas, instead of one
 * request per partition; every record still reads back once.
 */
class MergedPushIT {
  private static final int MAPS = 2;
  private static final int PARTITIONS = 500;
  private static final int RECORDS = 3;

  @TempDir Path tmp;

  @ParameterizedTest(name = "replication factor {0}")
  @ValueSource(ints = {1, 2})
  void aMapTasksSmallLastBatchesTravelInOneRequestPerServer(int factor) throws Exception {
    try (TestCluster cluster =
        TestCluster.start(tmp, 2, Map.of("sluice.replication.factor", "" + factor))) {
      cluster.coordinator().registerShuffle(0, MAPS, PARTITIONS);
      for (int map = 0; map < MAPS; map++) {
        try (MapOutputPusher pusher = cluster.pusher(0, map, 0)) {
          for (int seq = 0; seq < RECORDS; seq++) {
            for (int p = 0; p < PARTITIONS; p++) {
              byte[] r = Records.record(map, p, seq, 40);
              pusher.write(p, r, 0, r.length);
            }
          }
          pusher.finish();
        }
      }
      long merged = 0;
      for (int i = 0; i < 2; i++) {
        merged += cluster.server(i).metrics().mergedPushes().getCount();
      }
      // per map: one request to each of the 2 servers, and as many again for replicas
      assertThat(merged).as("merged push requests").isEqualTo((long) MAPS * 2 * factor);

      Records.Checker checker = new Records.Checker();
      try (PartitionReader reader = cluster.reader(0, 0, PARTITIONS, 0, MAPS)) {
        for (ShuffleBatch b = reader.next(); b != null; b = reader.next()) {
          checker.accept(b.partitionId(), b.payload());
        }
      }
      for (int m = 0; m < MAPS; m++) {
        for (int p = 0; p < PARTITIONS; p++) {
          assertThat(checker.count(m, p)).as("map %d partition %d", m, p).isEqualTo(RECORDS);
        }
      }
    }
  }

  /**
   * Full batches pushed while the task writes go merged as well: with 1 KiB buffers, 2 partitions
   * on one server fill 200 batches, which travel in requests of up to 1 MiB, not 200 requests.
   */
  @Test
  void fullBatchesWrittenWhileTheTaskRunsShareRequests() throws Exception {
    try (TestCluster cluster = TestCluster.start(tmp, 1, Map.of("sluice.push.bufferSize", "1k"))) {
      cluster.coordinator().registerShuffle(0, 1, 2);
      long pushedBefore = cluster.server(0).metrics().bytesPushed().getCount();
      int records = 500; // 200 bytes each: 5 records fill a 1 KiB buffer
      try (MapOutputPusher pusher = cluster.pusher(0, 0, 0)) {
        for (int seq = 0; seq < records; seq++) {
          for (int p = 0; p < 2; p++) {
            byte[] r = Records.record(0, p, seq, 200);
            pusher.write(p, r, 0, r.length);
          }
        }
        pusher.finish();
      }
      long merged = cluster.server(0).metrics().mergedPushes().getCount();
      long single = cluster.server(0).metrics().singlePushes().getCount();
      long pushedBytes = cluster.server(0).metrics().bytesPushed().getCount() - pushedBefore;
      assertThat(pushedBytes).as("bytes pushed").isGreaterThan(200_000L);
      // every batch went in a merged request of up to 1 MiB: a handful of requests, none alone
      assertThat(single).as("single-batch push requests").isZero();
      assertThat(merged).as("merged push requests").isBetween(1L, 8L);

      Records.Checker checker = new Records.Checker();
      try (PartitionReader reader = cluster.reader(0, 0, 2, 0, 1)) {
        for (ShuffleBatch b = reader.next(); b != null; b = reader.next()) {
          checker.accept(b.partitionId(), b.payload());
        }
      }
      for (int p = 0; p < 2; p++) {
        assertThat(checker.count(0, p)).as("partition %d", p).isEqualTo(records);
      }
    }
  }

  /**
   * Large and small parts in the same requests: the server receives each large part into a buffer
   * of its own and runs of small ones into a shared buffer, takes large parts as they are and
   * copies small ones; every record reads back once, and no memory stays reserved.
   */
  @Test
  void largeAndSmallPartsOfOneRequestAllReadBack() throws Exception {
    try (TestCluster cluster = TestCluster.start(tmp, 1, Map.of("sluice.push.bufferSize", "8k"))) {
      int partitions = 40;
      cluster.coordinator().registerShuffle(0, 1, partitions);
      int[] records = new int[partitions];
      try (MapOutputPusher pusher = cluster.pusher(0, 0, 0)) {
        for (int seq = 0; seq < 20; seq++) {
          for (int p = 0; p < partitions; p++) {
            // every fifth partition ends with a batch of about 6 KiB, the others with a few small
            // records: all of them go in the task's last, merged, request
            if (p % 5 == 0 || seq < 2 + p % 3) {
              byte[] r = Records.record(0, p, seq, p % 5 == 0 ? 300 : 30);
              pusher.write(p, r, 0, r.length);
              records[p]++;
            }
          }
        }
        pusher.finish();
      }
      assertThat(cluster.server(0).metrics().mergedPushes().getCount()).isEqualTo(1);
      assertThat(cluster.server(0).metrics().singlePushes().getCount()).isZero();
      // a batch of every partition, each a part of that request
      assertThat(cluster.server(0).metrics().batchesPushed().getCount()).isEqualTo(partitions);

      Records.Checker checker = new Records.Checker();
      try (PartitionReader reader = cluster.reader(0, 0, partitions, 0, 1)) {
        for (ShuffleBatch b = reader.next(); b != null; b = reader.next()) {
          checker.accept(b.partitionId(), b.payload());
        }
      }
      for (int p = 0; p < partitions; p++) {
        assertThat(checker.count(0, p)).as("partition %d", p).isEqualTo(records[p]);
      }
      assertThat(cluster.server(0).memory().held()).as("memory still reserved").isZero();
    }
  }
}
