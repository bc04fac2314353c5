package io.sluice.common;

import io.sluice.auth.AuthConf;
import io.sluice.client.ClientConf;
import io.sluice.network.NetworkConf;
import io.sluice.network.TlsConf;
import io.sluice.server.IntegrityConf;
import io.sluice.server.ServerConf;
import io.sluice.server.admin.AdminConf;
import io.sluice.server.metrics.MetricsConf;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Every configuration key Sluice knows, in the order {@code conf/sluice-defaults.conf} lists them.
 * A test checks that file against this list, so the documented defaults cannot drift from the code.
 */
public final class ConfigKeys {
  public static final List<ConfigKey<?>> ALL;

  static {
    List<ConfigKey<?>> all = new ArrayList<>();
    all.addAll(ServerConf.KEYS);
    all.addAll(AdminConf.KEYS);
    all.addAll(MetricsConf.KEYS);
    all.addAll(IntegrityConf.KEYS);
    all.addAll(AuthConf.KEYS);
    all.addAll(NetworkConf.KEYS);
    all.addAll(TlsConf.KEYS);
    all.addAll(ClientConf.KEYS);
    ALL = Collections.unmodifiableList(all);
  }

  private ConfigKeys() {}

  /** The key named {@code name}, or null. */
  public static ConfigKey<?> find(String name) {
    for (ConfigKey<?> key : ALL) {
      if (key.name().equals(name)) {
        return key;
      }
    }
    return null;
  }
}
