package io.sluice.auth;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.protocol.MessageType;
import io.sluice.protocol.proto.Response;
import io.sluice.protocol.proto.Status;
import io.sluice.testutil.RawConnection;
import io.sluice.testutil.TestCluster;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * With {@code sluice.auth.enabled}, a stranger cannot hold a server's connections: a connection
 * that does not authenticate within {@code sluice.auth.timeout} is closed however much it talks,
 * and one peer address holds at most {@code sluice.auth.maxPendingPerPeer} unauthenticated
 * connections.
 */
class AuthDeadlineIT {
  @TempDir Path tmp;

  private static Map<String, String> conf(String timeout, int maxPendingPerPeer) {
    Map<String, String> conf =
        AuthenticationIT.auth(AuthenticationIT.APP_SECRET, AuthenticationIT.CLUSTER_SECRET);
    conf.put("sluice.auth.timeout", timeout);
    conf.put("sluice.auth.maxPendingPerPeer", Integer.toString(maxPendingPerPeer));
    return conf;
  }

  @Test
  void connectionsThatKeepSayingHelloButNeverProveAreClosedAtTheDeadline() throws Exception {
    try (TestCluster cluster = TestCluster.start(tmp, 1, conf("1s", 64))) {
      int port = cluster.server(0).port();
      List<RawConnection> strangers = new ArrayList<>();
      try {
        for (int i = 0; i < 5; i++) {
          strangers.add(new RawConnection("127.0.0.1", port));
        }
        // each says hello again and again (every hello used to reset the idle timer), and never
        // sends a proof; each must be closed, well before the 10-minute idle timeout
        long giveUp = System.nanoTime() + 60_000_000_000L;
        int closed = 0;
        while (closed < strangers.size() && System.nanoTime() < giveUp) {
          closed = 0;
          for (RawConnection c : strangers) {
            if (!saysHello(c)) {
              closed++;
            }
          }
          Thread.sleep(100);
        }
        assertThat(closed).as("strangers closed by sluice.auth.timeout").isEqualTo(5);
      } finally {
        strangers.forEach(RawConnection::close);
      }

      // a connection that authenticated stays open past the deadline
      try (RawConnection c = new RawConnection("127.0.0.1", port)) {
        Response accepted =
            AuthenticationIT.authenticate(
                c,
                TestCluster.APP_ID,
                AuthenticationIT.APP_SECRET,
                AuthenticationIT.CLUSTER_SECRET);
        assertThat(accepted.getStatus()).isEqualTo(Status.OK);
        Thread.sleep(3_000); // three deadlines: a deadline left armed would have closed it
        c.send(AuthenticationIT.request(MessageType.HEARTBEAT, TestCluster.APP_ID));
        assertThat(c.readResponse().getStatus()).isNotEqualTo(Status.FORBIDDEN);
      }
      // and applications work as before
      AuthenticationIT.writeAndRead(cluster);
      assertThat(cluster.server(0).metrics().authFailures().getCount()).isGreaterThanOrEqualTo(5);
    }
  }

  @Test
  void onePeerHoldsAtMostMaxPendingPerPeerUnauthenticatedConnections() throws Exception {
    try (TestCluster cluster = TestCluster.start(tmp, 1, conf("10min", 3))) {
      AuthenticationIT.writeAndRead(cluster);
      int port = cluster.server(0).port();
      List<RawConnection> strangers = new ArrayList<>();
      try {
        for (int i = 0; i < 3; i++) {
          RawConnection c = new RawConnection("127.0.0.1", port);
          strangers.add(c);
          // answered: the connection is open, and counted as unauthenticated
          c.send(AuthenticationIT.request(MessageType.HEARTBEAT, TestCluster.APP_ID));
          assertThat(c.readResponse().getStatus()).isEqualTo(Status.FORBIDDEN);
        }
        try (RawConnection fourth = new RawConnection("127.0.0.1", port)) {
          assertThat(fourth.closedByServerWithin(30_000)).as("4th from one peer").isTrue();
        }
        // another peer is not affected
        try (RawConnection other = new RawConnection("127.0.0.1", port, "127.0.0.2")) {
          Response accepted =
              AuthenticationIT.authenticate(
                  other,
                  TestCluster.APP_ID,
                  AuthenticationIT.APP_SECRET,
                  AuthenticationIT.CLUSTER_SECRET);
          assertThat(accepted.getStatus()).isEqualTo(Status.OK);
        }
        // the strangers that are counted are still served (answered, not closed)
        for (RawConnection c : strangers) {
          c.send(AuthenticationIT.request(MessageType.HEARTBEAT, TestCluster.APP_ID));
          assertThat(c.readResponse().getStatus()).isEqualTo(Status.FORBIDDEN);
        }
        // one closes: its slot frees (the server learns of the close asynchronously)
        strangers.remove(0).close();
        long giveUp = System.nanoTime() + 60_000_000_000L;
        boolean accepted = false;
        while (!accepted && System.nanoTime() < giveUp) {
          try (RawConnection c = new RawConnection("127.0.0.1", port)) {
            c.send(AuthenticationIT.request(MessageType.HEARTBEAT, TestCluster.APP_ID));
            accepted = c.readResponse().getStatus() == Status.FORBIDDEN;
          } catch (IOException e) {
            Thread.sleep(50);
          }
        }
        assertThat(accepted).as("a slot freed by a close is taken again").isTrue();
      } finally {
        strangers.forEach(RawConnection::close);
      }
    }
  }

  /** True when {@code c} is still open: its AUTH_HELLO is answered. */
  private static boolean saysHello(RawConnection c) {
    try {
      AuthenticationIT.hello(c, "stranger-app", "a-strangers-own-secret-0123", null);
      return true;
    } catch (IOException e) {
      return false;
    }
  }
}
