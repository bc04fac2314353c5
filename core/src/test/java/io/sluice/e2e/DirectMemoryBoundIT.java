package io.sluice.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.Unpooled;
import io.sluice.protocol.BatchFormat;
import io.sluice.protocol.MessageType;
import io.sluice.protocol.Messages;
import io.sluice.protocol.proto.PushData;
import io.sluice.protocol.proto.RegisterShuffle;
import io.sluice.protocol.proto.ServerAddress;
import io.sluice.server.ShuffleServer;
import io.sluice.testutil.RawConnection;
import io.sluice.testutil.TestCluster;
import java.io.DataOutputStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What Netty holds for request bodies stays within {@code sluice.memory.max} plus a small
 * per-connection allowance, whatever the clients send: large frames sent slowly, and many tiny
 * bodies. Measured as the direct memory the server's own buffers pin.
 */
class DirectMemoryBoundIT {
  private static final String APP = TestCluster.APP_ID;
  private static final long MAX = 32L << 20;
  private static final long PER_CONNECTION = 128L << 10;

  @TempDir Path tmp;

  /** Samples the server's pinned direct memory until stopped; returns the peak. */
  private static CompletableFuture<Long> samplePeak(ShuffleServer server, AtomicBoolean stop) {
    return CompletableFuture.supplyAsync(
        () -> {
          long peak = 0;
          while (!stop.get()) {
            peak = Math.max(peak, server.nettyPinnedDirectMemory());
            try {
              Thread.sleep(2);
            } catch (InterruptedException e) {
              return peak;
            }
          }
          return peak;
        });
  }

  private static void register(TestCluster cluster, ServerAddress server) throws Exception {
    cluster
        .context()
        .call(
            null,
            server,
            id ->
                Messages.request(
                    MessageType.REGISTER_SHUFFLE,
                    RegisterShuffle.newBuilder()
                        .setRequestId(id)
                        .setAppId(APP)
                        .setShuffleId(1)
                        .setNumMaps(1000)
                        .setNumPartitions(64)
                        .build(),
                    id));
  }

  @Test
  void largeFramesSentSlowlyWaitInTheSocketNotInMemory() throws Exception {
    int connections = 16;
    int body = 8 << 20;
    try (TestCluster cluster =
        TestCluster.start(tmp, 1, Map.of("sluice.memory.max", "32m", "sluice.flush.size", "1m"))) {
      ShuffleServer server = cluster.server(0);
      register(cluster, cluster.addresses().get(0));
      AtomicBoolean stop = new AtomicBoolean();
      CompletableFuture<Long> peak = samplePeak(server, stop);
      List<RawConnection> open = new ArrayList<>();
      ExecutorService senders = Executors.newFixedThreadPool(connections);
      AtomicLong sent = new AtomicLong();
      try {
        for (int c = 0; c < connections; c++) {
          RawConnection conn = new RawConnection("127.0.0.1", server.port());
          open.add(conn);
          senders.submit(
              () -> {
                byte[] header =
                    PushData.newBuilder()
                        .setRequestId(1)
                        .setAppId(APP)
                        .setShuffleId(1)
                        .build()
                        .toByteArray();
                DataOutputStream out = new DataOutputStream(conn.output());
                out.writeInt(5 + header.length + body);
                out.writeByte(MessageType.PUSH_DATA.id());
                out.writeInt(header.length);
                out.write(header);
                byte[] slice = new byte[64 << 10];
                // a body that never completes: the last bytes are never sent
                for (int off = 0; off < body - slice.length; off += slice.length) {
                  out.write(slice);
                  sent.addAndGet(slice.length);
                }
                out.flush();
                return null;
              });
        }
        // the server reserves whole bodies before reading them: four of 8 MiB fill 32 MiB
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (server.memory().held() < MAX && System.nanoTime() < deadline) {
          Thread.sleep(10);
        }
        assertThat(server.memory().held()).isEqualTo(MAX);
        Thread.sleep(500); // let whatever else arrives arrive; the bound must hold regardless
      } finally {
        stop.set(true);
        for (RawConnection c : open) {
          c.close();
        }
        senders.shutdownNow();
      }
      assertThat(peak.get(1, TimeUnit.MINUTES))
          .as("direct memory the server pinned (sent %d bytes in all)", sent.get())
          .isLessThanOrEqualTo(MAX + connections * PER_CONNECTION);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (server.memory().held() > 0 && System.nanoTime() < deadline) {
        Thread.sleep(10); // closed connections give their reservations back
      }
      assertThat(server.memory().held()).isZero();
    }
  }

  @Test
  void tinyBodiesDoNotPinWholeReadBuffers() throws Exception {
    int pushers = 64;
    int pushesEach = 2_000;
    try (TestCluster cluster =
        TestCluster.start(tmp, 1, Map.of("sluice.memory.max", "8m", "sluice.flush.size", "16k"))) {
      ShuffleServer server = cluster.server(0);
      ServerAddress address = cluster.addresses().get(0);
      register(cluster, address);
      AtomicBoolean stop = new AtomicBoolean();
      CompletableFuture<Long> peak = samplePeak(server, stop);
      ExecutorService pool = Executors.newFixedThreadPool(8);
      Semaphore inFlight = new Semaphore(4096);
      List<CompletableFuture<?>> all = new ArrayList<>();
      try {
        for (int p = 0; p < pushers; p++) {
          int map = p;
          all.add(
              CompletableFuture.runAsync(
                  () -> {
                    for (int i = 0; i < pushesEach; i++) {
                      inFlight.acquireUninterruptibly();
                      // partition 0 takes one body in a hundred and is never flushed: with
                      // bodies as slices, each would keep its whole socket read alive
                      int partition = i % 100 == 0 ? 0 : 1 + (map + i) % 63;
                      int batchId = i;
                      cluster
                          .context()
                          .callAsync(
                              null,
                              address,
                              id -> {
                                io.netty.buffer.ByteBuf b = Unpooled.directBuffer(100);
                                BatchFormat.writeHeader(b, map, 0, batchId, 84);
                                b.writeZero(84);
                                return Messages.request(
                                    MessageType.PUSH_DATA,
                                    PushData.newBuilder()
                                        .setRequestId(id)
                                        .setAppId(APP)
                                        .setShuffleId(1)
                                        .setPartitionId(partition)
                                        .build(),
                                    id,
                                    b);
                              })
                          .whenComplete(
                              (m, e) -> {
                                inFlight.release();
                                if (m != null) {
                                  m.release();
                                }
                              });
                    }
                  },
                  pool));
        }
        CompletableFuture.allOf(all.toArray(new CompletableFuture<?>[0])).get(5, TimeUnit.MINUTES);
        inFlight.acquire(4096);
      } finally {
        stop.set(true);
        pool.shutdownNow();
      }
      long held = server.memory().peak();
      assertThat(held).as("the budget counted the bodies").isPositive();
      // 128,000 bodies of 100 bytes (12.8 MB) under an 8 MiB budget
      assertThat(peak.get(1, TimeUnit.MINUTES))
          .as("direct memory the server pinned, with %d bytes held at the peak", held)
          .isLessThanOrEqualTo((long) ((8L << 20) * 1.25) + 4 * PER_CONNECTION);
    }
  }
}
