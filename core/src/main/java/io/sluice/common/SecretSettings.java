package io.sluice.common;

import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * Which settings' values may be shown in a log or an error. A key whose name contains {@code
 * secret}, {@code token}, {@code password} or {@code key} (case ignored) looks secret, declared or
 * not, so a misspelled {@code sluice.auth.clusterSecert} is hidden like the real one. Errors and
 * logs that show a setting's value go through {@link #shown}.
 */
public final class SecretSettings {
  /** What a secret-looking setting's value is shown as. */
  public static final String REDACTED = "*****(redacted)";

  private static final String[] MARKERS = {"secret", "token", "password", "key"};

  private SecretSettings() {}

  /** Whether the setting named {@code key} may hold a secret. */
  public static boolean looksSecret(String key) {
    String k = key.toLowerCase(Locale.ROOT);
    for (String marker : MARKERS) {
      if (k.contains(marker)) {
        return true;
      }
    }
    return false;
  }

  /** {@code value}, or {@link #REDACTED} when {@code key} looks secret. */
  public static String shown(String key, String value) {
    return looksSecret(key) ? REDACTED : value;
  }

  /** A sorted copy of {@code settings} with the values of secret-looking keys redacted. */
  public static Map<String, String> redacted(Map<String, String> settings) {
    Map<String, String> shown = new TreeMap<>();
    for (Map.Entry<String, String> e : settings.entrySet()) {
      shown.put(e.getKey(), shown(e.getKey(), e.getValue()));
    }
    return shown;
  }
}
