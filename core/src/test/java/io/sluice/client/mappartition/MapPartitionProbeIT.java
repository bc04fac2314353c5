package io.sluice.client.mappartition;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.client.ClientContext;
import io.sluice.protocol.MapPartitionId;
import io.sluice.protocol.proto.ServerAddress;
import io.sluice.testutil.TestCluster;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link MapPartitionProbe} against a real server: a committed partition's bytes per subpartition
 * as its writer recorded them, from the first server of a list that holds it; nothing for a
 * partition that was never committed or was released, and no stream left open on the server.
 */
class MapPartitionProbeIT {
  private static final String APP = TestCluster.APP_ID;
  private static final int SUBPARTITIONS = 4;

  @TempDir Path dir;
  private TestCluster cluster;
  private MapPartitionPlacement placement;
  private InetSocketAddress at;

  @BeforeEach
  void start() throws Exception {
    cluster = TestCluster.start(dir, 1);
    ServerAddress a = cluster.addresses().get(0);
    at = InetSocketAddress.createUnresolved(a.getHost(), a.getPort());
    placement = new MapPartitionPlacement(cluster.context(), APP, List.of(at), s -> {});
    placement.place(0, 2, SUBPARTITIONS).get(10, TimeUnit.SECONDS);
  }

  @AfterEach
  void stop() {
    placement.close();
    cluster.close();
  }

  /**
   * Writes map {@code map}: 20 KB of random bytes to subpartition 1, 3 KB to 2, none to 0 and 3.
   */
  private MapPartitionWriter write(int map) throws Exception {
    MapPartitionWriter w =
        MapPartitionWriter.open(
            cluster.context(),
            new MapPartitionId(APP, 0, map, 0),
            at.getHostString(),
            at.getPort(),
            SUBPARTITIONS,
            1024);
    Random random = new Random(map);
    w.startRegion(false);
    byte[] large = new byte[20_000];
    random.nextBytes(large);
    w.write(1, ByteBuffer.wrap(large));
    byte[] small = new byte[3_000];
    random.nextBytes(small);
    w.write(2, ByteBuffer.wrap(small));
    w.finishRegion();
    return w;
  }

  private long[] probe(MapPartitionId id, ServerAddress... servers) throws Exception {
    return MapPartitionProbe.committedBytes(cluster.context(), id, List.of(servers), SUBPARTITIONS)
        .get(20, TimeUnit.SECONDS);
  }

  @Test
  void aCommittedPartitionsBytesPerSubpartitionFromTheFirstServerThatHasIt() throws Exception {
    MapPartitionId id = new MapPartitionId(APP, 0, 0, 0);
    try (MapPartitionWriter w = write(0)) {
      w.commit();
    }
    ServerAddress gone = ClientContext.address("127.0.0.1", 1);
    long[] bytes = probe(id, gone, cluster.addresses().get(0));
    assertThat(bytes).hasSize(SUBPARTITIONS);
    assertThat(bytes[0]).isZero();
    assertThat(bytes[3]).isZero();
    // random bytes do not compress: stored as written, plus the blocks' headers
    assertThat(bytes[1]).isGreaterThanOrEqualTo(20_000).isLessThan(21_000);
    assertThat(bytes[2]).isGreaterThanOrEqualTo(3_000).isLessThan(3_500);
    // the probe closes its stream without waiting for the answer
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (cluster.server(0).mapStreams().openCount() > 0) {
      assertThat(System.nanoTime()).as("the probe's stream closed").isLessThan(deadline);
      Thread.sleep(10);
    }
  }

  @Test
  void nothingForAPartitionNotCommittedOrReleased() throws Exception {
    MapPartitionId open = new MapPartitionId(APP, 0, 0, 0);
    try (MapPartitionWriter w = write(0)) {
      assertThat(probe(open, cluster.addresses().get(0))).as("written, not committed").isNull();
    }
    MapPartitionId released = new MapPartitionId(APP, 0, 1, 0);
    try (MapPartitionWriter w = write(1)) {
      w.commit();
    }
    placement.release(released, at);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (probe(released, cluster.addresses().get(0)) != null) {
      assertThat(System.nanoTime()).as("released within 20 s").isLessThan(deadline);
      Thread.sleep(20);
    }
    assertThat(probe(new MapPartitionId(APP, 0, 1, 7), cluster.addresses().get(0)))
        .as("never written")
        .isNull();
  }
}
