package io.sluice.network;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.codahale.metrics.MetricRegistry;
import io.sluice.common.Clock;
import io.sluice.common.SluiceConf;
import io.sluice.server.ServerConf;
import io.sluice.server.ShuffleServer;
import io.sluice.testutil.TestCertificates;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Bad TLS settings stop a process at startup with a message naming the setting and the file. */
class TlsConfTest {
  @TempDir Path tmp;

  private static NetworkConf network(Map<String, String> tls) {
    return new NetworkConf(SluiceConf.of(tls));
  }

  @Test
  void offByDefault() {
    assertThat(network(Map.of()).tls().enabled()).isFalse();
    assertThat(network(Map.of()).tls().serverContext("test")).isNull();
  }

  @Test
  void missingKeyStoreNamesTheSettingAndTheFile() {
    Path missing = tmp.resolve("nowhere.p12");
    assertThatThrownBy(
            () ->
                network(
                    Map.of(
                        "sluice.tls.enabled", "true", "sluice.tls.keyStore", missing.toString())))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("sluice.tls.keyStore")
        .hasMessageContaining(missing.toString());
  }

  @Test
  void wrongPasswordNamesTheSettingAndTheFile() throws Exception {
    TestCertificates certs = TestCertificates.create(tmp, "server");
    Map<String, String> conf = new java.util.TreeMap<>(certs.conf());
    conf.put("sluice.tls.keyStorePassword", "not-the-password");
    assertThatThrownBy(() -> network(conf))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("sluice.tls.keyStore")
        .hasMessageContaining("password")
        .hasMessageContaining(certs.keyStore.toString());

    Map<String, String> trust = new java.util.TreeMap<>(certs.conf());
    trust.put("sluice.tls.trustStorePassword", "not-the-password");
    assertThatThrownBy(() -> network(trust))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("sluice.tls.trustStore")
        .hasMessageContaining(certs.trustStore.toString());
  }

  @Test
  void passwordsAreReadFromFiles() throws Exception {
    TestCertificates certs = TestCertificates.create(tmp, "server");
    Path secret = Files.writeString(tmp.resolve("secret"), TestCertificates.PASSWORD + "\n");
    Map<String, String> conf = new java.util.TreeMap<>(certs.conf());
    conf.put("sluice.tls.keyStorePassword", "");
    conf.put("sluice.tls.trustStorePassword", "wrong, but the file wins");
    conf.put("sluice.tls.keyStorePasswordFile", secret.toString());
    conf.put("sluice.tls.trustStorePasswordFile", secret.toString());
    assertThat(network(conf).tls().serverContext("test")).isNotNull();

    conf.put("sluice.tls.keyStorePasswordFile", tmp.resolve("no-secret").toString());
    assertThatThrownBy(() -> network(conf))
        .hasMessageContaining("sluice.tls.keyStorePasswordFile")
        .hasMessageContaining(tmp.resolve("no-secret").toString());
  }

  @Test
  void unknownProtocolNamesTheSetting() {
    assertThatThrownBy(
            () -> network(Map.of("sluice.tls.enabled", "true", "sluice.tls.protocols", "SSLv2")))
        .hasMessageContaining("sluice.tls.protocols")
        .hasMessageContaining("SSLv2");
  }

  @Test
  void pemKeyWithoutItsCertificateNamesBothSettings() throws Exception {
    TestCertificates certs = TestCertificates.create(tmp, "server");
    assertThatThrownBy(
            () ->
                network(
                    Map.of(
                        "sluice.tls.enabled",
                        "true",
                        "sluice.tls.privateKey",
                        certs.keyPem.toString())))
        .hasMessageContaining("sluice.tls.certChain")
        .hasMessageContaining("sluice.tls.privateKey");
  }

  @Test
  void serverWithoutCertificateFailsToStartNamingTheSetting() throws Exception {
    SluiceConf conf =
        SluiceConf.of(
            Map.of(
                "sluice.tls.enabled",
                "true",
                "sluice.server.host",
                "127.0.0.1",
                "sluice.server.port",
                "0",
                "sluice.server.dirs",
                tmp.resolve("data").toString(),
                "sluice.memory.max",
                "16m"));
    NetworkConf network = new NetworkConf(conf); // a client needs no certificate
    assertThat(network.tls().enabled()).isTrue();
    assertThatThrownBy(
            () ->
                new ShuffleServer(new ServerConf(conf), network, new MetricRegistry(), Clock.SYSTEM)
                    .close())
        .hasMessageContaining("sluice.tls.keyStore");
  }
}
