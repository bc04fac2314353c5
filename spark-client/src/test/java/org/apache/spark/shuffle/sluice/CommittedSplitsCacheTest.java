package org.apache.spark.shuffle.sluice;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.client.coordinator.CoordinatorClient;
import io.sluice.client.push.MapOutputPusher;
import io.sluice.client.read.PartitionReader;
import io.sluice.client.read.ShuffleBatch;
import io.sluice.protocol.proto.CommittedShuffle;
import io.sluice.testutil.TestCluster;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Reduce tasks of one executor take the coordinator's answer from one block per shuffle, against a
 * real coordinator and server: each gets what the coordinator answers for its own range, and the
 * coordinator is asked once.
 */
class CommittedSplitsCacheTest {
  private static final int PARTITIONS = 50;
  private static final int MAPS = 4;
  private static final int SPARK_SHUFFLE = 7;

  @TempDir Path tmp;

  /**
   * Maps write to most partitions, each a few batches; map m skips partitions p with p % 5 == m.
   */
  private static void push(TestCluster cluster, int shuffleId) throws Exception {
    cluster.coordinator().registerShuffle(shuffleId, MAPS, PARTITIONS);
    for (int m = 0; m < MAPS; m++) {
      try (MapOutputPusher pusher = cluster.pusher(shuffleId, m, 0)) {
        for (int p = 0; p < PARTITIONS; p++) {
          if (p % 5 == m) {
            continue;
          }
          byte[] record = ("m" + m + "p" + p).repeat(1 + p % 7).getBytes(StandardCharsets.UTF_8);
          pusher.write(p, record, 0, record.length);
        }
        pusher.finish();
      }
    }
  }

  private static List<String> read(
      TestCluster cluster, int shuffleId, CommittedShuffle committed, int startMap, int endMap)
      throws Exception {
    List<String> out = new ArrayList<>();
    try (PartitionReader reader =
        new PartitionReader(
            cluster.context(), TestCluster.APP_ID, shuffleId, committed, startMap, endMap)) {
      for (ShuffleBatch b = reader.next(); b != null; b = reader.next()) {
        out.add(
            b.partitionId()
                + "/"
                + b.mapIndex()
                + "/"
                + new String(b.bytes(), 0, b.length(), StandardCharsets.UTF_8));
      }
    }
    out.sort(null);
    return out;
  }

  @Test
  void readersOfOneBlockAskOnceAndGetTheCoordinatorsAnswerForTheirRange() throws Exception {
    try (TestCluster cluster = TestCluster.start(tmp, 1)) {
      push(cluster, 0);
      CoordinatorClient coordinator = cluster.coordinatorClient();
      CommittedSplitsCache cache = new CommittedSplitsCache();
      for (int p = 0; p < PARTITIONS; p++) {
        CommittedShuffle cached =
            cache.committedSplits(
                coordinator, SPARK_SHUFFLE, 0, PARTITIONS, MAPS, p, p + 1, 0, MAPS);
        assertThat(cached)
            .as("partition %d", p)
            .isEqualTo(coordinator.committedSplits(0, p, p + 1, true, 0, MAPS));
        assertThat(read(cluster, 0, cached, 0, MAPS)).hasSize(MAPS - (p % 5 < MAPS ? 1 : 0));
      }
      // a coalesced range, and a skew split's maps of one partition: the reader reads the same
      CommittedShuffle range =
          cache.committedSplits(coordinator, SPARK_SHUFFLE, 0, PARTITIONS, MAPS, 10, 30, 0, MAPS);
      assertThat(range).isEqualTo(coordinator.committedSplits(0, 10, 30, true, 0, MAPS));
      CommittedShuffle skewSplit =
          cache.committedSplits(coordinator, SPARK_SHUFFLE, 0, PARTITIONS, MAPS, 8, 9, 1, 3);
      assertThat(read(cluster, 0, skewSplit, 1, 3))
          .isEqualTo(read(cluster, 0, coordinator.committedSplits(0, 8, 9, true, 1, 3), 1, 3))
          .hasSize(2);
      assertThat(cache.fetches()).isEqualTo(1);
      assertThat(cache.bytes()).isPositive();

      cache.forget(SPARK_SHUFFLE);
      assertThat(cache.bytes()).isZero();
      cache.committedSplits(coordinator, SPARK_SHUFFLE, 0, PARTITIONS, MAPS, 3, 4, 0, MAPS);
      assertThat(cache.fetches()).isEqualTo(2);
    }
  }

  @Test
  void answersPastTheBoundGoLeastRecentlyUsedFirst() throws Exception {
    try (TestCluster cluster = TestCluster.start(tmp, 1)) {
      push(cluster, 0);
      push(cluster, 1);
      CoordinatorClient coordinator = cluster.coordinatorClient();
      CommittedSplitsCache cache = new CommittedSplitsCache(1);
      cache.committedSplits(coordinator, 0, 0, PARTITIONS, MAPS, 0, 1, 0, MAPS);
      cache.committedSplits(coordinator, 1, 1, PARTITIONS, MAPS, 0, 1, 0, MAPS);
      // the newest answer stays even past the bound; the one before it went
      cache.committedSplits(coordinator, 1, 1, PARTITIONS, MAPS, 1, 2, 0, MAPS);
      assertThat(cache.fetches()).isEqualTo(2);
      cache.committedSplits(coordinator, 0, 0, PARTITIONS, MAPS, 1, 2, 0, MAPS);
      assertThat(cache.fetches()).isEqualTo(3);
    }
  }

  @Test
  void aBlockHoldsAtMostItsRecordBound() {
    assertThat(CommittedSplitsCache.blockPartitions(4)).isEqualTo(16384);
    assertThat(CommittedSplitsCache.blockPartitions(400)).isEqualTo(163);
    assertThat(CommittedSplitsCache.blockPartitions(100_000)).isEqualTo(1);
  }
}
