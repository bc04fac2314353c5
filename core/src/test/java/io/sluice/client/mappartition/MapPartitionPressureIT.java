package io.sluice.client.mappartition;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.protocol.MapPartitionId;
import io.sluice.protocol.proto.ServerAddress;
import io.sluice.testutil.TestCluster;
import java.io.ByteArrayOutputStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Many map partition writers against a server whose memory maximum is a small fraction of what they
 * send at once: the server never holds more than its maximum, frames it refuses are sent again in
 * order, and every byte reads back where it belongs.
 */
class MapPartitionPressureIT {
  private static final int WRITERS = 8;
  private static final int REGIONS = 4;
  private static final int SUBPARTITIONS = 4;
  private static final int BYTES = 200_000;

  @TempDir Path dir;

  private static byte[] data(int map, int region, int sub) {
    byte[] b = new byte[BYTES];
    new Random(((long) map << 32) ^ (region << 16) ^ sub).nextBytes(b);
    return b;
  }

  @Test
  void writersUnderMemoryPressureLoseNothingAndTheServerStaysUnderItsMaximum() throws Exception {
    try (TestCluster cluster =
        TestCluster.start(
            dir,
            1,
            Map.of(
                "sluice.memory.max", "2m",
                "sluice.mapPartition.pushSize", "768k",
                "sluice.mapPartition.writeCredits", "8",
                "sluice.push.compression", "none"))) {
      ServerAddress a = cluster.addresses().get(0);
      InetSocketAddress at = InetSocketAddress.createUnresolved(a.getHost(), a.getPort());
      MapPartitionPlacement placement =
          new MapPartitionPlacement(cluster.context(), TestCluster.APP_ID, List.of(at), s -> {});
      try {
        placement.place(0, 16, 16).get(10, TimeUnit.SECONDS);
        ExecutorService pool = Executors.newFixedThreadPool(WRITERS);
        try {
          List<Future<?>> writes = new ArrayList<>();
          for (int m = 0; m < WRITERS; m++) {
            int map = m;
            writes.add(
                pool.submit(
                    () -> {
                      MapPartitionId id = new MapPartitionId(TestCluster.APP_ID, 0, map, 0);
                      try (MapPartitionWriter w =
                          MapPartitionWriter.open(
                              cluster.context(),
                              id,
                              a.getHost(),
                              a.getPort(),
                              SUBPARTITIONS,
                              32 * 1024)) {
                        for (int r = 0; r < REGIONS; r++) {
                          w.startRegion(false);
                          for (int s = 0; s < SUBPARTITIONS; s++) {
                            w.write(s, ByteBuffer.wrap(data(map, r, s)));
                          }
                          w.finishRegion();
                        }
                        w.commit();
                      }
                      return null;
                    }));
          }
          for (Future<?> f : writes) {
            f.get(120, TimeUnit.SECONDS);
          }
        } finally {
          pool.shutdownNow();
        }
        long max = cluster.server(0).memory().max();
        assertThat(cluster.server(0).memory().peak())
            .as(
                "peak held memory (%d pushes refused CONGESTED)",
                cluster.server(0).metrics().pushesCongested().getCount())
            .isLessThanOrEqualTo(max);
        for (int m = 0; m < WRITERS; m++) {
          MapPartitionId id = new MapPartitionId(TestCluster.APP_ID, 0, m, 0);
          for (int s = 0; s < SUBPARTITIONS; s++) {
            ByteArrayOutputStream expected = new ByteArrayOutputStream();
            for (int r = 0; r < REGIONS; r++) {
              expected.write(data(m, r, s));
            }
            assertThat(read(cluster, id, a, s))
                .as("map %d subpartition %d", m, s)
                .isEqualTo(expected.toByteArray());
          }
        }
        assertThat(cluster.memoryHeld()).isZero();
      } finally {
        placement.close();
      }
    }
  }

  private static byte[] read(TestCluster cluster, MapPartitionId id, ServerAddress a, int sub)
      throws Exception {
    Semaphore available = new Semaphore(0);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (MapPartitionReader reader =
        MapPartitionReader.open(
            cluster.context(), id, a.getHost(), a.getPort(), sub, sub, available::release)) {
      while (!reader.isFinished()) {
        MapPartitionReader.Block b = reader.poll();
        if (b == null) {
          available.tryAcquire(100, TimeUnit.MILLISECONDS);
          continue;
        }
        ByteBuffer target = ByteBuffer.allocate(b.length());
        b.readInto(target);
        out.write(target.array());
      }
    }
    return out.toByteArray();
  }
}
