package io.sluice.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.client.push.MapOutputPusher;
import io.sluice.client.read.PartitionReader;
import io.sluice.client.read.ShuffleBatch;
import io.sluice.server.ShuffleServer;
import io.sluice.testutil.Records;
import io.sluice.testutil.TestCluster;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The memory tier on a real server: small splits are committed without a file and every chunk is
 * served from memory; memory pressure, age and a graceful restart write them to their files, and
 * everything reads back exactly once either way.
 */
class MemoryTierIT {
  private static final int MAPS = 2;
  private static final int PARTITIONS = 8;
  private static final int RECORDS = 30;

  @TempDir Path tmp;

  private static void shuffle(TestCluster cluster, int shuffleId) throws Exception {
    cluster.coordinator().registerShuffle(shuffleId, MAPS, PARTITIONS);
    for (int m = 0; m < MAPS; m++) {
      try (MapOutputPusher pusher = cluster.pusher(shuffleId, m, 0)) {
        for (int s = 0; s < RECORDS; s++) {
          for (int p = 0; p < PARTITIONS; p++) {
            byte[] r = Records.record(m, p, s, 100 + (s * 7 + p) % 50);
            pusher.write(p, r, 0, r.length);
          }
        }
        pusher.finish();
      }
    }
  }

  private static void readsEverythingOnce(TestCluster cluster, int shuffleId) throws Exception {
    Records.Checker checker = new Records.Checker();
    try (PartitionReader reader = cluster.reader(shuffleId, 0, PARTITIONS, 0, MAPS)) {
      ShuffleBatch b;
      while ((b = reader.next()) != null) {
        checker.accept(b.partitionId(), b.payload());
      }
    }
    for (int m = 0; m < MAPS; m++) {
      for (int p = 0; p < PARTITIONS; p++) {
        assertThat(checker.count(m, p)).as("map %d partition %d", m, p).isEqualTo(RECORDS);
      }
    }
  }

  private static List<Path> dataFiles(TestCluster cluster) throws IOException {
    try (Stream<Path> files = Files.walk(cluster.root())) {
      return files
          .filter(f -> f.getFileName().toString().endsWith(".data"))
          .collect(Collectors.toList());
    }
  }

  @Test
  void smallSplitsAreServedFromMemoryAndWrittenBackUnderPressureAndBeforeARestart()
      throws Exception {
    try (TestCluster cluster =
        TestCluster.start(tmp, 1, Map.of("sluice.storage.policy", "memory,local"))) {
      ShuffleServer server = cluster.server(0);
      shuffle(cluster, 0);
      readsEverythingOnce(cluster, 0); // once the stage commit is done
      assertThat(dataFiles(cluster)).as("split files of a shuffle held in memory").isEmpty();
      assertThat(server.metrics().memoryTierCommits().getCount()).isEqualTo(PARTITIONS);
      assertThat(server.memory().held()).as("its bytes stay counted").isPositive();
      assertThat(server.metrics().memoryTierReads().getCount()).isGreaterThanOrEqualTo(PARTITIONS);
      assertThat(server.metrics().memoryTierSplits().getCount()).isEqualTo(PARTITIONS);
      assertThat(server.metrics().memoryTierBytes().getCount()).isEqualTo(server.memory().held());

      // memory pressure: the flush of the largest buffers reaches the memory tier
      server.registry().flushLargest(Long.MAX_VALUE);
      awaitHeldZero(server);
      assertThat(dataFiles(cluster)).hasSize(PARTITIONS);
      assertThat(server.metrics().memoryTierWritebacks().getCount()).isEqualTo(PARTITIONS);
      assertThat(server.metrics().memoryTierSplits().getCount()).isZero();
      assertThat(server.metrics().memoryTierBytes().getCount()).isZero();
      readsEverythingOnce(cluster, 0);

      // a graceful restart writes what is held first, and serves it after
      shuffle(cluster, 1);
      readsEverythingOnce(cluster, 1);
      assertThat(dataFiles(cluster)).hasSize(PARTITIONS);
      ShuffleServer restarted = cluster.restartServer(0);
      assertThat(restarted.recovery().lostShuffles()).isZero();
      assertThat(dataFiles(cluster)).hasSize(2 * PARTITIONS);
      readsEverythingOnce(cluster, 1);
      readsEverythingOnce(cluster, 0);
      assertThat(cluster.memoryHeld()).isZero();
    }
  }

  @Test
  void splitsHeldLongerThanTheWritebackAgeGoToTheirFiles() throws Exception {
    try (TestCluster cluster =
        TestCluster.start(
            tmp,
            1,
            Map.of(
                "sluice.storage.policy", "memory,local",
                "sluice.storage.memory.writebackAfter", "200ms"))) {
      shuffle(cluster, 0);
      readsEverythingOnce(cluster, 0);
      awaitHeldZero(cluster.server(0));
      assertThat(dataFiles(cluster)).hasSize(PARTITIONS);
      readsEverythingOnce(cluster, 0);
    }
  }

  private static void awaitHeldZero(ShuffleServer server) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (server.memory().held() > 0 && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    assertThat(server.memory().held()).as("memory held after the write-back").isZero();
  }
}
