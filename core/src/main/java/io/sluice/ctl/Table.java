package io.sluice.ctl;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * An aligned text table for people: a header, then rows; numeric columns are right-aligned. Also
 * the human units the tables use (bytes, durations).
 */
final class Table {
  private final String[] headers;
  private final boolean[] rightAligned;
  private final List<String[]> rows = new ArrayList<>();

  /**
   * @param headers column names; a name ending in {@code '>'} makes its column right-aligned (the
   *     {@code '>'} is not printed)
   */
  Table(String... headers) {
    this.headers = new String[headers.length];
    this.rightAligned = new boolean[headers.length];
    for (int i = 0; i < headers.length; i++) {
      boolean right = headers[i].endsWith(">");
      this.rightAligned[i] = right;
      this.headers[i] = right ? headers[i].substring(0, headers[i].length() - 1) : headers[i];
    }
  }

  /** Adds a row; missing cells are blank, null cells print as "-". */
  Table row(Object... cells) {
    String[] row = new String[headers.length];
    for (int i = 0; i < headers.length; i++) {
      row[i] = i < cells.length ? (cells[i] == null ? "-" : String.valueOf(cells[i])) : "";
    }
    rows.add(row);
    return this;
  }

  int size() {
    return rows.size();
  }

  void print(PrintStream out) {
    int[] widths = new int[headers.length];
    for (int i = 0; i < headers.length; i++) {
      widths[i] = headers[i].length();
      for (String[] row : rows) {
        widths[i] = Math.max(widths[i], row[i].length());
      }
    }
    line(out, headers, widths);
    for (String[] row : rows) {
      line(out, row, widths);
    }
    out.flush();
  }

  private void line(PrintStream out, String[] cells, int[] widths) {
    StringBuilder line = new StringBuilder();
    for (int i = 0; i < cells.length; i++) {
      if (i > 0) {
        line.append("  ");
      }
      String pad = " ".repeat(widths[i] - cells[i].length());
      if (rightAligned[i]) {
        line.append(pad).append(cells[i]);
      } else {
        line.append(cells[i]);
        if (i < cells.length - 1) {
          line.append(pad);
        }
      }
    }
    out.println(line.toString().stripTrailing());
  }

  /** {@code 1536} as "1.5 KiB"; below 1 KiB in bytes; null as "-". */
  static String bytes(Object value) {
    if (!(value instanceof Number)) {
      return "-";
    }
    double b = ((Number) value).doubleValue();
    if (Math.abs(b) < 1024) {
      return (long) b + " B";
    }
    String[] units = {"KiB", "MiB", "GiB", "TiB", "PiB"};
    int unit = -1;
    while (Math.abs(b) >= 1024 && unit < units.length - 1) {
      b /= 1024;
      unit++;
    }
    return String.format(Locale.ROOT, "%.1f %s", b, units[unit]);
  }

  /** Milliseconds as "850ms", "42s", "3m 05s", "2h 07m", "4d 03h"; null as "-". */
  static String duration(Object value) {
    if (!(value instanceof Number)) {
      return "-";
    }
    long ms = ((Number) value).longValue();
    if (ms < 1000) {
      return ms + "ms";
    }
    long s = ms / 1000;
    if (s < 60) {
      return s + "s";
    }
    long m = s / 60;
    if (m < 60) {
      return String.format(Locale.ROOT, "%dm %02ds", m, s % 60);
    }
    long h = m / 60;
    if (h < 24) {
      return String.format(Locale.ROOT, "%dh %02dm", h, m % 60);
    }
    return String.format(Locale.ROOT, "%dd %02dh", h / 24, h % 24);
  }

  /** A fraction as a percentage, "83%"; null as "-". */
  static String percent(Object fraction) {
    if (!(fraction instanceof Number)) {
      return "-";
    }
    return Math.round(((Number) fraction).doubleValue() * 100) + "%";
  }
}
