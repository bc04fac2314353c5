package io.sluice.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.client.ClientContext;
import io.sluice.client.coordinator.CoordinatorClient;
import io.sluice.client.coordinator.ShuffleCoordinator;
import io.sluice.client.push.MapOutputPusher;
import io.sluice.client.read.PartitionReader;
import io.sluice.client.read.ShuffleBatch;
import io.sluice.testutil.Records;
import io.sluice.testutil.TestCluster;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * sluice.app.maxStoredBytes on a real server: an application past it gets a task failure that names
 * the limit, not a retry; another application on the same server keeps pushing and reading; and the
 * first pushes again once its shuffle is gone.
 */
class ApplicationLimitsIT {
  private static final int PARTITIONS = 4;

  @TempDir Path tmp;

  @Test
  void anApplicationPastItsLimitFailsByNameAndItsNeighbourIsServed() throws Exception {
    try (TestCluster cluster =
        TestCluster.start(tmp, 1, Map.of("sluice.app.maxStoredBytes", "1m"))) {
      cluster.coordinator().registerShuffle(0, 1, PARTITIONS);
      assertThatThrownBy(
              () -> {
                try (MapOutputPusher pusher = cluster.pusher(0, 0, 0)) {
                  write(pusher, 3 << 20);
                  pusher.finish();
                }
              })
          .hasStackTraceContaining("QUOTA_EXCEEDED")
          .hasStackTraceContaining("sluice.app.maxStoredBytes")
          .hasStackTraceContaining(TestCluster.APP_ID);
      assertThat(cluster.server(0).registry().application(TestCluster.APP_ID).refusedBytes())
          .isPositive();

      // another application on the same server is not held back by it
      try (ClientContext context = new ClientContext(cluster.conf());
          ShuffleCoordinator other =
              new ShuffleCoordinator("app-neighbour", cluster.addresses(), context, "127.0.0.1")) {
        CoordinatorClient client =
            new CoordinatorClient(
                context, "app-neighbour", ClientContext.address("127.0.0.1", other.port()));
        other.registerShuffle(0, 1, PARTITIONS);
        try (MapOutputPusher pusher =
            new MapOutputPusher(context, client, "app-neighbour", 0, 0, 0, client.locations(0))) {
          write(pusher, 512 << 10);
          pusher.finish();
        }
        try (PartitionReader reader =
            new PartitionReader(
                context, "app-neighbour", 0, client.committedSplits(0, 0, PARTITIONS), 0, 1)) {
          assertThat(records(reader)).isEqualTo(written(512 << 10));
        }
      }

      // its shuffle gone, the first application stores again
      cluster.coordinator().unregisterShuffle(0);
      cluster.coordinator().registerShuffle(1, 1, PARTITIONS);
      try (MapOutputPusher pusher = cluster.pusher(1, 0, 0)) {
        write(pusher, 512 << 10);
        pusher.finish();
      }
      try (PartitionReader reader = cluster.reader(1, 0, PARTITIONS, 0, 1)) {
        assertThat(records(reader)).isEqualTo(written(512 << 10));
      }
    }
  }

  private static final int RECORD = 1000;

  /**
   * Writes records of {@value #RECORD} bytes, round robin over the partitions, until {@code bytes}.
   */
  private static void write(MapOutputPusher pusher, int bytes) throws Exception {
    int[] seq = new int[PARTITIONS];
    for (int i = 0; i < written(bytes); i++) {
      int p = i % PARTITIONS;
      byte[] r = Records.record(0, p, seq[p]++, RECORD);
      pusher.write(p, r, 0, r.length);
    }
  }

  private static int written(int bytes) {
    return bytes / RECORD;
  }

  private static int records(PartitionReader reader) throws Exception {
    Records.Checker checker = new Records.Checker();
    int n = 0;
    for (ShuffleBatch b = reader.next(); b != null; b = reader.next()) {
      checker.accept(b.partitionId(), b.payload());
    }
    for (int p = 0; p < PARTITIONS; p++) {
      n += checker.count(0, p);
    }
    return n;
  }
}
