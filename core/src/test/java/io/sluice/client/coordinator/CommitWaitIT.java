package io.sluice.client.coordinator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.channel.Channel;
import io.sluice.client.ClientContext;
import io.sluice.common.SluiceConf;
import io.sluice.network.Message;
import io.sluice.network.NetworkConf;
import io.sluice.network.RequestHandler;
import io.sluice.network.TransportServer;
import io.sluice.protocol.MessageType;
import io.sluice.protocol.Messages;
import io.sluice.protocol.SluiceProtocol;
import io.sluice.protocol.StatusException;
import io.sluice.protocol.proto.CommittedShuffle;
import io.sluice.protocol.proto.Status;
import io.sluice.testutil.Records;
import io.sluice.testutil.TestCluster;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A reader's wait for a commit is bounded by {@code sluice.coordinator.commitTimeout} (set small
 * here) and ends with an error naming the application, the shuffle, the partitions and what never
 * happened: maps that never reported their end, or a server that never answered the commit. A
 * shuffle unregistered while readers wait answers them at once, and a shuffle without maps needs no
 * wait at all.
 */
class CommitWaitIT {
  @TempDir Path tmp;

  private static void writeMap(TestCluster cluster, int shuffleId, int map) throws Exception {
    try (var pusher = cluster.pusher(shuffleId, map, 0)) {
      for (int p = 0; p < 2; p++) {
        byte[] r = Records.record(map, p, 0, 64);
        pusher.write(p, r, 0, r.length);
      }
      pusher.finish();
    }
  }

  @Test
  void aReaderOfAShuffleWhoseMapsNeverReportFailsWithinTheBoundNamingThem() throws Exception {
    try (TestCluster cluster =
        TestCluster.start(tmp, 1, Map.of("sluice.coordinator.commitTimeout", "300ms"))) {
      cluster.coordinator().registerShuffle(1, 4, 2);
      writeMap(cluster, 1, 0);
      writeMap(cluster, 1, 2); // maps 1 and 3 never run

      long start = System.nanoTime();
      assertThatThrownBy(() -> cluster.coordinatorClient().committedSplits(1, 0, 2))
          .isInstanceOfSatisfying(
              StatusException.class, e -> assertThat(e.status()).isEqualTo(Status.NOT_READY))
          .hasMessageContaining("app " + TestCluster.APP_ID + " shuffle 1")
          .hasMessageContaining("partitions [0, 2)")
          .hasMessageContaining("300 ms (sluice.coordinator.commitTimeout)")
          .hasMessageContaining("2 of 4 maps never reported their end (MapperEnd): maps 1, 3");
      assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(10_000);

      // the shuffle is not spoiled: once the maps report, readers get it
      writeMap(cluster, 1, 1);
      writeMap(cluster, 1, 3);
      CommittedShuffle committed = cluster.coordinatorClient().committedSplits(1, 0, 2);
      assertThat(committed.getWinningAttemptsList()).containsExactly(0, 0, 0, 0);
    }
  }

  @Test
  void unregisteringAShuffleAnswersItsWaitingReadersAtOnce() throws Exception {
    try (TestCluster cluster =
        TestCluster.start(tmp, 1, Map.of("sluice.coordinator.commitTimeout", "60s"))) {
      cluster.coordinator().registerShuffle(2, 2, 2);
      writeMap(cluster, 2, 0);
      CompletableFuture<ShuffleCommit> waiting = cluster.coordinator().awaitCommit(2, 0, 2, false);
      long start = System.nanoTime();
      cluster.coordinator().unregisterShuffle(2);
      assertThatThrownBy(() -> waiting.get(10, TimeUnit.SECONDS))
          .hasCauseInstanceOf(StatusException.class)
          .hasMessageContaining("app " + TestCluster.APP_ID + " shuffle 2 was unregistered")
          .hasMessageContaining("1 of 2 maps never reported their end (MapperEnd): maps 1");
      assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(10_000);
    }
  }

  @Test
  void aShuffleWithoutMapsIsCommittedWhenRegistered() throws Exception {
    try (TestCluster cluster =
        TestCluster.start(tmp, 2, Map.of("sluice.coordinator.commitTimeout", "60s"))) {
      cluster.coordinator().registerShuffle(3, 0, 5);
      CommittedShuffle committed =
          cluster.coordinatorClient().committedSplits(3, 0, 5); // no wait: nothing to wait for
      assertThat(committed.getSplitsList()).isEmpty();
      assertThat(committed.getNumLostPartitions()).isZero();
    }
  }

  /** A server that takes registrations and heartbeats but never answers a commit. */
  private static final class SilentAtCommit implements RequestHandler {
    @Override
    public void handle(Channel channel, Message request) {
      long id = request.requestId();
      MessageType type = MessageType.of(request.type());
      request.release();
      if (type != MessageType.COMMIT_SHUFFLE) {
        channel.writeAndFlush(Messages.ok(id));
      }
    }
  }

  @Test
  void aServerThatNeverAnswersTheCommitIsNamed() throws Exception {
    SluiceConf conf =
        SluiceConf.of(
            Map.of(
                "sluice.network.ioThreads", "1",
                "sluice.coordinator.commitTimeout", "300ms",
                "sluice.network.requestTimeout", "60s"));
    TransportServer silent =
        new TransportServer(
            "silent",
            new NetworkConf(conf),
            SluiceProtocol.INSTANCE,
            new SilentAtCommit(),
            "127.0.0.1",
            0);
    try (ClientContext context = new ClientContext(conf);
        ShuffleCoordinator coordinator =
            new ShuffleCoordinator(
                TestCluster.APP_ID,
                List.of(ClientContext.address("127.0.0.1", silent.port())),
                context,
                "127.0.0.1")) {
      CoordinatorClient client =
          new CoordinatorClient(
              context, TestCluster.APP_ID, ClientContext.address("127.0.0.1", coordinator.port()));
      coordinator.registerShuffle(4, 1, 3);
      coordinator.mapperEnd(4, 0, 0, List.of(ClientContext.address("127.0.0.1", silent.port())));
      assertThatThrownBy(() -> client.committedSplits(4, 1, 3))
          .isInstanceOfSatisfying(
              StatusException.class, e -> assertThat(e.status()).isEqualTo(Status.NOT_READY))
          .hasMessageContaining("app " + TestCluster.APP_ID + " shuffle 4")
          .hasMessageContaining("partitions [1, 3)")
          .hasMessageContaining("[127.0.0.1:" + silent.port() + "] did not answer it");
    } finally {
      silent.close();
    }
  }
}
