package io.sluice.benchmarks;

import java.util.Locale;

/** The little JSON the benchmarks hand-write: numbers and strings. */
final class Json {
  private Json() {}

  /** A number with up to three decimals; {@code null} when it is not finite. */
  static String num(double v) {
    if (Double.isNaN(v) || Double.isInfinite(v)) {
      return "null";
    }
    String s = String.format(Locale.ROOT, "%.3f", v);
    return s.contains(".") ? s.replaceAll("0+$", "").replaceAll("\\.$", "") : s;
  }

  static String str(String v) {
    StringBuilder s = new StringBuilder("\"");
    for (int i = 0; i < v.length(); i++) {
      char c = v.charAt(i);
      if (c == '"' || c == '\\') {
        s.append('\\').append(c);
      } else if (c < 0x20) {
        s.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
      } else {
        s.append(c);
      }
    }
    return s.append('"').toString();
  }
}
