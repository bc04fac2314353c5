package io.sluice.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.client.ApplicationLimitException;
import io.sluice.client.push.MapOutputPusher;
import io.sluice.client.read.PartitionReader;
import io.sluice.client.read.ShuffleBatch;
import io.sluice.network.Message;
import io.sluice.protocol.MessageType;
import io.sluice.protocol.Messages;
import io.sluice.protocol.StatusException;
import io.sluice.protocol.proto.RegisterShuffle;
import io.sluice.protocol.proto.RequestedLimits;
import io.sluice.testutil.OtherApplication;
import io.sluice.testutil.Records;
import io.sluice.testutil.TestCluster;
import java.nio.file.Path;
import java.util.Map;
import java.util.function.LongFunction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Limits per application on a real server, with the real client: an application past one (stored
 * bytes, open writers, open streams; the server's, or a lower one it asked for) gets a task failure
 * that names the limit and the setting, not a retry; another application on the same server keeps
 * pushing and reading; and the first goes on once it holds less.
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
      try (Neighbour other = new Neighbour(cluster, Map.of())) {
        other.pushAndCheck(PARTITIONS, 512 << 10);
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

  @Test
  void anApplicationMayAskForLessThanTheServerAllows() throws Exception {
    // the server allows 8 MiB an application; this one asks for 1 MiB at registration
    try (TestCluster cluster =
        TestCluster.start(
            tmp,
            1,
            Map.of(
                "sluice.app.maxStoredBytes", "8m",
                "sluice.client.limits.maxStoredBytes", "1m"))) {
      cluster.coordinator().registerShuffle(0, 1, PARTITIONS);
      assertThatThrownBy(() -> push(cluster, 0, 3 << 20))
          .hasStackTraceContaining("QUOTA_EXCEEDED")
          .hasStackTraceContaining("limit of 1048576 bytes (sluice.client.limits.maxStoredBytes)");

      // asking for more than the server allows gets the server's limit
      try (Neighbour big =
          new Neighbour(cluster, Map.of("sluice.client.limits.maxStoredBytes", "1g"))) {
        assertThatThrownBy(() -> big.push(PARTITIONS, 9 << 20))
            .hasStackTraceContaining("QUOTA_EXCEEDED")
            .hasStackTraceContaining("limit of 8388608 bytes (sluice.app.maxStoredBytes)");
      }
    }
  }

  @Test
  void dataRestoredAfterARestartCountsAgainstTheLimit() throws Exception {
    try (TestCluster cluster =
        TestCluster.start(tmp, 1, Map.of("sluice.app.maxStoredBytes", "2m"))) {
      cluster.coordinator().registerShuffle(0, 1, PARTITIONS);
      push(cluster, 0, 1536 << 10);
      try (PartitionReader reader = cluster.reader(0, 0, PARTITIONS, 0, 1)) {
        assertThat(records(reader)).isEqualTo(written(1536 << 10));
      }
      long stored = cluster.server(0).registry().storedBytes(TestCluster.APP_ID);
      assertThat(stored).isGreaterThanOrEqualTo(1536_000);

      cluster.restartServer(0);
      assertThat(cluster.server(0).registry().storedBytes(TestCluster.APP_ID))
          .as("the committed files the server restored")
          .isGreaterThanOrEqualTo(stored);
      cluster.coordinator().registerShuffle(1, 1, PARTITIONS);
      assertThatThrownBy(() -> push(cluster, 1, 1 << 20))
          .hasStackTraceContaining("QUOTA_EXCEEDED")
          .hasStackTraceContaining("sluice.app.maxStoredBytes");
    }
  }

  @Test
  void writersPastTheLimitFailTheTaskByNameAndAreGivenBack() throws Exception {
    try (TestCluster cluster =
        TestCluster.start(tmp, 1, Map.of("sluice.app.maxOpenWriters", "2"))) {
      cluster.coordinator().registerShuffle(0, 1, PARTITIONS);
      assertThatThrownBy(() -> push(cluster, 0, 64 << 10))
          .as("four partitions need four splits on the one server")
          .hasStackTraceContaining("QUOTA_EXCEEDED")
          .hasStackTraceContaining("sluice.app.maxOpenWriters")
          .hasStackTraceContaining(TestCluster.APP_ID);

      try (Neighbour other = new Neighbour(cluster, Map.of())) {
        other.pushAndCheck(2, 64 << 10);
      }

      // its shuffle gone, its splits are no longer open: the application writes again
      cluster.coordinator().unregisterShuffle(0);
      cluster.coordinator().registerShuffle(1, 1, 2);
      try (MapOutputPusher pusher = cluster.pusher(1, 0, 0)) {
        write(pusher, 2, 64 << 10);
        pusher.finish();
      }
      try (PartitionReader reader = cluster.reader(1, 0, 2, 0, 1)) {
        assertThat(records(reader)).isEqualTo(written(64 << 10));
      }
      assertThat(cluster.server(0).memory().account(TestCluster.APP_ID).openWriters())
          .as("both splits committed")
          .isZero();
    }
  }

  @Test
  void streamsPastTheLimitFailTheReaderByName() throws Exception {
    // 750 KiB a partition in 512 KiB chunks: a reader keeps its stream open for the second chunk
    try (TestCluster cluster =
        TestCluster.start(tmp, 1, Map.of("sluice.app.maxOpenStreams", "1"))) {
      cluster.coordinator().registerShuffle(0, 1, PARTITIONS);
      push(cluster, 0, 3 << 20);
      try (PartitionReader first = cluster.reader(0, 0, 1, 0, 1)) {
        assertThat(first.next()).isNotNull();
        try (PartitionReader second = cluster.reader(0, 1, 2, 0, 1)) {
          assertThatThrownBy(second::next)
              .isInstanceOf(ApplicationLimitException.class)
              .hasMessageContaining("QUOTA_EXCEEDED")
              .hasMessageContaining("sluice.app.maxOpenStreams");
        }
      }
      try (PartitionReader again = cluster.reader(0, 1, 2, 0, 1)) {
        assertThat(records(again)).as("the first stream closed").isEqualTo(written(3 << 20) / 4);
      }
    }
  }

  @Test
  void aClosedReaderHoldsNoStreamOnItsServer() throws Exception {
    // at the limit, an open right after a close must not overtake the close on another connection
    try (TestCluster cluster =
        TestCluster.start(tmp, 1, Map.of("sluice.app.maxOpenStreams", "1"))) {
      cluster.coordinator().registerShuffle(0, 1, PARTITIONS);
      push(cluster, 0, 3 << 20);
      for (int i = 0; i < 20; i++) {
        try (PartitionReader reader = cluster.reader(0, i % PARTITIONS, i % PARTITIONS + 1, 0, 1)) {
          assertThat(reader.next()).isNotNull();
          assertThat(cluster.server(0).streamQuota().openBy(TestCluster.APP_ID)).isEqualTo(1);
        }
        assertThat(cluster.server(0).streamQuota().openBy(TestCluster.APP_ID))
            .as("streams open once reader %d is closed", i)
            .isZero();
      }
    }
  }

  @Test
  void negativeLimitsAreRefusedByName() throws Exception {
    try (TestCluster cluster = TestCluster.start(tmp, 1)) {
      LongFunction<Message> register =
          id ->
              Messages.request(
                  MessageType.REGISTER_SHUFFLE,
                  RegisterShuffle.newBuilder()
                      .setRequestId(id)
                      .setAppId("app-negative")
                      .setShuffleId(0)
                      .setNumMaps(1)
                      .setNumPartitions(1)
                      .setLimits(RequestedLimits.newBuilder().setMaxOpenStreams(-1))
                      .build(),
                  id);
      assertThatThrownBy(() -> cluster.context().call(null, cluster.addresses().get(0), register))
          .isInstanceOf(StatusException.class)
          .hasMessageContaining("BAD_REQUEST")
          .hasMessageContaining("max_open_streams -1");
      assertThat(cluster.server(0).registry().application("app-negative")).isNull();
    }
  }

  /** A second application, with its own coordinator and client settings, on the same servers. */
  private static final class Neighbour implements AutoCloseable {
    private final OtherApplication app;

    Neighbour(TestCluster cluster, Map<String, String> settings) throws Exception {
      app = new OtherApplication(cluster, "app-neighbour", settings);
    }

    /** Pushes {@code bytes} over the first {@code partitions} of a new shuffle, and commits. */
    void push(int partitions, int bytes) throws Exception {
      app.coordinator().registerShuffle(0, 1, partitions);
      try (MapOutputPusher pusher = app.pusher(0)) {
        write(pusher, partitions, bytes);
        pusher.finish();
      }
    }

    /** Like {@link #push}, then reads every record back. */
    void pushAndCheck(int partitions, int bytes) throws Exception {
      push(partitions, bytes);
      try (PartitionReader reader =
          new PartitionReader(
              app.context(),
              app.appId(),
              0,
              app.client().committedSplits(0, 0, partitions),
              0,
              1)) {
        assertThat(records(reader)).isEqualTo(written(bytes));
      }
    }

    @Override
    public void close() {
      app.close();
    }
  }

  /** Pushes {@code bytes} to shuffle {@code shuffleId} of the cluster's application and commits. */
  private static void push(TestCluster cluster, int shuffleId, int bytes) throws Exception {
    try (MapOutputPusher pusher = cluster.pusher(shuffleId, 0, 0)) {
      write(pusher, PARTITIONS, bytes);
      pusher.finish();
    }
  }

  private static final int RECORD = 1000;

  /**
   * Writes records of {@value #RECORD} bytes, round robin over the partitions, until {@code bytes}.
   */
  private static void write(MapOutputPusher pusher, int bytes) throws Exception {
    write(pusher, PARTITIONS, bytes);
  }

  /** Like {@link #write(MapOutputPusher, int)}, over the first {@code partitions} partitions. */
  private static void write(MapOutputPusher pusher, int partitions, int bytes) throws Exception {
    int[] seq = new int[partitions];
    for (int i = 0; i < written(bytes); i++) {
      int p = i % partitions;
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
