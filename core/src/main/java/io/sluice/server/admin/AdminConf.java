package io.sluice.server.admin;

import io.sluice.auth.AuthConf;
import io.sluice.common.ConfigKey;
import io.sluice.common.SluiceConf;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;

/**
 * Who may act through the admin API, how long a stopping server waits for its drain, and whether a
 * server that cannot start takes its NodeManager down.
 */
public final class AdminConf {
  public static final ConfigKey<String> TOKEN =
      ConfigKey.string(
          "sluice.admin.token",
          "",
          "Bearer token the admin API's actions (decommission, cancel-decommission, expire) require"
              + " in an 'Authorization: Bearer TOKEN' header; at least 16 characters. Without one,"
              + " every action is refused (403). With sluice.auth.enabled, the endpoints that list"
              + " application ids need it too. Prefer sluice.admin.tokenFile.");
  public static final ConfigKey<String> TOKEN_FILE =
      ConfigKey.string(
          "sluice.admin.tokenFile",
          "",
          "A file holding sluice.admin.token (surrounding whitespace ignored), readable only by"
              + " the server's user and the operators'.");
  public static final ConfigKey<Long> DRAIN_TIMEOUT =
      ConfigKey.millis(
          "sluice.shutdown.drainTimeout",
          "0s",
          "How long a stopping server (a NodeManager stopping its aux service, shuffle-daemon stop)"
              + " first stays decommissioned, serving reads until the applications holding data on"
              + " it end; 0 stops at once (open splits are still committed).");

  public static final ConfigKey<Boolean> YARN_STOP_ON_FAILURE =
      ConfigKey.bool(
          "sluice.yarn.stopOnFailure",
          false,
          "In a NodeManager: whether a Sluice server that cannot start (its port taken, a setting"
              + " or its state store unreadable, too little direct memory) fails the NodeManager's"
              + " start too; false logs the error and the NodeManager runs on without Sluice.");

  public static final List<ConfigKey<?>> KEYS =
      List.of(TOKEN, TOKEN_FILE, DRAIN_TIMEOUT, YARN_STOP_ON_FAILURE);

  private final Optional<String> token;
  private final boolean authEnabled;
  private final long drainTimeoutMillis;

  /**
   * @throws IllegalArgumentException naming the setting when the token is too short or its file
   *     cannot be read
   */
  public AdminConf(SluiceConf conf) {
    this.token =
        AuthConf.secret(conf, TOKEN, TOKEN_FILE).map(b -> new String(b, StandardCharsets.UTF_8));
    this.authEnabled = conf.get(AuthConf.ENABLED);
    this.drainTimeoutMillis = conf.get(DRAIN_TIMEOUT);
    if (drainTimeoutMillis < 0) {
      throw new IllegalArgumentException(
          DRAIN_TIMEOUT.name() + " must not be negative, got " + drainTimeoutMillis + " ms");
    }
  }

  /** The token actions require, when one is set. */
  public Optional<String> token() {
    return token;
  }

  /**
   * Actions are refused outright: no token is set. A server nobody configured a token for must not
   * let anyone who reaches its admin port take it out of service or delete data.
   */
  public boolean actionsClosed() {
    return token.isEmpty();
  }

  /**
   * Reads that name applications (their ids and shuffles) need the token: authentication is on, so
   * application ids are treated as confidential. Without a token set they are refused.
   */
  public boolean applicationReadsGuarded() {
    return authEnabled;
  }

  public long drainTimeoutMillis() {
    return drainTimeoutMillis;
  }
}
