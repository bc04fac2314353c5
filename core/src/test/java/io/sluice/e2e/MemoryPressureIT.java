package io.sluice.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.client.push.MapOutputPusher;
import io.sluice.client.read.PartitionReader;
import io.sluice.client.read.ShuffleBatch;
import io.sluice.server.ShuffleServer;
import io.sluice.testutil.Records;
import io.sluice.testutil.TestCluster;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** 16 pushers at full speed against a small memory maximum: bounded, nothing lost. */
class MemoryPressureIT {
  @TempDir Path tmp;

  @Test
  void heldMemoryStaysWithinTheMaximumAndEverythingReadsBack() throws Exception {
    int maps = 16;
    int partitions = 300;
    int recordsPerMap = 6_000; // about 5 MiB per map, 80 MiB in all
    long max = 32L << 20;
    try (TestCluster cluster =
        TestCluster.start(
            tmp,
            1,
            Map.of(
                "sluice.memory.max", "32m",
                "sluice.flush.size", "1m",
                "sluice.push.bufferSize", "16k",
                "sluice.push.maxInFlightBytesPerServer", "64m"))) {
      cluster.coordinator().registerShuffle(0, maps, partitions);
      ExecutorService pool = Executors.newFixedThreadPool(maps);
      List<Future<int[]>> futures = new ArrayList<>();
      for (int m = 0; m < maps; m++) {
        int map = m;
        futures.add(
            pool.submit(
                () -> {
                  int[] seq = new int[partitions];
                  Random random = new Random(map);
                  try (MapOutputPusher pusher = cluster.pusher(0, map, 0)) {
                    for (int i = 0; i < recordsPerMap; i++) {
                      int p = random.nextInt(partitions);
                      byte[] r = Records.record(map, p, seq[p]++, 200 + random.nextInt(1400));
                      pusher.write(p, r, 0, r.length);
                    }
                    pusher.finish();
                  }
                  return seq;
                }));
      }
      int[][] expected = new int[maps][];
      for (int m = 0; m < maps; m++) {
        expected[m] = futures.get(m).get(10, TimeUnit.MINUTES);
      }
      pool.shutdown();

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
      // reading waited for the commit, which flushed everything
      ShuffleServer server = cluster.server(0);
      assertThat(server.memory().peak()).isLessThanOrEqualTo(max);
      assertThat(cluster.memoryHeld()).isZero();
    }
  }
}
