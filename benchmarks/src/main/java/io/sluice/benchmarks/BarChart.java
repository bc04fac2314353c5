package io.sluice.benchmarks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A grouped bar chart written as a plain SVG document: one group of bars per category (a workload),
 * one bar per series (built-in, Sluice...), each bar labelled with its value, a value axis with
 * grid lines, and a legend. A value that is not finite draws no bar. Every {@code shuffle-bench}
 * command draws its result table with it ({@code --chart}, see {@link ChartOption}).
 */
final class BarChart {
  private static final String[] COLORS = {"#9e9e9e", "#1f77b4", "#ff7f0e", "#2ca02c"};
  private static final int BAR = 36;
  private static final int GROUP_GAP = 40;
  private static final int LEFT = 70;
  private static final int RIGHT = 20;
  private static final int TOP = 60;
  private static final int PLOT_HEIGHT = 240;
  private static final int BOTTOM = 50;

  private final String title;
  private final String unit;
  private final List<String> series;
  // in the order added; two groups may have the same name (a pusher count given twice)
  private final List<Map.Entry<String, double[]>> groups = new ArrayList<>();

  /** A chart titled {@code title} whose values are in {@code unit}, with these series. */
  BarChart(String title, String unit, List<String> series) {
    this.title = title;
    this.unit = unit;
    this.series = List.copyOf(series);
  }

  /** Adds a group: one value per series, in the series' order. */
  BarChart group(String name, double... values) {
    if (values.length != series.size()) {
      throw new IllegalArgumentException(
          name + " has " + values.length + " values for " + series.size() + " series");
    }
    groups.add(Map.entry(name, values.clone()));
    return this;
  }

  void write(Path file) throws IOException {
    Path parent = file.toAbsolutePath().getParent();
    if (parent != null) {
      Files.createDirectories(parent);
    }
    Files.writeString(file, svg(), StandardCharsets.UTF_8);
  }

  String svg() {
    double max = 0;
    for (Map.Entry<String, double[]> group : groups) {
      for (double v : group.getValue()) {
        if (Double.isFinite(v)) {
          max = Math.max(max, v);
        }
      }
    }
    double step = tickStep(max);
    double top = step * Math.max(1, Math.ceil(max / step));
    // wide enough for its bars and for its label, at about 7 pixels per character
    int groupWidth = series.size() * BAR + GROUP_GAP;
    for (Map.Entry<String, double[]> group : groups) {
      groupWidth = Math.max(groupWidth, 7 * group.getKey().length() + 12);
    }
    int width = LEFT + Math.max(1, groups.size()) * groupWidth + RIGHT;
    int legendWidth = 0;
    for (String s : series) {
      legendWidth += 30 + 7 * s.length();
    }
    width = Math.max(width, LEFT + legendWidth + RIGHT);
    // about 8 pixels per character of the 14-pixel bold title
    width = Math.max(width, 10 + 8 * title.length() + RIGHT);
    int height = TOP + PLOT_HEIGHT + BOTTOM;
    int baseline = TOP + PLOT_HEIGHT;

    List<String> parts = new ArrayList<>();
    parts.add(
        String.format(
            Locale.ROOT,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d"
                + " %d\" font-family=\"sans-serif\" font-size=\"12\">",
            width,
            height,
            width,
            height));
    parts.add(
        String.format(
            Locale.ROOT, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>", width, height));
    parts.add(text("title", 10, 20, "start", "font-size=\"14\" font-weight=\"bold\"", title));
    // legend
    int x = LEFT;
    for (int i = 0; i < series.size(); i++) {
      parts.add(
          String.format(
              Locale.ROOT,
              "<rect class=\"legend\" x=\"%d\" y=\"32\" width=\"12\" height=\"12\" fill=\"%s\"/>",
              x,
              color(i)));
      parts.add(text("legend", x + 16, 42, "start", "", series.get(i)));
      x += 30 + 7 * series.get(i).length();
    }
    // value axis: grid lines and ticks
    for (double t = 0; t <= top + step / 2; t += step) {
      int y = baseline - (int) Math.round(t / top * PLOT_HEIGHT);
      parts.add(
          String.format(
              Locale.ROOT,
              "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#dddddd\"/>",
              LEFT,
              y,
              width - RIGHT,
              y));
      parts.add(text("tick", LEFT - 6, y + 4, "end", "", tick(t, step)));
    }
    parts.add(
        String.format(
            Locale.ROOT,
            "<text class=\"unit\" x=\"16\" y=\"%d\" text-anchor=\"middle\""
                + " transform=\"rotate(-90 16 %d)\">%s</text>",
            TOP + PLOT_HEIGHT / 2,
            TOP + PLOT_HEIGHT / 2,
            escape(unit)));
    // bars, their values and the group labels
    int g = 0;
    for (Map.Entry<String, double[]> group : groups) {
      int groupX = LEFT + g * groupWidth + (groupWidth - series.size() * BAR) / 2;
      double[] values = group.getValue();
      for (int i = 0; i < values.length; i++) {
        if (!Double.isFinite(values[i])) {
          continue;
        }
        int barX = groupX + i * BAR;
        int barHeight = (int) Math.round(values[i] / top * PLOT_HEIGHT);
        parts.add(
            String.format(
                Locale.ROOT,
                "<rect class=\"bar\" data-group=\"%s\" data-series=\"%s\" data-value=\"%s\""
                    + " x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>",
                escape(group.getKey()),
                escape(series.get(i)),
                format(values[i]),
                barX + 2,
                baseline - barHeight,
                BAR - 4,
                barHeight,
                color(i)));
        parts.add(
            text(
                "value",
                barX + BAR / 2,
                baseline - barHeight - 4,
                "middle",
                "font-size=\"11\"",
                format(values[i])));
      }
      parts.add(
          text(
              "group",
              groupX + series.size() * BAR / 2,
              baseline + 18,
              "middle",
              "",
              group.getKey()));
      g++;
    }
    parts.add(
        String.format(
            Locale.ROOT,
            "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>",
            LEFT,
            baseline,
            width - RIGHT,
            baseline));
    parts.add("</svg>");
    return String.join("\n", parts) + "\n";
  }

  /** 1, 2 or 5 times a power of ten, so that about five ticks cover {@code max}. */
  static double tickStep(double max) {
    if (!(max > 0)) {
      return 1;
    }
    double raw = max / 5;
    double power = Math.pow(10, Math.floor(Math.log10(raw)));
    for (double m : new double[] {1, 2, 5}) {
      if (m * power >= raw) {
        return m * power;
      }
    }
    return 10 * power;
  }

  private static String color(int i) {
    return COLORS[i % COLORS.length];
  }

  private static String text(
      String cssClass, int x, int y, String anchor, String attributes, String content) {
    return String.format(
        Locale.ROOT,
        "<text class=\"%s\" x=\"%d\" y=\"%d\" text-anchor=\"%s\"%s>%s</text>",
        cssClass,
        x,
        y,
        anchor,
        attributes.isEmpty() ? "" : " " + attributes,
        escape(content));
  }

  /** A tick's value with as many decimals as the step between ticks has. */
  static String tick(double value, double step) {
    int decimals = step >= 1 ? 0 : (int) Math.ceil(-Math.log10(step) - 1e-9);
    return String.format(Locale.ROOT, "%." + decimals + "f", value);
  }

  /** Two decimals below 10, one below 100, none above. */
  static String format(double v) {
    double a = Math.abs(v);
    String pattern = a < 10 ? "%.2f" : a < 100 ? "%.1f" : "%.0f";
    return String.format(Locale.ROOT, pattern, v);
  }

  private static String escape(String s) {
    return s.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace("\"", "&quot;");
  }
}
