package io.sluice.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.client.ClientContext;
import io.sluice.client.coordinator.ShuffleCoordinator;
import io.sluice.protocol.proto.ServerAddress;
import io.sluice.testutil.BlackHoleProxy;
import io.sluice.testutil.TestCluster;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One server that stops answering without closing its connections (a black-holed host) must not
 * make the healthy servers expire a running application: heartbeats are per server, bounded and off
 * the shared scheduler ({@code ServerHeartbeats}).
 */
class SilentServerIT {
  private static final String APP = "app-silent";
  private static final long APP_TIMEOUT_MILLIS = 4_000;

  @TempDir Path tmp;

  @Test
  void aBlackHoledServerDoesNotMakeHealthyServersExpireTheApplication() throws Exception {
    try (TestCluster cluster =
        TestCluster.start(
            tmp,
            3,
            Map.of(
                "sluice.app.timeout", APP_TIMEOUT_MILLIS + "ms",
                "sluice.app.expiryCheckInterval", "200ms",
                "sluice.coordinator.heartbeatInterval", "250ms",
                // as in production: an unanswered request waits much longer than the app timeout
                "sluice.network.requestTimeout", "60s"))) {
      List<ServerAddress> servers = cluster.addresses();
      BlackHoleProxy proxy = new BlackHoleProxy("127.0.0.1", servers.get(2).getPort());
      ShuffleCoordinator coordinator = null;
      try {
        ServerAddress silent = ClientContext.address("127.0.0.1", proxy.port());
        coordinator =
            new ShuffleCoordinator(
                APP,
                List.of(servers.get(0), servers.get(1), silent),
                cluster.context(),
                "127.0.0.1");
        coordinator.registerShuffle(0, 2, 6);
        proxy.blackHole();
        // three application timeouts: before heartbeats were per server, the first round stuck on
        // the silent server for the request timeout and both healthy servers expired the app
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(3 * APP_TIMEOUT_MILLIS);
        while (System.nanoTime() < end) {
          for (int i = 0; i < 2; i++) {
            assertThat(cluster.server(i).registry().contains(APP, 0))
                .as("server %d still holds the running application's shuffle", i)
                .isTrue();
          }
          Thread.sleep(100);
        }
      } finally {
        proxy.close(); // resets its connections, so the coordinator's goodbye fails fast there
        if (coordinator != null) {
          coordinator.close();
        }
      }
    }
  }
}
