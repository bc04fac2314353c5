package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.client.push.MapOutputPusher;
import io.sluice.server.storage.ShuffleRegistry;
import io.sluice.server.storage.ShuffleShape;
import io.sluice.testutil.ManualClock;
import io.sluice.testutil.Records;
import io.sluice.testutil.TestCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** An application that stops heartbeating expires and its files go. */
class ApplicationExpiryTest {
  @TempDir Path tmp;

  @Test
  void silentApplicationExpiresAndItsFilesAreDeleted() throws Exception {
    ManualClock clock = new ManualClock();
    try (TestCluster cluster =
        TestCluster.start(tmp, 1, Map.of("sluice.app.timeout", "60s"), clock)) {
      cluster.coordinator().registerShuffle(0, 1, 4);
      try (MapOutputPusher pusher = cluster.pusher(0, 0, 0)) {
        for (int p = 0; p < 4; p++) {
          byte[] r = Records.record(0, p, 0, 1000);
          pusher.write(p, r, 0, r.length);
        }
        pusher.finish();
      }
      cluster.coordinator().committed(0).get();
      ShuffleServer server = cluster.server(0);
      assertThat(countFiles(tmp)).isPositive();

      clock.advance(59_000);
      server.expireApplications();
      assertThat(server.registry().applicationCount()).isEqualTo(1);

      clock.advance(2_000);
      server.expireApplications();
      assertThat(server.registry().applicationCount()).isZero();
      assertThat(countFiles(tmp)).isZero();
      assertThatThrownBy(() -> cluster.reader(0, 0, 4, 0, 1).next())
          .hasMessageContaining("not registered");
    }
  }

  /**
   * A registration that lands while expiry is deleting a silent application (here: from expiry's
   * own per-application callback, the moment between deciding and deleting) is never lost with it.
   */
  @Test
  void aRegistrationDuringExpiryIsKept() throws Exception {
    ManualClock clock = new ManualClock();
    try (TestCluster cluster =
        TestCluster.start(tmp, 1, Map.of("sluice.app.timeout", "60s"), clock)) {
      cluster.coordinator().registerShuffle(0, 1, 4);
      ShuffleRegistry registry = cluster.server(0).registry();
      clock.advance(61_000);
      registry
          .expire(60_000, () -> registry.register(TestCluster.APP_ID, 1, ShuffleShape.of(1, 4)))
          .get();
      assertThat(registry.contains(TestCluster.APP_ID, 0)).as("the silent shuffle").isFalse();
      assertThat(registry.contains(TestCluster.APP_ID, 1))
          .as("the shuffle registered while expiry ran")
          .isTrue();
    }
  }

  /** Files under {@code root}, leaving out the server's state store (it outlives applications). */
  private static long countFiles(Path root) throws Exception {
    try (Stream<Path> walk = Files.walk(root)) {
      return walk.filter(Files::isRegularFile)
          .filter(p -> !p.toString().contains(".sluice-state"))
          .count();
    }
  }
}
