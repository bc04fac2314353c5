package io.sluice.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.codahale.metrics.MetricRegistry;
import io.sluice.client.ClientContext;
import io.sluice.client.ServerRequests;
import io.sluice.client.coordinator.CoordinatorClient;
import io.sluice.client.push.MapOutputPusher;
import io.sluice.client.read.PartitionReader;
import io.sluice.client.read.ShuffleBatch;
import io.sluice.common.SluiceConf;
import io.sluice.network.NetworkConf;
import io.sluice.protocol.StatusException;
import io.sluice.protocol.proto.ServerAddress;
import io.sluice.server.admin.AdminHttpServer;
import io.sluice.testutil.Records;
import io.sluice.testutil.TestCertificates;
import io.sluice.testutil.TestCluster;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * TLS on every Sluice port, with self-signed certificates this test makes with keytool: pushes,
 * commits and reads through real servers, the coordinator endpoint, the metrics endpoint over
 * HTTPS, and the errors of a client that does not trust the server or does not speak TLS.
 */
class TlsIT {
  @TempDir Path tmp;

  private static final int MAPS = 3;
  private static final int PARTITIONS = 8;

  /** Pushes records of every map to every partition, commits, reads all back, checks counts. */
  private static void roundTrip(TestCluster cluster, int shuffleId) throws Exception {
    cluster.coordinator().registerShuffle(shuffleId, MAPS, PARTITIONS);
    int[][] expected = new int[MAPS][PARTITIONS];
    for (int m = 0; m < MAPS; m++) {
      try (MapOutputPusher pusher = cluster.pusher(shuffleId, m, 0)) {
        for (int i = 0; i < 400; i++) {
          int p = i % PARTITIONS;
          // some records larger than a chunk's share, so reads span several chunks
          byte[] r = Records.record(m, p, expected[m][p]++, i % 50 == 0 ? 300_000 : 1_000);
          pusher.write(p, r, 0, r.length);
        }
        pusher.finish();
      }
    }
    Records.Checker checker = new Records.Checker();
    try (PartitionReader reader = cluster.reader(shuffleId, 0, PARTITIONS, 0, MAPS)) {
      ShuffleBatch batch;
      while ((batch = reader.next()) != null) {
        checker.accept(batch.partitionId(), batch.payload());
      }
    }
    for (int m = 0; m < MAPS; m++) {
      for (int p = 0; p < PARTITIONS; p++) {
        assertThat(checker.count(m, p)).as("map %d partition %d", m, p).isEqualTo(expected[m][p]);
      }
    }
  }

  /** A TLS handshake of the JDK's own client with {@code port}; fails unless it speaks TLS. */
  private static String handshake(TestCertificates trusted, int port) throws Exception {
    try (SSLSocket socket =
        (SSLSocket) trusted.trustingContext().getSocketFactory().createSocket("127.0.0.1", port)) {
      socket.setSoTimeout(30_000);
      socket.startHandshake();
      return socket.getSession().getProtocol();
    }
  }

  @Test
  void pushCommitAndReadThroughServersAndCoordinatorOverTls() throws Exception {
    TestCertificates certs = TestCertificates.create(tmp.resolve("certs"), "cluster");
    try (TestCluster cluster = TestCluster.start(tmp.resolve("data"), 2, certs.conf())) {
      roundTrip(cluster, 0);

      assertThat(handshake(certs, cluster.server(0).port())).isEqualTo("TLSv1.3");
      assertThat(handshake(certs, cluster.coordinator().port())).isEqualTo("TLSv1.3");
      long read = 0;
      for (var server : cluster.servers()) {
        read += server.metrics().bytesRead().getCount();
      }
      assertThat(read).as("chunks were read as buffers through TLS").isPositive();
      assertThat(cluster.memoryHeld()).isZero();
    }
  }

  @Test
  void pemCertificateAndKeyServeAndPemTrustedCertificateConnects() throws Exception {
    TestCertificates certs = TestCertificates.create(tmp.resolve("certs"), "pem");
    Map<String, String> conf = new HashMap<>();
    conf.put("sluice.tls.enabled", "true");
    conf.put("sluice.tls.certChain", certs.certPem.toString());
    conf.put("sluice.tls.privateKey", certs.keyPem.toString());
    conf.put("sluice.tls.trustCertChain", certs.certPem.toString());
    conf.put("sluice.tls.protocols", "TLSv1.2");
    try (TestCluster cluster = TestCluster.start(tmp.resolve("data"), 1, conf)) {
      roundTrip(cluster, 1);
      assertThat(handshake(certs, cluster.server(0).port())).isEqualTo("TLSv1.2");
    }
  }

  @Test
  void clientThatDoesNotTrustTheServerFailsSayingSoAndNamingTheServer() throws Exception {
    TestCertificates certs = TestCertificates.create(tmp.resolve("certs"), "cluster");
    TestCertificates stranger = TestCertificates.create(tmp.resolve("certs"), "stranger");
    try (TestCluster cluster = TestCluster.start(tmp.resolve("data"), 1, certs.conf())) {
      SluiceConf clientConf = SluiceConf.of(stranger.conf());
      String server = "127.0.0.1:" + cluster.server(0).port();
      try (ClientContext client = new ClientContext(clientConf)) {
        ServerAddress address = ClientContext.address("127.0.0.1", cluster.server(0).port());
        assertThatThrownBy(
                () ->
                    client.call(
                        TestCluster.APP_ID, address, ServerRequests.heartbeat(TestCluster.APP_ID)))
            .isInstanceOf(IOException.class)
            .hasMessageContaining("Sluice server " + server)
            .hasMessageContaining("certificate is not trusted")
            .hasMessageContaining("sluice.tls.trustStore");
        String coordinator = "127.0.0.1:" + cluster.coordinator().port();
        CoordinatorClient toCoordinator =
            new CoordinatorClient(
                client,
                TestCluster.APP_ID,
                ClientContext.address("127.0.0.1", cluster.coordinator().port()));
        assertThatThrownBy(() -> toCoordinator.locations(0))
            .isInstanceOf(IOException.class)
            .hasMessageContaining(coordinator)
            .hasMessageContaining("not trusted");
      }
      // the server and coordinator keep serving clients that trust them
      roundTrip(cluster, 2);
    }
  }

  @Test
  void certificateForAnotherHostIsRefusedNamingTheSetting() throws Exception {
    TestCertificates elsewhere =
        TestCertificates.create(tmp.resolve("certs"), "elsewhere", "dns:shuffle.example.com");
    try (TestCluster cluster = TestCluster.start(tmp.resolve("data"), 1, elsewhere.conf())) {
      ServerAddress address = ClientContext.address("127.0.0.1", cluster.server(0).port());
      try (ClientContext client = new ClientContext(cluster.conf())) {
        assertThatThrownBy(
                () ->
                    client.call(
                        TestCluster.APP_ID, address, ServerRequests.heartbeat(TestCluster.APP_ID)))
            .isInstanceOf(IOException.class)
            .hasMessageContaining("127.0.0.1:" + cluster.server(0).port())
            .hasMessageContaining("does not name the host")
            .hasMessageContaining("sluice.tls.verifyHostname");
      }
      SluiceConf lenient = cluster.conf().with("sluice.tls.verifyHostname", "false");
      try (ClientContext client = new ClientContext(lenient)) {
        // the connection is secured; the server answers (nothing is registered: a status error)
        assertThatThrownBy(
                () ->
                    client.call(
                        TestCluster.APP_ID, address, ServerRequests.heartbeat(TestCluster.APP_ID)))
            .isInstanceOf(StatusException.class)
            .hasMessageContaining("SHUFFLE_NOT_REGISTERED");
      }
    }
  }

  @Test
  void plainClientAgainstTlsServerFailsAndTheServerKeepsServing() throws Exception {
    TestCertificates certs = TestCertificates.create(tmp.resolve("certs"), "cluster");
    try (TestCluster cluster = TestCluster.start(tmp.resolve("data"), 1, certs.conf());
        ClientContext plain = new ClientContext(SluiceConf.empty())) {
      String server = "127.0.0.1:" + cluster.server(0).port();
      assertThatThrownBy(
              () ->
                  plain.call(
                      TestCluster.APP_ID,
                      ClientContext.address("127.0.0.1", cluster.server(0).port()),
                      ServerRequests.heartbeat(TestCluster.APP_ID)))
          .isInstanceOf(IOException.class)
          .hasMessageContaining("Sluice server " + server);
      CoordinatorClient toCoordinator =
          new CoordinatorClient(
              plain,
              TestCluster.APP_ID,
              ClientContext.address("127.0.0.1", cluster.coordinator().port()));
      assertThatThrownBy(() -> toCoordinator.locations(0)).isInstanceOf(IOException.class);

      roundTrip(cluster, 3);
    }
  }

  @Test
  void tlsClientAgainstPlainServerFailsNamingTheSetting() throws Exception {
    TestCertificates certs = TestCertificates.create(tmp.resolve("certs"), "cluster");
    try (TestCluster cluster = TestCluster.start(tmp.resolve("data"), 1);
        ClientContext client = new ClientContext(SluiceConf.of(certs.conf()))) {
      assertThatThrownBy(
              () ->
                  client.call(
                      TestCluster.APP_ID,
                      ClientContext.address("127.0.0.1", cluster.server(0).port()),
                      ServerRequests.heartbeat(TestCluster.APP_ID)))
          .isInstanceOf(IOException.class)
          .hasMessageContaining("127.0.0.1:" + cluster.server(0).port())
          .hasMessageContaining("sluice.tls.enabled");
    }
  }

  @Test
  void metricsAreServedOverHttps() throws Exception {
    TestCertificates certs = TestCertificates.create(tmp.resolve("certs"), "metrics");
    MetricRegistry registry = new MetricRegistry();
    registry.counter("sluice.server.test").inc(7);
    NetworkConf conf = new NetworkConf(SluiceConf.of(certs.conf()));
    try (AdminHttpServer http = new AdminHttpServer(registry, null, "127.0.0.1", 0, conf.tls())) {
      HttpClient client =
          HttpClient.newBuilder()
              .sslContext(certs.trustingContext())
              .connectTimeout(Duration.ofSeconds(30))
              .build();
      HttpResponse<String> response =
          client.send(
              HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + http.port() + "/metrics"))
                  .timeout(Duration.ofSeconds(30))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(response.statusCode()).isEqualTo(200);
      assertThat(response.body()).contains("7");
      assertThat(handshake(certs, http.port())).isEqualTo("TLSv1.3");
    }
  }
}
