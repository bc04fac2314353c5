package io.sluice.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.client.push.MapOutputPusher;
import io.sluice.client.read.PartitionReader;
import io.sluice.client.read.ShuffleBatch;
import io.sluice.server.ShuffleServer;
import io.sluice.server.sort.SortMetrics;
import io.sluice.testutil.Records;
import io.sluice.testutil.TestCertificates;
import io.sluice.testutil.TestCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Map-index range reads against real servers: read in place from each split's map-run index, or
 * with sort-on-read, they return exactly the maps asked for.
 */
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

  private static long indexedReads(TestCluster cluster) {
    long n = 0;
    for (ShuffleServer s : cluster.servers()) {
      n += s.metrics().registry().meter(SortMetrics.PREFIX + "indexedRangeReads").getCount();
    }
    return n;
  }

  private static void assertRange(Records.Checker range, int startMap, int endMap) {
    for (int m = 0; m < MAPS; m++) {
      for (int p = 0; p < PARTITIONS; p++) {
        assertThat(range.count(m, p)).isEqualTo(m >= startMap && m < endMap ? RECORDS : 0);
      }
    }
  }

  /** Small buffers, flushes and chunks: many batches per map, segments and chunks per split. */
  private static Map<String, String> conf(String... more) {
    Map<String, String> conf = new HashMap<>();
    conf.put("sluice.push.bufferSize", "4k");
    conf.put("sluice.flush.size", "16k");
    conf.put("sluice.read.chunkSize", "64k");
    for (int i = 0; i < more.length; i += 2) {
      conf.put(more[i], more[i + 1]);
    }
    return conf;
  }

  @Test
  void rangeReadsComeFromTheMapRunIndexWithoutSorting() throws Exception {
    try (TestCluster cluster = TestCluster.start(tmp, 2, conf())) {
      writeAll(cluster);

      Records.Checker plain = read(cluster, 0, MAPS);
      assertThat(plain.records()).isEqualTo((long) MAPS * PARTITIONS * RECORDS);

      assertRange(read(cluster, 3, 7), 3, 7);
      assertRange(read(cluster, 9, 10), 9, 10);
      assertRange(read(cluster, 0, 1), 0, 1);
      assertThat(indexedReads(cluster)).isEqualTo(3L * PARTITIONS);
      assertThat(sorts(cluster)).isZero();
      assertThat(sortedFiles(tmp)).isZero();
    }
  }

  @Test
  void rangeReadsOverTlsReadEveryPieceOfTheirChunks() throws Exception {
    TestCertificates certs = TestCertificates.create(tmp.resolve("certs"), "cluster");
    Map<String, String> conf = conf();
    conf.putAll(certs.conf());
    try (TestCluster cluster = TestCluster.start(tmp.resolve("data"), 1, conf)) {
      writeAll(cluster);
      assertRange(read(cluster, 2, 5), 2, 5);
      assertThat(indexedReads(cluster)).isEqualTo(PARTITIONS);
      assertThat(sorts(cluster)).isZero();
    }
  }

  @Test
  void underSortMapRangesRangeReadsSortEachSplitOnce() throws Exception {
    try (TestCluster cluster =
        TestCluster.start(tmp, 2, conf("sluice.read.sortMapRanges", "true"))) {
      writeAll(cluster);
      assertThat(read(cluster, 0, MAPS).records()).isEqualTo((long) MAPS * PARTITIONS * RECORDS);
      assertThat(sorts(cluster)).isZero();

      assertRange(read(cluster, 3, 7), 3, 7);
      assertThat(sorts(cluster)).isEqualTo(PARTITIONS); // one split per partition
      assertThat(sortedFiles(tmp)).isEqualTo(PARTITIONS);

      // later range reads reuse the sorted copies
      Records.Checker single = read(cluster, 9, 10);
      assertThat(single.records()).isEqualTo((long) PARTITIONS * RECORDS);
      assertThat(sorts(cluster)).isEqualTo(PARTITIONS);
      assertThat(indexedReads(cluster)).isZero();
    }
  }

  @Test
  void concurrentRangeReadersEachGetTheirMaps() throws Exception {
    try (TestCluster cluster = TestCluster.start(tmp, 1, conf())) {
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
          assertRange(c, m, m + 1);
        }
      } finally {
        pool.shutdownNow();
      }
      assertThat(sorts(cluster)).isZero();
      assertThat(indexedReads(cluster)).isEqualTo((long) MAPS * PARTITIONS);
    }
  }
}
