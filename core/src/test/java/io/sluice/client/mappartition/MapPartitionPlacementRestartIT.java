package io.sluice.client.mappartition;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.protocol.MapPartitionId;
import io.sluice.protocol.proto.ServerAddress;
import io.sluice.server.ShuffleServer;
import io.sluice.testutil.TestCluster;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A map partition placed while the only server restarts waits for it ({@code
 * sluice.client.serverRestartWait}) instead of failing the producer's deployment, and is then
 * written and committed on the restarted server.
 */
class MapPartitionPlacementRestartIT {
  @TempDir Path dir;

  @Test
  void placingWhileTheOnlyServerRestartsWaitsForIt() throws Exception {
    try (TestCluster cluster =
        TestCluster.start(dir, 1, Map.of("sluice.client.serverRestartWait", "60s"))) {
      List<InetSocketAddress> servers = new ArrayList<>();
      for (ServerAddress a : cluster.addresses()) {
        servers.add(InetSocketAddress.createUnresolved(a.getHost(), a.getPort()));
      }
      List<InetSocketAddress> lost = new ArrayList<>();
      try (MapPartitionPlacement placement =
          new MapPartitionPlacement(cluster.context(), TestCluster.APP_ID, servers, lost::add)) {
        CountDownLatch stopped = new CountDownLatch(1);
        CompletableFuture<ShuffleServer> restarted = new CompletableFuture<>();
        Thread restarter =
            new Thread(
                () -> {
                  try {
                    restarted.complete(
                        cluster.restartServer(
                            0,
                            root -> {
                              stopped.countDown();
                              sleep(1000);
                            }));
                  } catch (IOException | RuntimeException e) {
                    stopped.countDown();
                    restarted.completeExceptionally(e);
                  }
                },
                "restarter");
        restarter.start();
        assertThat(stopped.await(30, TimeUnit.SECONDS)).isTrue();

        InetSocketAddress at = placement.place(3, 2, 2).get(60, TimeUnit.SECONDS);

        assertThat(restarted.get(30, TimeUnit.SECONDS)).isNotNull();
        assertThat(at.getPort()).isEqualTo(servers.get(0).getPort());
        MapPartitionId id = new MapPartitionId(TestCluster.APP_ID, 3, 0, 0);
        try (MapPartitionWriter w =
            MapPartitionWriter.open(
                cluster.context(), id, at.getHostString(), at.getPort(), 2, 1000)) {
          w.startRegion(false);
          w.write(1, ByteBuffer.wrap(new byte[3000]));
          w.finishRegion();
          w.commit();
        }
        assertThat(cluster.server(0).registry().get(TestCluster.APP_ID, 3).mapPartition(0, 0))
            .as("committed on the restarted server")
            .isNotNull();
        assertThat(lost).as("servers reported lost").isEmpty();
        assertThat(cluster.context().metrics().serverWaits()).isPositive();
      }
    }
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
