package io.sluice.auth;

import io.sluice.common.ConfigKey;
import io.sluice.common.SluiceConf;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Authentication settings. Who holds which secret:
 *
 * <ul>
 *   <li>The <b>cluster secret</b> is held by the servers and by the coordinators (Spark drivers,
 *       Flink JobManagers). It lets a coordinator register its application's key at a server, so
 *       only a coordinator can claim an application id; it never authorizes reading or writing any
 *       application's data.
 *   <li>The <b>application secret</b> is held by one application's processes (Spark: the secret of
 *       {@code spark.authenticate}; Flink: the cluster's configured secret). Each application id's
 *       key is derived from it ({@link AuthCodes#appKey}); a connection proves it holds that key.
 * </ul>
 */
public final class AuthConf {
  /** Shortest secret accepted: 128 bits written as at least 16 characters. */
  static final int MIN_SECRET_BYTES = 16;

  public static final ConfigKey<Boolean> ENABLED =
      ConfigKey.bool(
          "sluice.auth.enabled",
          false,
          "Servers: every connection must prove it holds the key of the application it acts for"
              + " before its first request, and may act for that application only (others are"
              + " answered FORBIDDEN). Clients: authenticate every connection. Servers and clients"
              + " must agree.");

  public static final ConfigKey<String> CLUSTER_SECRET =
      ConfigKey.string(
          "sluice.auth.clusterSecret",
          "",
          "With sluice.auth.enabled, on servers and coordinators (Spark drivers, Flink"
              + " JobManagers) only: the secret that signs a coordinator's registration of its"
              + " application's key, so nobody else can claim an application id. At least 16"
              + " characters. Prefer sluice.auth.clusterSecretFile.");

  public static final ConfigKey<String> CLUSTER_SECRET_FILE =
      ConfigKey.string(
          "sluice.auth.clusterSecretFile",
          "",
          "A file holding sluice.auth.clusterSecret (surrounding whitespace ignored), readable only"
              + " by the server's and the coordinators' users.");

  public static final ConfigKey<String> APP_SECRET =
      ConfigKey.string(
          "sluice.auth.appSecret",
          "",
          "With sluice.auth.enabled, on clients: the application's secret, from which the key of"
              + " each of its application ids is derived. Spark takes the secret of"
              + " spark.authenticate and needs nothing here; Flink reads it from its"
              + " configuration. At least 16 characters. Prefer sluice.auth.appSecretFile.");

  public static final ConfigKey<String> APP_SECRET_FILE =
      ConfigKey.string(
          "sluice.auth.appSecretFile",
          "",
          "A file holding sluice.auth.appSecret (surrounding whitespace ignored).");

  public static final ConfigKey<Long> TIMEOUT =
      ConfigKey.millis(
          "sluice.auth.timeout",
          "10s",
          "With sluice.auth.enabled, on servers and coordinator endpoints: a connection that has"
              + " not authenticated this long after it opened is closed, whatever it sends.");

  public static final ConfigKey<Integer> MAX_PENDING_PER_PEER =
      ConfigKey.integer(
          "sluice.auth.maxPendingPerPeer",
          64,
          "With sluice.auth.enabled, on servers and coordinator endpoints: connections from one"
              + " peer address that may be open at once without having authenticated yet; more"
              + " are closed as they arrive.");

  public static final List<ConfigKey<?>> KEYS =
      List.of(
          ENABLED,
          CLUSTER_SECRET,
          CLUSTER_SECRET_FILE,
          APP_SECRET,
          APP_SECRET_FILE,
          TIMEOUT,
          MAX_PENDING_PER_PEER);

  private final boolean enabled;
  private final Optional<byte[]> clusterSecret;
  private final Optional<byte[]> appSecret;
  private final long timeoutMillis;
  private final int maxPendingPerPeer;

  /**
   * @throws IllegalArgumentException naming the setting when a secret is too short or its file
   *     cannot be read
   */
  public AuthConf(SluiceConf conf) {
    this.enabled = conf.get(ENABLED);
    this.clusterSecret = secret(conf, CLUSTER_SECRET, CLUSTER_SECRET_FILE);
    this.appSecret = secret(conf, APP_SECRET, APP_SECRET_FILE);
    this.timeoutMillis = conf.get(TIMEOUT);
    if (timeoutMillis < 1) {
      throw new IllegalArgumentException(TIMEOUT + " must be positive, got " + timeoutMillis);
    }
    this.maxPendingPerPeer = conf.get(MAX_PENDING_PER_PEER);
    if (maxPendingPerPeer < 1) {
      throw new IllegalArgumentException(
          MAX_PENDING_PER_PEER + " must be at least 1, got " + maxPendingPerPeer);
    }
  }

  /**
   * A secret given inline or in a file (whitespace around it ignored), of at least 16 bytes; empty
   * when neither is set.
   *
   * @throws IllegalArgumentException naming the setting when both are set, the file cannot be read
   *     or the secret is too short
   */
  public static Optional<byte[]> secret(
      SluiceConf conf, ConfigKey<String> inline, ConfigKey<String> file) {
    String value = conf.get(inline);
    String path = conf.get(file);
    if (!value.isEmpty() && !path.isEmpty()) {
      throw new IllegalArgumentException(
          "set either " + inline.name() + " or " + file.name() + ", not both");
    }
    if (!path.isEmpty()) {
      try {
        value = Files.readString(Path.of(path), StandardCharsets.UTF_8).trim();
      } catch (IOException | RuntimeException e) {
        throw new IllegalArgumentException(
            "cannot read " + file.name() + " '" + path + "': " + e.getMessage(), e);
      }
    }
    if (value.isEmpty()) {
      return Optional.empty();
    }
    byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
    if (bytes.length < MIN_SECRET_BYTES) {
      throw new IllegalArgumentException(
          (path.isEmpty() ? inline.name() : file.name() + " '" + path + "'")
              + " holds a secret of "
              + bytes.length
              + " bytes; at least "
              + MIN_SECRET_BYTES
              + " are required");
    }
    return Optional.of(bytes);
  }

  /**
   * {@code conf} for a process that is not a coordinator (a Spark executor, a Flink TaskManager):
   * without the cluster secret, which such a process must never hold, nor try to read.
   */
  public static SluiceConf withoutClusterSecret(SluiceConf conf) {
    Map<String, String> values = new HashMap<>(conf.asMap());
    values.remove(CLUSTER_SECRET.name());
    values.remove(CLUSTER_SECRET_FILE.name());
    return SluiceConf.of(values);
  }

  public boolean enabled() {
    return enabled;
  }

  /** Milliseconds a connection may stay open without authenticating ({@link #TIMEOUT}). */
  public long timeoutMillis() {
    return timeoutMillis;
  }

  /** Unauthenticated connections one peer address may hold open ({@link #MAX_PENDING_PER_PEER}). */
  public int maxPendingPerPeer() {
    return maxPendingPerPeer;
  }

  /** The cluster secret, when this process is a server or a coordinator. */
  public Optional<byte[]> clusterSecret() {
    return clusterSecret;
  }

  /** The application secret, when configured. */
  public Optional<byte[]> appSecret() {
    return appSecret;
  }

  /**
   * A server's cluster secret.
   *
   * @throws IllegalArgumentException naming the settings when authentication is on without one
   */
  public byte[] requireClusterSecret() {
    return clusterSecret.orElseThrow(
        () ->
            new IllegalArgumentException(
                ENABLED.name()
                    + " is true but no cluster secret is set: set "
                    + CLUSTER_SECRET_FILE.name()
                    + " (or "
                    + CLUSTER_SECRET.name()
                    + ")"));
  }

  /**
   * A client's application secret.
   *
   * @throws IllegalArgumentException naming the settings when authentication is on without one
   */
  public byte[] requireAppSecret() {
    return appSecret.orElseThrow(
        () ->
            new IllegalArgumentException(
                ENABLED.name()
                    + " is true but no application secret is set: set "
                    + APP_SECRET_FILE.name()
                    + " (or "
                    + APP_SECRET.name()
                    + "; Spark uses the secret of spark.authenticate)"));
  }
}
