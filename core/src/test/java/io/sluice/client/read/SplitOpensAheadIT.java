package io.sluice.client.read;

import static org.assertj.core.api.Assertions.assertThat;

import com.codahale.metrics.Meter;
import io.sluice.client.push.MapOutputPusher;
import io.sluice.protocol.MapRanges;
import io.sluice.protocol.proto.CommittedShuffle;
import io.sluice.protocol.proto.CommittedSplit;
import io.sluice.testutil.Records;
import io.sluice.testutil.TestCluster;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A reader of many small splits has the next ones on their way while it reads one. */
class SplitOpensAheadIT {
  @TempDir Path tmp;

  @Test
  void theNextSmallSplitsComeWhileTheFirstIsRead() throws Exception {
    int partitions = 6;
    try (TestCluster cluster = TestCluster.start(tmp, 1)) {
      cluster.coordinator().registerShuffle(0, 1, partitions);
      try (MapOutputPusher pusher = cluster.pusher(0, 0, 0)) {
        for (int p = 0; p < partitions; p++) {
          for (int seq = 0; seq < 3; seq++) {
            byte[] r = Records.record(0, p, seq, 1000);
            pusher.write(p, r, 0, r.length);
          }
        }
        pusher.finish();
      }
      CommittedShuffle committed = cluster.coordinatorClient().committedSplits(0, 0, partitions);
      List<CommittedSplit> splits =
          committed.getSplitsList().stream()
              .sorted(Comparator.comparingInt(CommittedSplit::getPartitionId))
              .collect(Collectors.toList());
      assertThat(splits).hasSize(partitions);
      // each comes whole with the answer to opening it: one chunk, under the 1 MiB default
      assertThat(splits).allSatisfy(s -> assertThat(s.getChunkOffsetsCount()).isEqualTo(2));
      Meter served = cluster.server(0).metrics().bytesRead();

      Records.Checker checker = new Records.Checker();
      try (PartitionReader reader = cluster.reader(0, 0, partitions, 0, 1)) {
        ShuffleBatch first = reader.next();
        assertThat(first.partitionId()).isZero();
        checker.accept(first.partitionId(), first.payload());
        // partition 0's split was read to hand out its first batch; the next two
        // (sluice.read.prefetchChunks) are on their way before the reader asks for them
        long threeSplits =
            splits.get(0).getLength() + splits.get(1).getLength() + splits.get(2).getLength();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (served.getCount() < threeSplits && System.nanoTime() < deadline) {
          Thread.sleep(5);
        }
        assertThat(served.getCount()).isEqualTo(threeSplits);

        ShuffleBatch b;
        while ((b = reader.next()) != null) {
          checker.accept(b.partitionId(), b.payload());
        }
      }
      assertThat(checker.records()).isEqualTo(3L * partitions);
      long all = splits.stream().mapToLong(CommittedSplit::getLength).sum();
      assertThat(served.getCount()).isEqualTo(all);
    }
  }

  /**
   * A map-range read of splits that hold nothing of its maps: each open sent ahead is answered with
   * an empty stream, which is closed on the connection that opened it (not on another of the
   * pool's), so the server holds no stream once the reader is done.
   */
  @Test
  void aMapRangeReadOfSplitsWithoutItsMapsLeavesNoStreamOpen() throws Exception {
    int partitions = 12;
    try (TestCluster cluster =
        TestCluster.start(tmp, 1, Map.of("sluice.network.connectionsPerServer", "8"))) {
      // the even maps write every partition, map 1 only partition 0, the other odd maps nothing:
      // each split's maps are more
      // runs than its metadata lists (MapRanges.MAX_RANGES), so it may hold any map as far as the
      // reader can tell, but only partition 0's holds anything of map 1
      int maps = 2 * (MapRanges.MAX_RANGES + 1) + 1;
      cluster.coordinator().registerShuffle(0, maps, partitions);
      for (int map = 0; map < maps; map += 2) {
        try (MapOutputPusher pusher = cluster.pusher(0, map, 0)) {
          for (int p = 0; p < partitions; p++) {
            byte[] r = Records.record(map, p, 0, 100);
            pusher.write(p, r, 0, r.length);
          }
          pusher.finish();
        }
      }
      for (int map = 1; map < maps; map += 2) {
        try (MapOutputPusher pusher = cluster.pusher(0, map, 0)) {
          if (map == 1) {
            byte[] r = Records.record(1, 0, 0, 100);
            pusher.write(0, r, 0, r.length);
          }
          pusher.finish();
        }
      }

      Records.Checker checker = new Records.Checker();
      try (PartitionReader reader = cluster.reader(0, 0, partitions, 1, 2)) {
        ShuffleBatch b;
        while ((b = reader.next()) != null) {
          checker.accept(b.partitionId(), b.payload());
        }
      }
      assertThat(checker.records()).as("map 1's one record").isEqualTo(1);
      // closes are sent without waiting for their answers
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (cluster.server(0).openStreamCount() > 0 && System.nanoTime() < deadline) {
        Thread.sleep(5);
      }
      assertThat(cluster.server(0).openStreamCount()).as("streams left open").isZero();
    }
  }
}
