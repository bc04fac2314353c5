package io.sluice.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.client.push.MapOutputPusher;
import io.sluice.client.read.PartitionReader;
import io.sluice.client.read.ShuffleBatch;
import io.sluice.server.ShuffleServer;
import io.sluice.server.sort.SortMetrics;
import io.sluice.testutil.Records;
import io.sluice.testutil.TestCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Map-index range reads against real servers: sort-on-read returns exactly the maps asked for. */
class MapRangeReadIT {
  private static final int MAPS = 10;
  private static final int PARTITIONS = 3;
  private static final int RECORDS = 60;

  @TempDir Path tmp;

  /** Every map writes RECORDS records to every partition, in small batches, interleaved. */
  private static void writeAll(TestCluster cluster) throws Exception {
    cluster.coordinator().registerShuffle(0, MAPS, PARTITIONS);
    List<MapOutputPusher> pushers = new ArrayList<>();
    for (int m = 0; m < MAPS; m++) {
      pushers.add(cluster.pusher(0, m, 0));
    }
    for (int seq = 0; seq < RECORDS; seq++) {
      for (int m = 0; m < MAPS; m++) {
        for (int p = 0; p < PARTITIONS; p++) {
          byte[] r = Records.record(m, p, seq, 600 + (seq * 37 + m) % 900);
          pushers.get(m).write(p, r, 0, r.length);
        }
      }
    }
    for (MapOutputPusher p : pushers) {
      p.finish();
      p.close();
    }
  }

  private static Records.Checker read(TestCluster cluster, int startMap, int endMap)
      throws Exception {
    Records.Checker checker = new Records.Checker();
    try (PartitionReader reader = cluster.reader(0, 0, PARTITIONS, startMap, endMap)) {
      ShuffleBatch batch;
      while ((batch = reader.next()) != null) {
        assertThat(batch.mapIndex()).isBetween(startMap, endMap - 1);
        checker.accept(batch.partitionId(), batch.payload());
      }
    }
    return checker;
  }

  private static long sorts(TestCluster cluster) {
    long n = 0;
    for (ShuffleServer s : cluster.servers()) {
      n += s.metrics().registry().meter(SortMetrics.PREFIX + "sorts").getCount();
    }
    return n;
  }

  private static long sortedFiles(Path root) throws Exception {
    try (Stream<Path> files = Files.walk(root)) {
      return files.filter(p -> p.toString().endsWith(".data.sorted")).count();
    }
  }

  @Test
  void rangeReadReturnsExactlyTheBatchesOfThoseMaps() throws Exception {
    // small buffers and chunks: many batches per map and several chunks per split
    Map<String, String> conf =
        Map.of("sluice.push.bufferSize", "4k", "sluice.read.chunkSize", "64k");
    try (TestCluster cluster = TestCluster.start(tmp, 2, conf)) {
      writeAll(cluster);

      Records.Checker plain = read(cluster, 0, MAPS);
      assertThat(plain.records()).isEqualTo((long) MAPS * PARTITIONS * RECORDS);
      assertThat(sorts(cluster)).isZero();
      assertThat(sortedFiles(tmp)).isZero();

      Records.Checker range = read(cluster, 3, 7);
      for (int m = 0; m < MAPS; m++) {
        for (int p = 0; p < PARTITIONS; p++) {
          assertThat(range.count(m, p)).isEqualTo(m >= 3 && m < 7 ? RECORDS : 0);
        }
      }
      assertThat(sorts(cluster)).isEqualTo(PARTITIONS); // one split per partition
      assertThat(sortedFiles(tmp)).isEqualTo(PARTITIONS);

      // later range reads reuse the sorted copies
      Records.Checker single = read(cluster, 9, 10);
      assertThat(single.records()).isEqualTo((long) PARTITIONS * RECORDS);
      assertThat(sorts(cluster)).isEqualTo(PARTITIONS);
    }
  }

  @Test
  void concurrentRangeReadersShareOneSortPerSplitAndEachGetsItsMaps() throws Exception {
    Map<String, String> conf =
        Map.of("sluice.push.bufferSize", "4k", "sluice.read.chunkSize", "64k");
    try (TestCluster cluster = TestCluster.start(tmp, 1, conf)) {
      writeAll(cluster);
      ExecutorService pool = Executors.newFixedThreadPool(MAPS);
      try {
        List<Future<Records.Checker>> readers = new ArrayList<>();
        for (int m = 0; m < MAPS; m++) {
          int map = m;
          readers.add(pool.submit(() -> read(cluster, map, map + 1)));
        }
        for (int m = 0; m < MAPS; m++) {
          Records.Checker c = readers.get(m).get(2, TimeUnit.MINUTES);
          assertThat(c.records()).isEqualTo((long) PARTITIONS * RECORDS);
          for (int p = 0; p < PARTITIONS; p++) {
            assertThat(c.count(m, p)).isEqualTo(RECORDS);
          }
        }
      } finally {
        pool.shutdownNow();
      }
      assertThat(sorts(cluster)).isEqualTo(PARTITIONS);
    }
  }
}
