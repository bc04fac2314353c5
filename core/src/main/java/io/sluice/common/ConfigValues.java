package io.sluice.common;

import java.util.Locale;

/** Parsers for configuration values; every error names the key and the offending value. */
final class ConfigValues {
  private ConfigValues() {}

  static long parseBytes(String key, String raw) {
    String v = raw.trim().toLowerCase(Locale.ROOT);
    long unit = 1;
    if (v.endsWith("b")) {
      v = v.substring(0, v.length() - 1);
    }
    if (v.endsWith("k")) {
      unit = 1L << 10;
    } else if (v.endsWith("m")) {
      unit = 1L << 20;
    } else if (v.endsWith("g")) {
      unit = 1L << 30;
    } else if (v.endsWith("t")) {
      unit = 1L << 40;
    }
    if (unit != 1) {
      v = v.substring(0, v.length() - 1);
    }
    try {
      long n = Long.parseLong(v.trim());
      if (n < 0) {
        throw bad(key, raw, "a non-negative size such as 512k, 64m or 2g");
      }
      return Math.multiplyExact(n, unit);
    } catch (NumberFormatException | ArithmeticException e) {
      throw bad(key, raw, "a size such as 512k, 64m or 2g");
    }
  }

  static long parseMillis(String key, String raw) {
    String v = raw.trim().toLowerCase(Locale.ROOT);
    long unit;
    if (v.endsWith("ms")) {
      unit = 1;
      v = v.substring(0, v.length() - 2);
    } else if (v.endsWith("min")) {
      unit = 60_000;
      v = v.substring(0, v.length() - 3);
    } else if (v.endsWith("s")) {
      unit = 1000;
      v = v.substring(0, v.length() - 1);
    } else if (v.endsWith("h")) {
      unit = 3_600_000;
      v = v.substring(0, v.length() - 1);
    } else {
      throw bad(key, raw, "a duration with a unit, such as 500ms, 30s, 5min or 1h");
    }
    try {
      long n = Long.parseLong(v.trim());
      if (n < 0) {
        throw bad(key, raw, "a non-negative duration");
      }
      return Math.multiplyExact(n, unit);
    } catch (NumberFormatException | ArithmeticException e) {
      throw bad(key, raw, "a duration such as 500ms, 30s, 5min or 1h");
    }
  }

  static int parseInt(String key, String raw) {
    try {
      return Integer.parseInt(raw.trim());
    } catch (NumberFormatException e) {
      throw bad(key, raw, "an integer");
    }
  }

  static double parseFraction(String key, String raw) {
    try {
      double d = Double.parseDouble(raw.trim());
      if (!(d >= 0.0 && d <= 1.0)) {
        throw bad(key, raw, "a fraction between 0.0 and 1.0");
      }
      return d;
    } catch (NumberFormatException e) {
      throw bad(key, raw, "a fraction between 0.0 and 1.0");
    }
  }

  static boolean parseBoolean(String key, String raw) {
    String v = raw.trim().toLowerCase(Locale.ROOT);
    if (v.equals("true")) {
      return true;
    }
    if (v.equals("false")) {
      return false;
    }
    throw bad(key, raw, "true or false");
  }

  /** The error for {@code raw}; the value is left out when the key looks secret. */
  private static IllegalArgumentException bad(String key, String raw, String expected) {
    String value = SecretSettings.looksSecret(key) ? SecretSettings.REDACTED : "'" + raw + "'";
    return new IllegalArgumentException(
        "Invalid value " + value + " for " + key + ": expected " + expected);
  }
}
