package io.sluice.benchmarks;

import com.beust.jcommander.ParameterException;
import java.util.Locale;

/** Parses sizes such as {@code 512k}, {@code 256m}, {@code 2g} or {@code 1048576} (bytes). */
final class ByteSizes {
  private ByteSizes() {}

  /**
   * The number of bytes {@code value} stands for.
   *
   * @throws ParameterException naming {@code option} when it is not a non-negative size
   */
  static long parse(String option, String value) {
    String v = value.trim().toLowerCase(Locale.ROOT);
    if (v.endsWith("b")) {
      v = v.substring(0, v.length() - 1);
    }
    int shift = 0;
    if (v.endsWith("k")) {
      shift = 10;
    } else if (v.endsWith("m")) {
      shift = 20;
    } else if (v.endsWith("g")) {
      shift = 30;
    } else if (v.endsWith("t")) {
      shift = 40;
    }
    if (shift > 0) {
      v = v.substring(0, v.length() - 1);
    }
    long n;
    try {
      n = Long.parseLong(v.trim());
    } catch (NumberFormatException e) {
      n = -1;
    }
    if (n < 0 || n > (Long.MAX_VALUE >> shift)) {
      throw new ParameterException(
          option + ": '" + value + "' is not a size such as 512k, 256m or 2g");
    }
    return n << shift;
  }
}
