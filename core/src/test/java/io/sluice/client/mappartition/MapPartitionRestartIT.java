package io.sluice.client.mappartition;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.protocol.MapPartitionId;
import io.sluice.protocol.proto.ServerAddress;
import io.sluice.server.ShuffleServer;
import io.sluice.testutil.TestCluster;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Flink producers across a graceful restart of their only server: a map partition placed while the
 * server is down waits for it ({@code sluice.client.serverRestartWait}) instead of failing the
 * producer's deployment; a producer placed before the stop that starts writing while the server is
 * down waits for it too; one being written when the stop begins may finish and commit (for at most
 * half of {@code sluice.shutdown.timeout}) and is served after the restart.
 */
class MapPartitionRestartIT {
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
        CompletableFuture<ShuffleServer> restarted = restartInBackground(cluster, stopped);
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

  @Test
  void aMapPartitionBeingWrittenWhenTheStopBeginsFinishesAndIsServedAfterTheRestart()
      throws Exception {
    try (TestCluster cluster = TestCluster.start(dir, 1)) {
      ServerAddress a = cluster.addresses().get(0);
      MapPartitionId id = new MapPartitionId(TestCluster.APP_ID, 4, 1, 0);
      cluster.coordinator().registerShuffle(4, 2, 2);
      ShuffleServer stopping = cluster.server(0);
      byte[] first = text("first region ", 5000);
      byte[] second = text("second region ", 5000);
      CompletableFuture<ShuffleServer> restarted = new CompletableFuture<>();
      try (MapPartitionWriter w =
          MapPartitionWriter.open(cluster.context(), id, a.getHost(), a.getPort(), 2, 1000)) {
        w.startRegion(false);
        w.write(0, ByteBuffer.wrap(first));
        w.finishRegion();

        new Thread(
                () -> {
                  try {
                    restarted.complete(cluster.restartServer(0));
                  } catch (IOException | RuntimeException e) {
                    restarted.completeExceptionally(e);
                  }
                },
                "restarter")
            .start();
        // the stop has begun: the server takes no new shuffles
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!stopping.registry().isDecommissioning() && System.nanoTime() < deadline) {
          Thread.sleep(5);
        }
        assertThat(stopping.registry().isDecommissioning()).isTrue();

        w.startRegion(false);
        w.write(1, ByteBuffer.wrap(second));
        w.finishRegion();
        w.commit();
      }

      ShuffleServer after = restarted.get(60, TimeUnit.SECONDS);
      assertThat(after.recovery().mapPartitions()).isEqualTo(1);
      ByteArrayOutputStream read = new ByteArrayOutputStream();
      Semaphore available = new Semaphore(0);
      try (MapPartitionReader r =
          MapPartitionReader.open(
              cluster.context(), id, a.getHost(), a.getPort(), 0, 1, available::release)) {
        while (!r.isFinished()) {
          MapPartitionReader.Block b = r.poll();
          if (b == null) {
            available.tryAcquire(100, TimeUnit.MILLISECONDS);
            continue;
          }
          ByteBuffer target = ByteBuffer.allocate(b.length());
          b.readInto(target);
          read.write(target.array());
        }
      }
      ByteArrayOutputStream expected = new ByteArrayOutputStream();
      expected.write(first);
      expected.write(second);
      assertThat(read.toByteArray()).isEqualTo(expected.toByteArray());
    }
  }

  @Test
  void aWriterStartingWhileItsServerIsDownWaitsForTheRestart() throws Exception {
    try (TestCluster cluster =
        TestCluster.start(dir, 1, Map.of("sluice.client.serverRestartWait", "60s"))) {
      ServerAddress a = cluster.addresses().get(0);
      cluster.coordinator().registerShuffle(5, 1, 2);
      MapPartitionId id = new MapPartitionId(TestCluster.APP_ID, 5, 0, 0);
      CountDownLatch stopped = new CountDownLatch(1);
      CompletableFuture<ShuffleServer> restarted = restartInBackground(cluster, stopped);
      assertThat(stopped.await(30, TimeUnit.SECONDS)).isTrue();

      try (MapPartitionWriter w =
          MapPartitionWriter.open(cluster.context(), id, a.getHost(), a.getPort(), 2, 1000)) {
        w.startRegion(false);
        w.write(1, ByteBuffer.wrap(text("after the restart ", 3000)));
        w.finishRegion();
        w.commit();
      }

      assertThat(restarted.get(30, TimeUnit.SECONDS)).isNotNull();
      assertThat(cluster.server(0).registry().get(TestCluster.APP_ID, 5).mapPartition(0, 0))
          .isNotNull();
      assertThat(cluster.context().metrics().serverWaits()).isPositive();
    }
  }

  /**
   * Restarts server 0 on a thread of its own, down for a second; {@code stopped} counts down once
   * its port is closed.
   */
  private static CompletableFuture<ShuffleServer> restartInBackground(
      TestCluster cluster, CountDownLatch stopped) {
    CompletableFuture<ShuffleServer> restarted = new CompletableFuture<>();
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
            "restarter")
        .start();
    return restarted;
  }

  private static byte[] text(String prefix, int length) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; b.length() < length; i++) {
      b.append(prefix).append(i).append(';');
    }
    return b.substring(0, length).getBytes(StandardCharsets.US_ASCII);
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
