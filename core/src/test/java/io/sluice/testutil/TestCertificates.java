package io.sluice.testutil;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * A self-signed certificate made for one test by the JDK's {@code keytool} (no network): a PKCS12
 * key store with its key, a trust store holding the certificate, and both as PEM files.
 */
public final class TestCertificates {
  public static final String PASSWORD = "test-secret";

  public final Path keyStore;
  public final Path trustStore;
  public final Path certPem;
  public final Path keyPem;

  private TestCertificates(Path keyStore, Path trustStore, Path certPem, Path keyPem) {
    this.keyStore = keyStore;
    this.trustStore = trustStore;
    this.certPem = certPem;
    this.keyPem = keyPem;
  }

  /** A certificate for {@code localhost} and {@code 127.0.0.1}. */
  public static TestCertificates create(Path dir, String name) throws IOException {
    return create(dir, name, "dns:localhost,ip:127.0.0.1");
  }

  /** A certificate whose subject alternative names are {@code san} (keytool syntax). */
  public static TestCertificates create(Path dir, String name, String san) throws IOException {
    Files.createDirectories(dir);
    Path keyStore = dir.resolve(name + "-key.p12");
    Path trustStore = dir.resolve(name + "-trust.p12");
    Path certPem = dir.resolve(name + "-cert.pem");
    Path keyPem = dir.resolve(name + "-key.pem");
    keytool(
        "-genkeypair",
        "-alias",
        name,
        "-keyalg",
        "EC",
        "-groupname",
        "secp256r1",
        "-dname",
        "CN=" + name + ", O=Sluice test",
        "-ext",
        "SAN=" + san,
        "-validity",
        "7",
        "-storetype",
        "PKCS12",
        "-keystore",
        keyStore.toString(),
        "-storepass",
        PASSWORD,
        "-keypass",
        PASSWORD);
    keytool(
        "-exportcert",
        "-rfc",
        "-alias",
        name,
        "-keystore",
        keyStore.toString(),
        "-storepass",
        PASSWORD,
        "-file",
        certPem.toString());
    keytool(
        "-importcert",
        "-noprompt",
        "-alias",
        name,
        "-file",
        certPem.toString(),
        "-storetype",
        "PKCS12",
        "-keystore",
        trustStore.toString(),
        "-storepass",
        PASSWORD);
    try (InputStream in = Files.newInputStream(keyStore)) {
      KeyStore store = KeyStore.getInstance("PKCS12");
      store.load(in, PASSWORD.toCharArray());
      PrivateKey key = (PrivateKey) store.getKey(name, PASSWORD.toCharArray());
      String base64 =
          Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
              .encodeToString(key.getEncoded());
      Files.writeString(
          keyPem, "-----BEGIN PRIVATE KEY-----\n" + base64 + "\n-----END PRIVATE KEY-----\n");
    } catch (java.security.GeneralSecurityException e) {
      throw new IOException(e);
    }
    return new TestCertificates(keyStore, trustStore, certPem, keyPem);
  }

  /** Settings of a process that serves with this certificate and trusts {@code trusted}. */
  public Map<String, String> conf(TestCertificates trusted) {
    Map<String, String> conf = new TreeMap<>();
    conf.put("sluice.tls.enabled", "true");
    conf.put("sluice.tls.keyStore", keyStore.toString());
    conf.put("sluice.tls.keyStorePassword", PASSWORD);
    conf.put("sluice.tls.trustStore", trusted.trustStore.toString());
    conf.put("sluice.tls.trustStorePassword", PASSWORD);
    return conf;
  }

  /** Settings of a process that serves with this certificate and trusts it. */
  public Map<String, String> conf() {
    return conf(this);
  }

  /** A JDK SSL context that trusts this certificate, for test clients of our own. */
  public SSLContext trustingContext() throws Exception {
    KeyStore store = KeyStore.getInstance("PKCS12");
    try (InputStream in = Files.newInputStream(trustStore)) {
      store.load(in, PASSWORD.toCharArray());
    }
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(store);
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(null, tmf.getTrustManagers(), null);
    return context;
  }

  private static void keytool(String... args) throws IOException {
    List<String> command = new ArrayList<>();
    command.add(Paths.get(System.getProperty("java.home"), "bin", "keytool").toString());
    command.addAll(List.of(args));
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    try {
      String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
        throw new IOException("keytool " + String.join(" ", args) + " failed: " + output);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted running keytool", e);
    }
  }
}
