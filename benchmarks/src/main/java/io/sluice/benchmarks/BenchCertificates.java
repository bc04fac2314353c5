package io.sluice.benchmarks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * The self-signed certificate of {@code shuffle-bench server --tls}, made with the JDK's {@code
 * keytool} for 127.0.0.1 in the benchmark's directory, and the settings that make the server, the
 * coordinator and the clients use it.
 */
final class BenchCertificates {
  private static final String PASSWORD = "sluice-bench";

  private BenchCertificates() {}

  /** Creates the key and trust stores in {@code dir}; returns the {@code sluice.tls.*} settings. */
  static Map<String, String> create(Path dir) throws IOException {
    Files.createDirectories(dir);
    Path keyStore = dir.resolve("bench-key.p12");
    Path trustStore = dir.resolve("bench-trust.p12");
    Path cert = dir.resolve("bench-cert.pem");
    keytool(
        "-genkeypair",
        "-alias",
        "bench",
        "-keyalg",
        "EC",
        "-groupname",
        "secp256r1",
        "-dname",
        "CN=sluice-bench",
        "-ext",
        "SAN=dns:localhost,ip:127.0.0.1",
        "-validity",
        "2",
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
        "bench",
        "-keystore",
        keyStore.toString(),
        "-storepass",
        PASSWORD,
        "-file",
        cert.toString());
    keytool(
        "-importcert",
        "-noprompt",
        "-alias",
        "bench",
        "-file",
        cert.toString(),
        "-storetype",
        "PKCS12",
        "-keystore",
        trustStore.toString(),
        "-storepass",
        PASSWORD);
    Map<String, String> settings = new TreeMap<>();
    settings.put("sluice.tls.enabled", "true");
    settings.put("sluice.tls.keyStore", keyStore.toString());
    settings.put("sluice.tls.keyStorePassword", PASSWORD);
    settings.put("sluice.tls.trustStore", trustStore.toString());
    settings.put("sluice.tls.trustStorePassword", PASSWORD);
    return settings;
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
