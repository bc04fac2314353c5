package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.client.push.MapOutputPusher;
import io.sluice.client.read.PartitionReader;
import io.sluice.client.read.ShuffleBatch;
import io.sluice.protocol.proto.CommittedShuffle;
import io.sluice.protocol.proto.CommittedSplit;
import io.sluice.server.storage.DataDirectory;
import io.sluice.testutil.Records;
import io.sluice.testutil.TestCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A data directory that dies mid-shuffle costs no acknowledged byte. */
class DiskFailureIT {
  @TempDir Path tmp;

  private static void push(MapOutputPusher pusher, int map, int partitions, int from, int to)
      throws Exception {
    for (int s = from; s < to; s++) {
      for (int p = 0; p < partitions; p++) {
        byte[] r = Records.record(map, p, s, 300 + (s * 7) % 900);
        pusher.write(p, r, 0, r.length);
      }
    }
  }

  @Test
  void shuffleCompletesOnTheOtherDirectoryWithAllData() throws Exception {
    int partitions = 12;
    try (TestCluster cluster =
        TestCluster.start(
            tmp, 1, Map.of("sluice.flush.size", "16k", "sluice.push.bufferSize", "4k"))) {
      ShuffleServer server = cluster.server(0);
      cluster.coordinator().registerShuffle(0, 2, partitions);
      MapOutputPusher first = cluster.pusher(0, 0, 0);
      MapOutputPusher second = cluster.pusher(0, 1, 0);
      push(first, 0, partitions, 0, 100);
      push(second, 1, partitions, 0, 100);

      // disk1 disappears: its directory is replaced by a plain file, so nothing can be created
      // in it any more; files already open there are unlinked
      Path disk1 = tmp.resolve("server0").resolve("disk1");
      replaceWithAFile(disk1);
      server.checkDisks();
      DataDirectory failed =
          server.dataDirectories().all().stream()
              .filter(d -> d.root().equals(disk1))
              .findFirst()
              .orElseThrow();
      assertThat(failed.health()).isEqualTo(DataDirectory.Health.FAILED);

      push(first, 0, partitions, 100, 200);
      push(second, 1, partitions, 100, 200);
      first.finish();
      second.finish();

      CommittedShuffle committed = cluster.coordinatorClient().committedSplits(0, 0, partitions);
      assertThat(committed.getNumLostPartitions()).isZero();
      Records.Checker checker = new Records.Checker();
      try (PartitionReader reader = cluster.reader(0, 0, partitions, 0, 2)) {
        ShuffleBatch b;
        while ((b = reader.next()) != null) {
          checker.accept(b.partitionId(), b.payload());
        }
      }
      for (int m = 0; m < 2; m++) {
        for (int p = 0; p < partitions; p++) {
          assertThat(checker.count(m, p)).as("map %d partition %d", m, p).isEqualTo(200);
        }
      }
      // every committed file is on the healthy directory (the dead one keeps what it held)
      List<Path> committedFiles =
          dataFiles(tmp.resolve("server0")).stream()
              .filter(f -> f.getFileName().toString().endsWith(".data"))
              .collect(Collectors.toList());
      assertThat(committedFiles)
          .isNotEmpty()
          .allMatch(f -> f.startsWith(tmp.resolve("server0").resolve("disk2")));
      assertThat(cluster.memoryHeld()).isZero();
    }
  }

  @Test
  void partitionLargerThanTheSplitThresholdSpansSeveralSplitsAndReadsBackWhole() throws Exception {
    try (TestCluster cluster =
        TestCluster.start(
            tmp,
            2,
            // one batch in flight at a time, so each SOFT_SPLIT is seen before the batch after
            // next is pushed and the number of splits does not depend on timing
            Map.of(
                "sluice.split.threshold", "64k",
                "sluice.push.bufferSize", "8k",
                "sluice.push.maxInFlightBytesPerServer", "4k"))) {
      cluster.coordinator().registerShuffle(0, 1, 2);
      try (MapOutputPusher pusher = cluster.pusher(0, 0, 0)) {
        push(pusher, 0, 2, 0, 1000); // about 600 KiB per partition
        pusher.finish();
      }
      CommittedShuffle committed = cluster.coordinatorClient().committedSplits(0, 0, 2);
      for (int p = 0; p < 2; p++) {
        int partition = p;
        List<CommittedSplit> splits =
            committed.getSplitsList().stream()
                .filter(s -> s.getPartitionId() == partition)
                .collect(Collectors.toList());
        // about 600 KiB over a 64 KiB threshold
        assertThat(splits.size()).as("splits of partition %d", p).isGreaterThanOrEqualTo(5);
      }
      Records.Checker checker = new Records.Checker();
      try (PartitionReader reader = cluster.reader(0, 0, 2, 0, 1)) {
        ShuffleBatch b;
        while ((b = reader.next()) != null) {
          checker.accept(b.partitionId(), b.payload());
        }
      }
      assertThat(checker.count(0, 0)).isEqualTo(1000);
      assertThat(checker.count(0, 1)).isEqualTo(1000);
    }
  }

  static List<Path> dataFiles(Path root) throws Exception {
    try (Stream<Path> walk = Files.walk(root)) {
      return walk.filter(Files::isRegularFile)
          .filter(p -> p.getFileName().toString().contains(".data"))
          .collect(Collectors.toList());
    }
  }

  /**
   * Puts a plain file where the directory was. The server may be creating files in it meanwhile, so
   * the directory is renamed away (its open files stay usable, as on a disk that died) and the swap
   * is repeated until a file holds the path.
   */
  private static void replaceWithAFile(Path dir) throws Exception {
    for (int i = 0; !Files.isRegularFile(dir); i++) {
      if (Files.isDirectory(dir)) {
        Files.move(dir, dir.resolveSibling(dir.getFileName() + ".gone-" + i));
      }
      try {
        Files.writeString(dir, "not a directory", java.nio.file.StandardOpenOption.CREATE_NEW);
      } catch (java.nio.file.FileAlreadyExistsException e) {
        // the server created the directory again between the two steps: move it away again
      }
    }
  }
}
