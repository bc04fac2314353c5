package io.sluice.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.client.PartitionLocations;
import io.sluice.client.push.MapOutputPusher;
import io.sluice.client.read.PartitionReader;
import io.sluice.client.read.ShuffleBatch;
import io.sluice.protocol.StatusException;
import io.sluice.protocol.proto.CommittedShuffle;
import io.sluice.protocol.proto.Status;
import io.sluice.testutil.Records;
import io.sluice.testutil.TestCluster;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A shuffle rewritten after its commit (an engine's stage rerun) goes to a new generation. */
class ShuffleGenerationsIT {
  @TempDir Path tmp;

  private static void write(TestCluster cluster, PartitionLocations gen, int map, int attempt)
      throws Exception {
    try (MapOutputPusher pusher =
        new MapOutputPusher(
            cluster.context(),
            cluster.coordinatorClient(),
            TestCluster.APP_ID,
            gen.shuffleId(),
            map,
            attempt,
            gen)) {
      for (int p = 0; p < 2; p++) {
        for (int seq = 0; seq < 5; seq++) {
          byte[] r = Records.record(map, p, seq, 100 + attempt);
          pusher.write(p, r, 0, r.length);
        }
      }
      pusher.finish();
    }
  }

  private static long read(TestCluster cluster, int shuffleId, boolean commitNow) throws Exception {
    CommittedShuffle committed =
        cluster.coordinatorClient().committedSplits(shuffleId, 0, 2, commitNow);
    Records.Checker checker = new Records.Checker();
    try (PartitionReader reader =
        new PartitionReader(cluster.context(), TestCluster.APP_ID, shuffleId, committed, 0, 2)) {
      ShuffleBatch b;
      while ((b = reader.next()) != null) {
        checker.accept(b.partitionId(), b.payload());
      }
    }
    return checker.records();
  }

  @Test
  void rerunAfterCommitWritesANewGenerationThatNeverMixesWithTheOld() throws Exception {
    try (TestCluster cluster = TestCluster.start(tmp, 2)) {
      cluster.coordinator().registerShuffle(5, 2, 2);
      PartitionLocations first = cluster.coordinatorClient().openGeneration(5);
      assertThat(first.shuffleId()).isEqualTo(5);
      write(cluster, first, 0, 0);
      write(cluster, first, 1, 0); // the last map: the coordinator commits generation 5
      assertThat(read(cluster, 5, false)).isEqualTo(20);

      // a rerun of map 0 after the commit gets a new generation
      PartitionLocations second = cluster.coordinatorClient().openGeneration(5);
      assertThat(second.shuffleId()).isNotEqualTo(5);
      assertThat(cluster.coordinatorClient().openGeneration(5).shuffleId())
          .isEqualTo(second.shuffleId());
      write(cluster, second, 0, 1);
      // only map 0 ran in it: the reader vouches that it ended and commits it
      assertThat(read(cluster, second.shuffleId(), true)).isEqualTo(10);
      assertThat(read(cluster, 5, false)).isEqualTo(20);

      // a committed generation takes no more partitions moves
      assertThatThrownBy(() -> cluster.coordinatorClient().reviveAsync(5, 0, 0, "test").join())
          .cause()
          .isInstanceOf(StatusException.class)
          .satisfies(e -> assertThat(((StatusException) e).status()).isEqualTo(Status.BAD_REQUEST))
          .hasMessageContaining("committed");

      cluster.coordinator().unregisterShuffle(5);
      assertThat(cluster.server(0).registry().get(TestCluster.APP_ID, 5)).isNull();
      assertThat(cluster.server(0).registry().get(TestCluster.APP_ID, second.shuffleId())).isNull();
      assertThat(cluster.server(1).registry().get(TestCluster.APP_ID, second.shuffleId())).isNull();
    }
  }

  /**
   * A map attempt that reported its end and was then discarded by the engine (its task failed after
   * the report), and its rerun: when the readers start the commit (Spark), the stale report does
   * not commit the generation under the rerun, whose pushes were refused STAGE_ENDED before.
   */
  @Test
  void aStaleMapEndDoesNotCommitUnderItsRerunWhenReadersStartTheCommit() throws Exception {
    try (TestCluster cluster = TestCluster.start(tmp, 2)) {
      cluster.coordinator().commitWhenReadersAsk();
      cluster.coordinator().registerShuffle(7, 2, 2);
      PartitionLocations gen = cluster.coordinatorClient().openGeneration(7);
      write(cluster, gen, 0, 0);
      write(cluster, gen, 1, 0); // reported its end; the engine then discards this attempt
      write(cluster, gen, 1, 1); // the rerun pushes to the same generation
      assertThat(cluster.coordinatorClient().openGeneration(7).shuffleId())
          .as("the generation is still open")
          .isEqualTo(gen.shuffleId());
      assertThat(read(cluster, gen.shuffleId(), true)).isEqualTo(20);
    }
  }
}
