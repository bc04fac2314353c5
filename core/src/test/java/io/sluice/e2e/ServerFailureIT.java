package io.sluice.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.client.PartitionLocations;
import io.sluice.client.push.MapOutputPusher;
import io.sluice.client.read.PartitionReader;
import io.sluice.client.read.ShuffleBatch;
import io.sluice.protocol.proto.ServerAddress;
import io.sluice.testutil.Records;
import io.sluice.testutil.TestCluster;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What clients see when a server goes away, and how pushes move on. */
class ServerFailureIT {
  @TempDir Path tmp;

  private static void writeAll(MapOutputPusher pusher, int map, int partitions, int perPartition)
      throws Exception {
    for (int p = 0; p < partitions; p++) {
      for (int s = 0; s < perPartition; s++) {
        byte[] r = Records.record(map, p, s, 500 + s);
        pusher.write(p, r, 0, r.length);
      }
    }
  }

  @Test
  void pushesMoveOffADeadServerAndEverythingReadsBack() throws Exception {
    try (TestCluster cluster =
        TestCluster.start(tmp, 2, Map.of("sluice.network.connectTimeout", "2s"))) {
      cluster.coordinator().registerShuffle(0, 2, 10);
      int deadPort = cluster.server(1).port();
      cluster.server(1).close();
      for (int m = 0; m < 2; m++) {
        try (MapOutputPusher pusher = cluster.pusher(0, m, 0)) {
          writeAll(pusher, m, 10, 30);
          pusher.finish();
        }
      }
      PartitionLocations written = cluster.coordinator().locations(0);
      for (int p = 0; p < written.numPartitions(); p++) {
        assertThat(written.server(p).getPort()).as("partition %d", p).isNotEqualTo(deadPort);
      }
      // the dead server is left out of placement for a while: a new shuffle avoids it
      cluster.coordinator().registerShuffle(1, 1, 10);
      assertThat(cluster.coordinator().locations(1).placementServers())
          .extracting(ServerAddress::getPort)
          .doesNotContain(deadPort);
      Records.Checker checker = new Records.Checker();
      try (PartitionReader reader = cluster.reader(0, 0, 10, 0, 2)) {
        ShuffleBatch b;
        while ((b = reader.next()) != null) {
          checker.accept(b.partitionId(), b.payload());
        }
      }
      for (int m = 0; m < 2; m++) {
        for (int p = 0; p < 10; p++) {
          assertThat(checker.count(m, p)).isEqualTo(30);
        }
      }
    }
  }

  @Test
  void readerOfAServerThatStoppedGetsAnErrorNamingIt() throws Exception {
    try (TestCluster cluster = TestCluster.start(tmp, 1)) {
      cluster.coordinator().registerShuffle(0, 1, 2);
      try (MapOutputPusher pusher = cluster.pusher(0, 0, 0)) {
        writeAll(pusher, 0, 2, 10);
        pusher.finish();
      }
      int port = cluster.server(0).port();
      PartitionReader reader = cluster.reader(0, 0, 2, 0, 1);
      cluster.server(0).close();
      assertThatThrownBy(
              () -> {
                while (reader.next() != null) {
                  // drain
                }
              })
          .hasMessageContaining("127.0.0.1:" + port);
      reader.close();
    }
  }
}
