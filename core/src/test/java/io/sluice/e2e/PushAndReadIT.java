package io.sluice.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.client.push.MapOutputPusher;
import io.sluice.client.read.PartitionReader;
import io.sluice.client.read.ShuffleBatch;
import io.sluice.server.ShuffleServer;
import io.sluice.testutil.Records;
import io.sluice.testutil.SplitFileBytes;
import io.sluice.testutil.TestCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Real servers and clients on loopback: what goes in comes out exactly once. */
class PushAndReadIT {
  @TempDir Path tmp;

  /** Writes {@code recordsPerPartition} random-sized records per partition; returns counts. */
  private static int[][] runMap(
      TestCluster cluster, int shuffleId, int map, int attempt, int partitions, int perPartition)
      throws Exception {
    Random random = new Random(map * 31L + attempt);
    int[][] counts = new int[1][partitions];
    try (MapOutputPusher pusher = cluster.pusher(shuffleId, map, attempt)) {
      int[] seq = new int[partitions];
      for (int i = 0; i < partitions * perPartition; i++) {
        int p = random.nextInt(partitions);
        int size = random.nextInt(10) == 0 ? 20_000 + random.nextInt(100_000) : random.nextInt(400);
        byte[] r = Records.record(map, p, seq[p]++, size);
        pusher.write(p, r, 0, r.length);
      }
      pusher.finish();
      counts[0] = seq;
    }
    return counts;
  }

  private static Records.Checker readAll(
      TestCluster cluster, int shuffleId, int partitions, int maps) throws Exception {
    Records.Checker checker = new Records.Checker();
    try (PartitionReader reader = cluster.reader(shuffleId, 0, partitions, 0, maps)) {
      ShuffleBatch batch;
      while ((batch = reader.next()) != null) {
        checker.accept(batch.partitionId(), batch.payload());
      }
    }
    return checker;
  }

  @Test
  void manyConcurrentPushersEveryByteReadBackOnce() throws Exception {
    int maps = 12;
    int partitions = 64;
    try (TestCluster cluster = TestCluster.start(tmp, 2)) {
      cluster.coordinator().registerShuffle(0, maps, partitions);
      ExecutorService pool = Executors.newFixedThreadPool(6);
      List<Future<int[][]>> results = new ArrayList<>();
      for (int m = 0; m < maps; m++) {
        int map = m;
        results.add(pool.submit(() -> runMap(cluster, 0, map, 0, partitions, 40)));
      }
      int[][] expected = new int[maps][];
      for (int m = 0; m < maps; m++) {
        expected[m] = results.get(m).get(5, TimeUnit.MINUTES)[0];
      }
      pool.shutdown();

      Records.Checker checker = readAll(cluster, 0, partitions, maps);
      for (int m = 0; m < maps; m++) {
        for (int p = 0; p < partitions; p++) {
          assertThat(checker.count(m, p)).as("map %d partition %d", m, p).isEqualTo(expected[m][p]);
        }
      }
      assertThat(cluster.memoryHeld()).isZero();
      // partitions were spread over both servers
      for (ShuffleServer s : cluster.servers()) {
        assertThat(s.metrics().bytesFlushed().getCount()).isPositive();
      }
    }
  }

  @Test
  void losingAttemptIsInvisibleAndOnlyTheFirstReportedAttemptCounts() throws Exception {
    try (TestCluster cluster = TestCluster.start(tmp, 1)) {
      cluster.coordinator().registerShuffle(3, 2, 4);
      // map 0: attempt 1 pushes but never reports; attempt 0 reports
      MapOutputPusher loser = cluster.pusher(3, 0, 1);
      byte[] junk = Records.record(0, 1, 99, 100);
      loser.write(1, junk, 0, junk.length);
      runMap(cluster, 3, 0, 0, 4, 5);
      // the loser finishing late does not replace the winner
      loser.finish();
      runMap(cluster, 3, 1, 0, 4, 5);

      Records.Checker checker = readAll(cluster, 3, 4, 2);
      assertThat(checker.records()).isEqualTo(2 * 4 * 5);
    }
  }

  @Test
  void rangeOfMapIndexesReadsOnlyThoseMaps() throws Exception {
    try (TestCluster cluster = TestCluster.start(tmp, 1)) {
      cluster.coordinator().registerShuffle(4, 4, 3);
      int[][][] counts = new int[4][][];
      for (int m = 0; m < 4; m++) {
        counts[m] = runMap(cluster, 4, m, 0, 3, 10);
      }
      Records.Checker checker = new Records.Checker();
      List<Integer> mapsSeen = new ArrayList<>();
      try (PartitionReader reader = cluster.reader(4, 0, 3, 1, 3)) {
        ShuffleBatch b;
        while ((b = reader.next()) != null) {
          mapsSeen.add(b.mapIndex());
          checker.accept(b.partitionId(), b.payload());
        }
      }
      assertThat(mapsSeen).containsOnly(1, 2);
      for (int p = 0; p < 3; p++) {
        assertThat(checker.count(1, p)).isEqualTo(counts[1][0][p]);
        assertThat(checker.count(2, p)).isEqualTo(counts[2][0][p]);
      }
    }
  }

  @Test
  void unregisteredShuffleLeavesNoFiles() throws Exception {
    try (TestCluster cluster = TestCluster.start(tmp, 2)) {
      cluster.coordinator().registerShuffle(5, 2, 8);
      runMap(cluster, 5, 0, 0, 8, 20);
      runMap(cluster, 5, 1, 0, 8, 20);
      cluster.coordinator().committed(5).get(1, TimeUnit.MINUTES);
      assertThat(dataFiles(tmp)).isNotEmpty();

      cluster.coordinator().unregisterShuffle(5);
      assertThat(dataFiles(tmp)).isEmpty();
      assertThatThrownBy(() -> cluster.coordinatorClient().locations(5))
          .hasMessageContaining("shuffle 5 is not registered");
    }
  }

  @Test
  void emptyPartitionsAndEmptyMapsReadAsNothing() throws Exception {
    try (TestCluster cluster = TestCluster.start(tmp, 1)) {
      cluster.coordinator().registerShuffle(6, 2, 5);
      try (MapOutputPusher p = cluster.pusher(6, 0, 0)) {
        byte[] r = Records.record(0, 2, 0, 10);
        p.write(2, r, 0, r.length);
        p.finish();
      }
      try (MapOutputPusher p = cluster.pusher(6, 1, 0)) {
        p.finish();
      }
      Records.Checker checker = readAll(cluster, 6, 5, 2);
      assertThat(checker.records()).isEqualTo(1);
    }
  }

  /** A reader remembers one run of ids per (partition, map) only if the pusher numbers them so. */
  @Test
  void batchIdsCountFromZeroPerMapAndPartition() throws Exception {
    int partitions = 6;
    Map<String, String> conf =
        Map.of("sluice.push.compression", "none", "sluice.push.bufferSize", "4k");
    try (TestCluster cluster = TestCluster.start(tmp, 2, conf)) {
      cluster.coordinator().registerShuffle(7, 2, partitions);
      for (int map = 0; map < 2; map++) {
        try (MapOutputPusher pusher = cluster.pusher(7, map, 0)) {
          for (int seq = 0; seq < 30; seq++) {
            for (int p = 0; p < partitions; p++) {
              byte[] r = Records.record(map, p, seq, 2000);
              pusher.write(p, r, 0, r.length);
            }
          }
          pusher.finish();
        }
      }
      cluster.coordinator().committed(7).get(1, TimeUnit.MINUTES);
      Map<List<Integer>, List<Integer>> ids =
          new java.util.TreeMap<>(
              java.util.Comparator.comparing((List<Integer> k) -> k.get(0))
                  .thenComparing(k -> k.get(1)));
      for (Path file : dataFiles(tmp)) {
        byte[] bytes = Files.readAllBytes(file);
        java.nio.ByteBuffer b =
            java.nio.ByteBuffer.wrap(bytes, 0, SplitFileBytes.dataLength(bytes));
        while (b.hasRemaining()) {
          b.getInt(); // magic, version, flags
          int map = b.getInt();
          b.getInt();
          int batchId = b.getInt();
          int length = b.getInt();
          b.getInt(); // checksum
          int partition = b.getInt(b.position() + 4); // the first record's header names it
          b.position(b.position() + length);
          ids.computeIfAbsent(List.of(partition, map), k -> new ArrayList<>()).add(batchId);
        }
      }
      assertThat(ids).hasSize(2 * partitions);
      ids.forEach(
          (key, seen) -> {
            seen.sort(null);
            assertThat(seen)
                .as("batch ids of (partition, map) %s", key)
                .hasSize(15)
                .isEqualTo(
                    java.util.stream.IntStream.range(0, 15)
                        .boxed()
                        .collect(java.util.stream.Collectors.toList()));
          });
    }
  }

  static List<Path> dataFiles(Path root) throws Exception {
    try (Stream<Path> walk = Files.walk(root)) {
      return walk.filter(p -> p.toString().contains(".data"))
          .collect(java.util.stream.Collectors.toList());
    }
  }

  static Map<String, String> conf(String... kv) {
    java.util.HashMap<String, String> m = new java.util.HashMap<>();
    for (int i = 0; i < kv.length; i += 2) {
      m.put(kv[i], kv[i + 1]);
    }
    return m;
  }

  @Test
  void readersDecompressEveryBatchIntoOneReusedBuffer() throws Exception {
    try (TestCluster cluster = TestCluster.start(tmp, 1, Map.of("sluice.push.bufferSize", "4k"))) {
      cluster.coordinator().registerShuffle(9, 1, 1);
      try (MapOutputPusher pusher = cluster.pusher(9, 0, 0)) {
        for (int seq = 0; seq < 40; seq++) {
          byte[] r = Records.record(0, 0, seq, 1000);
          pusher.write(0, r, 0, r.length);
        }
        pusher.finish();
      }
      Records.Checker checker = new Records.Checker();
      java.util.Set<byte[]> buffers =
          java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
      int batches = 0;
      try (PartitionReader reader = cluster.reader(9, 0, 1, 0, 1)) {
        for (ShuffleBatch batch = reader.next(); batch != null; batch = reader.next()) {
          checker.accept(batch.partitionId(), batch.payload());
          buffers.add(batch.bytes());
          batches++;
        }
      }
      assertThat(checker.count(0, 0)).isEqualTo(40);
      assertThat(batches).isGreaterThan(5);
      assertThat(buffers).as("one decompression buffer for every batch of the read").hasSize(1);
    }
  }
}
