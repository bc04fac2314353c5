package io.sluice.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.client.push.MapOutputPusher;
import io.sluice.client.read.PartitionReader;
import io.sluice.client.read.ShuffleBatch;
import io.sluice.protocol.proto.CommittedSplit;
import io.sluice.server.ShuffleServer;
import io.sluice.testutil.Records;
import io.sluice.testutil.TestCluster;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A decommission commits a server's open splits early and places them in the distributed tier
 * (Hadoop's local file system here; the end-to-end suite's SparkHdfsTierDecommissionIT runs it on a
 * MiniDFSCluster); the stage commit that follows commits the same splits again. Each split is
 * placed once: the stage commit reports the early placement, the file it names exists, and every
 * record reads back exactly once. Before, the second placement failed on the local file the first
 * one had moved, deleted the copy in the tier and reported the missing local file.
 */
class DistributedTierDecommissionIT {
  private static final int MAPS = 2;
  private static final int PARTITIONS = 6;
  private static final int RECORDS = 60;

  @TempDir Path tmp;

  private Map<String, String> tier() {
    return Map.of(
        "sluice.storage.policy",
        "local,hdfs",
        "sluice.storage.hdfs.dir",
        tmp.resolve("dfs").toUri().toString(),
        "sluice.storage.hdfs.minSplitSize",
        "0",
        "sluice.read.chunkSize",
        "2k");
  }

  private static void write(TestCluster cluster, int map) throws Exception {
    try (MapOutputPusher pusher = cluster.pusher(0, map, 0)) {
      for (int s = 0; s < RECORDS; s++) {
        for (int p = 0; p < PARTITIONS; p++) {
          byte[] r = Records.record(map, p, s, 100 + (s * 7 + p) % 50);
          pusher.write(p, r, 0, r.length);
        }
      }
      pusher.finish();
    }
  }

  private List<Path> files(String dir) throws IOException {
    try (Stream<Path> files = Files.walk(tmp.resolve(dir))) {
      return files
          .filter(f -> f.getFileName().toString().endsWith(".data"))
          .collect(Collectors.toList());
    }
  }

  @Test
  void splitsCommittedEarlyByADecommissionArePlacedOnceAndReadBackWhole() throws Exception {
    try (TestCluster cluster = TestCluster.start(tmp.resolve("cluster"), 1, tier())) {
      ShuffleServer server = cluster.server(0);
      cluster.coordinator().registerShuffle(0, MAPS, PARTITIONS);
      for (int m = 0; m < MAPS; m++) {
        write(cluster, m);
      }
      int early = server.decommission().get(1, TimeUnit.MINUTES);
      assertThat(early).as("open splits the decommission committed").isPositive();
      // at least the splits the decommission committed went to the tier (a split whose commit had
      // already started is placed by that commit, and not counted by the decommission)
      assertThat(server.metrics().hdfsTierSplits().getCount()).isGreaterThanOrEqualTo(early);

      cluster.coordinator().commit(0).get(1, TimeUnit.MINUTES);

      List<CommittedSplit> committed =
          cluster.coordinatorClient().committedSplits(0, 0, PARTITIONS).getSplitsList();
      assertThat(committed).hasSizeGreaterThanOrEqualTo(PARTITIONS);
      assertThat(files("dfs")).as("split files in the tier").hasSize(committed.size());
      assertThat(files("cluster")).as("split files left on local disk").isEmpty();
      for (CommittedSplit split : committed) {
        assertThat(split.getRemotePath()).as("partition %d", split.getPartitionId()).isNotEmpty();
        assertThat(Files.exists(Paths.get(URI.create(split.getRemotePath())))).isTrue();
      }

      Records.Checker checker = new Records.Checker();
      try (PartitionReader reader = cluster.reader(0, 0, PARTITIONS, 0, MAPS)) {
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
      // the stage commit placed nothing again, and so failed no placement
      assertThat(server.metrics().hdfsTierSplits().getCount())
          .as("splits moved to the tier after the stage commit")
          .isEqualTo(committed.size());
      assertThat(server.metrics().hdfsTierFailures().getCount()).isZero();
    }
  }
}
