package io.sluice.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.client.ServerRequests;
import io.sluice.protocol.proto.ServerAddress;
import io.sluice.server.ShuffleServer;
import io.sluice.testutil.RawConnection;
import io.sluice.testutil.TestCluster;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Connections themselves are bounded: a cap on open ones, and idle ones are closed. */
class ConnectionLimitsIT {
  @TempDir Path tmp;

  @Test
  void thousandsOfIdleConnectionsNeitherStopServiceNorStay() throws Exception {
    try (TestCluster cluster =
        TestCluster.start(tmp, 1, Map.of("sluice.network.server.idleTimeout", "2s"))) {
      ShuffleServer server = cluster.server(0);
      ServerAddress address = cluster.addresses().get(0);
      List<RawConnection> idle = new ArrayList<>();
      try {
        for (int i = 0; i < 2_000; i++) {
          idle.add(new RawConnection("127.0.0.1", server.port()));
        }
        // everyone else is served meanwhile
        cluster.context().call(null, address, ServerRequests.registerShuffle("app-live", 0, 1, 1));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (server.connectionCount() > 10 && System.nanoTime() < deadline) {
          Thread.sleep(50);
        }
        assertThat(server.connectionCount())
            .as("connections left after sluice.network.server.idleTimeout")
            .isLessThanOrEqualTo(10);
        assertThat(idle.get(0).closedByServerWithin(10_000)).isTrue();
      } finally {
        idle.forEach(RawConnection::close);
      }
    }
  }

  @Test
  void connectionsBeyondTheCapAreClosed() throws Exception {
    try (TestCluster cluster =
        TestCluster.start(tmp, 1, Map.of("sluice.network.server.maxConnections", "50"))) {
      ShuffleServer server = cluster.server(0);
      List<RawConnection> open = new ArrayList<>();
      try {
        for (int i = 0; i < 60; i++) {
          open.add(new RawConnection("127.0.0.1", server.port()));
        }
        int closed = 0;
        for (RawConnection c : open) {
          if (c.closedByServerWithin(200)) {
            closed++;
          }
        }
        assertThat(closed).isGreaterThanOrEqualTo(10);
        assertThat(server.connectionCount()).isLessThanOrEqualTo(50);
      } finally {
        open.forEach(RawConnection::close);
      }
    }
  }
}
