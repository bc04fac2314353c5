package io.sluice.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.client.ClientContext;
import io.sluice.client.push.MapOutputPusher;
import io.sluice.client.read.PartitionReader;
import io.sluice.client.read.ShuffleBatch;
import io.sluice.protocol.MessageType;
import io.sluice.protocol.Messages;
import io.sluice.protocol.SplitPages;
import io.sluice.protocol.proto.CommitShuffle;
import io.sluice.protocol.proto.CommittedShuffle;
import io.sluice.protocol.proto.CommittedSplit;
import io.sluice.protocol.proto.GetCommittedSplits;
import io.sluice.protocol.proto.GetShuffleLocations;
import io.sluice.protocol.proto.Response;
import io.sluice.protocol.proto.ServerAddress;
import io.sluice.testutil.Records;
import io.sluice.testutil.TestCluster;
import java.nio.file.Path;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A shuffle with 16,777,217 partitions, one more than Spark's serialized-mode maximum (Spark's
 * SPARK-48037 test), against real servers: it registers, a few partitions are pushed, committed and
 * read back, and no coordinator answer grows with the partition count.
 */
class ManyPartitionsIT {
  static final int PARTITIONS = 16_777_217;
  private static final int MAPS = 2;
  private static final int RECORDS = 5;
  private static final int[] WRITTEN = {0, 1, 2, 8_388_608, PARTITIONS - 2, PARTITIONS - 1};

  @TempDir Path tmp;

  /** The coordinator's raw answer to GetShuffleLocations, as a map task receives it. */
  private static Response locationsAnswer(TestCluster cluster, int shuffleId) throws Exception {
    ServerAddress coordinator = ClientContext.address("127.0.0.1", cluster.coordinator().port());
    return cluster
        .context()
        .call(
            null,
            coordinator,
            id ->
                Messages.request(
                    MessageType.GET_SHUFFLE_LOCATIONS,
                    GetShuffleLocations.newBuilder()
                        .setRequestId(id)
                        .setShuffleId(shuffleId)
                        .build(),
                    id));
  }

  private static Records.Checker read(
      TestCluster cluster, int start, int end, int startMap, int endMap) throws Exception {
    return read(cluster, 0, start, end, startMap, endMap);
  }

  private static Records.Checker read(
      TestCluster cluster, int shuffleId, int start, int end, int startMap, int endMap)
      throws Exception {
    Records.Checker checker = new Records.Checker();
    try (PartitionReader reader = cluster.reader(shuffleId, start, end, startMap, endMap)) {
      ShuffleBatch batch;
      while ((batch = reader.next()) != null) {
        assertThat(batch.mapIndex()).isBetween(startMap, endMap - 1);
        checker.accept(batch.partitionId(), batch.payload());
      }
    }
    return checker;
  }

  @Test
  void sixteenMillionPartitionsRegisterPushCommitAndReadBack() throws Exception {
    try (TestCluster cluster = TestCluster.start(tmp, 3)) {
      cluster.coordinator().registerShuffle(0, MAPS, PARTITIONS);
      Response answer = locationsAnswer(cluster, 0);
      assertThat(answer.getSerializedSize())
          .as("GetShuffleLocations answer bytes for %d partitions", PARTITIONS)
          .isLessThan(1024);

      for (int m = 0; m < MAPS; m++) {
        try (MapOutputPusher pusher = cluster.pusher(0, m, 0)) {
          for (int seq = 0; seq < RECORDS; seq++) {
            for (int p : WRITTEN) {
              byte[] r = Records.record(m, p, seq, 100 + seq * 50);
              pusher.write(p, r, 0, r.length);
            }
          }
          pusher.finish();
        }
      }

      for (int p : WRITTEN) {
        Records.Checker one = read(cluster, p, p + 1, 0, MAPS);
        for (int m = 0; m < MAPS; m++) {
          assertThat(one.count(m, p)).as("map %d partition %d", m, p).isEqualTo(RECORDS);
        }
      }
      Records.Checker all = read(cluster, 0, PARTITIONS, 0, MAPS);
      assertThat(all.records()).isEqualTo((long) MAPS * WRITTEN.length * RECORDS);
      Records.Checker secondMap = read(cluster, 0, PARTITIONS, 1, 2);
      assertThat(secondMap.records()).isEqualTo((long) WRITTEN.length * RECORDS);
      assertThat(secondMap.count(1, PARTITIONS - 1)).isEqualTo(RECORDS);
      assertThat(cluster.memoryHeld()).isZero();
    }
  }

  @Test
  void answersLongerThanAPageArePagedAndJoinedAgain() throws Exception {
    // ~16 bytes a split from the server, ~33 with its address from the coordinator: more than a
    // page (256 KiB) from both
    int partitions = 20_000;
    try (TestCluster cluster = TestCluster.start(tmp, 1)) {
      cluster.coordinator().registerShuffle(1, 1, partitions);
      try (MapOutputPusher pusher = cluster.pusher(1, 0, 0)) {
        for (int p = 0; p < partitions; p++) {
          byte[] r = Records.record(0, p, 0, 8);
          pusher.write(p, r, 0, r.length);
        }
        pusher.finish();
      }
      ServerAddress server = cluster.addresses().get(0);
      Response serverPage =
          cluster
              .context()
              .call(
                  null,
                  server,
                  id ->
                      Messages.request(
                          MessageType.COMMIT_SHUFFLE,
                          CommitShuffle.newBuilder()
                              .setRequestId(id)
                              .setAppId(TestCluster.APP_ID)
                              .setShuffleId(1)
                              .build(),
                          id));
      assertThat(serverPage.getSerializedSize()).isLessThan(SplitPages.MAX_PAGE_BYTES + 64);
      assertThat(serverPage.getCommit().hasNext()).as("the server's answer is paged").isTrue();

      ServerAddress coordinator = ClientContext.address("127.0.0.1", cluster.coordinator().port());
      Response coordinatorPage =
          cluster
              .context()
              .call(
                  TestCluster.APP_ID,
                  coordinator,
                  id ->
                      Messages.request(
                          MessageType.GET_COMMITTED_SPLITS,
                          GetCommittedSplits.newBuilder()
                              .setRequestId(id)
                              .setShuffleId(1)
                              .setStartPartition(0)
                              .setEndPartition(partitions)
                              .build(),
                          id));
      assertThat(coordinatorPage.getSerializedSize()).isLessThan(SplitPages.MAX_PAGE_BYTES + 64);
      assertThat(coordinatorPage.getCommitted().hasNext()).as("the coordinator's answer").isTrue();

      CommittedShuffle all = cluster.coordinatorClient().committedSplits(1, 0, partitions);
      assertThat(all.getSplitsList())
          .extracting(CommittedSplit::getPartitionId)
          .containsExactlyElementsOf(
              IntStream.range(0, partitions).boxed().collect(Collectors.toList()));
      assertThat(all.hasNext()).isFalse();
      for (int p : new int[] {0, partitions / 2, partitions - 1}) {
        assertThat(read(cluster, 1, p, p + 1, 0, 1).count(0, p)).isEqualTo(1);
      }
    }
  }
}
