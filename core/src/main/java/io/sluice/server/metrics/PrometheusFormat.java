package io.sluice.server.metrics;

import com.codahale.metrics.Counter;
import com.codahale.metrics.Gauge;
import com.codahale.metrics.Histogram;
import com.codahale.metrics.Meter;
import com.codahale.metrics.MetricRegistry;
import com.codahale.metrics.Snapshot;
import com.codahale.metrics.Timer;
import io.sluice.server.metrics.PrometheusNames.Family;
import io.sluice.server.metrics.PrometheusNames.Match;
import io.sluice.server.metrics.PrometheusNames.Type;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * Renders a {@link MetricRegistry} in the Prometheus text exposition format (version 0.0.4), with
 * the names of {@link PrometheusNames}: one {@code # HELP} and {@code # TYPE} per family, a data
 * directory's metrics as one family each labelled {@code directory}, timers as summaries in
 * seconds. With a {@link PrometheusSource} in the registry every sample carries the label {@code
 * server="host:port"} and the application families ({@code sluice_application_*}) are added.
 *
 * <p>A metric the table does not know is exported under its Dropwizard name with every character
 * other than {@code [a-zA-Z0-9_]} turned into {@code _} (a meter as a counter {@code _total}, a
 * timer as a summary {@code _seconds}, a counter as a gauge); gauges whose value is not a number
 * are skipped unless the table exports them as a state set.
 */
public final class PrometheusFormat {
  private static final double[] QUANTILES = {0.5, 0.75, 0.95, 0.99};

  private PrometheusFormat() {}

  /** The registry's metrics, with the server label and applications of its source if it has one. */
  public static String render(MetricRegistry registry) {
    return render(registry, true);
  }

  /**
   * Like {@link #render(MetricRegistry)}; without {@code applicationIds} every application is
   * summed as {@code application="other"}, so the exposition names none (for a scrape that may not
   * see them).
   */
  public static String render(MetricRegistry registry, boolean applicationIds) {
    return render(registry, PrometheusSource.in(registry), applicationIds);
  }

  /** The registry's metrics, with {@code source}'s label and applications (null: none). */
  static String render(MetricRegistry registry, PrometheusSource source) {
    return render(registry, source, true);
  }

  private static String render(
      MetricRegistry registry, PrometheusSource source, boolean applicationIds) {
    Map<String, String> directories = new HashMap<>();
    if (source != null) {
      for (Path p : source.directories()) {
        directories.put(PrometheusNames.directorySegment(p), p.toString());
      }
    }
    Families out = new Families(source == null ? null : source.server());
    for (Map.Entry<String, Gauge> e : registry.getGauges().entrySet()) {
      Match m = PrometheusNames.find(e.getKey(), directories);
      Object value = e.getValue().getValue();
      if (m != null && !m.family.states().isEmpty()) {
        for (String state : m.family.states()) {
          out.sample(
              m.family,
              "",
              m.directory,
              "state",
              state,
              state.equals(String.valueOf(value)) ? 1 : 0);
        }
      } else if (value instanceof Number) {
        Family f = m != null ? m.family : unmapped(e.getKey(), "", Type.GAUGE, 1);
        out.sample(f, "", dir(m), null, null, ((Number) value).doubleValue() * f.scale());
      }
    }
    for (Map.Entry<String, Counter> e : registry.getCounters().entrySet()) {
      Match m = PrometheusNames.find(e.getKey(), directories);
      Family f = m != null ? m.family : unmapped(e.getKey(), "", Type.GAUGE, 1);
      out.sample(f, "", dir(m), null, null, e.getValue().getCount() * f.scale());
    }
    for (Map.Entry<String, Meter> e : registry.getMeters().entrySet()) {
      Match m = PrometheusNames.find(e.getKey(), directories);
      Family f = m != null ? m.family : unmapped(e.getKey(), "_total", Type.COUNTER, 1);
      out.sample(f, "", dir(m), null, null, e.getValue().getCount() * f.scale());
    }
    for (Map.Entry<String, Histogram> e : registry.getHistograms().entrySet()) {
      Match m = PrometheusNames.find(e.getKey(), directories);
      Family f = m != null ? m.family : unmapped(e.getKey(), "", Type.SUMMARY, 1);
      out.summary(f, dir(m), e.getValue().getSnapshot(), e.getValue().getCount());
    }
    for (Map.Entry<String, Timer> e : registry.getTimers().entrySet()) {
      Match m = PrometheusNames.find(e.getKey(), directories);
      Family f = m != null ? m.family : unmapped(e.getKey(), "_seconds", Type.SUMMARY, 1e-9);
      out.summary(f, dir(m), e.getValue().getSnapshot(), e.getValue().getCount());
    }
    if (source != null) {
      applications(out, source.applications(), applicationIds ? source.topApplications() : 0);
    }
    return out.text();
  }

  /**
   * The {@code top} applications holding the most bytes one by one, and the rest summed as {@code
   * other} (when there are more than {@code top}): at most {@code top + 1} series per family.
   */
  private static void applications(Families out, List<PrometheusSource.Application> apps, int top) {
    List<PrometheusSource.Application> sorted = new ArrayList<>(apps);
    sorted.sort(
        Comparator.comparingLong((PrometheusSource.Application a) -> a.storedBytes)
            .reversed()
            .thenComparing(a -> a.id));
    List<PrometheusSource.Application> shown = new ArrayList<>();
    long[] other = new long[6];
    for (int i = 0; i < sorted.size(); i++) {
      PrometheusSource.Application a = sorted.get(i);
      if (i < top) {
        shown.add(a);
      } else {
        other[0] += a.storedBytes;
        other[1] += a.pushedBytes;
        other[2] += a.readBytes;
        other[3] += a.splits;
        other[4] += a.memoryHeldBytes;
        other[5] += a.refusedBytes;
      }
    }
    if (sorted.size() > top) {
      shown.add(
          new PrometheusSource.Application(
              OTHER, other[0], other[1], other[2], other[3], other[4], other[5]));
    }
    for (PrometheusSource.Application a : shown) {
      application(out, PrometheusNames.APPLICATION_STORED, a.id, a.storedBytes);
      application(out, PrometheusNames.APPLICATION_PUSHED, a.id, a.pushedBytes);
      application(out, PrometheusNames.APPLICATION_READ, a.id, a.readBytes);
      application(out, PrometheusNames.APPLICATION_SPLITS, a.id, a.splits);
      application(out, PrometheusNames.APPLICATION_MEMORY_HELD, a.id, a.memoryHeldBytes);
      application(out, PrometheusNames.APPLICATION_REFUSED, a.id, a.refusedBytes);
    }
  }

  /** The {@code application} label of the applications past the top N, summed. */
  public static final String OTHER = "other";

  private static void application(Families out, Family f, String id, long value) {
    out.sample(f, "", null, PrometheusNames.APPLICATION_LABEL, id, value);
  }

  private static String dir(Match m) {
    return m == null ? null : m.directory;
  }

  private static Family unmapped(String dropwizardName, String suffix, Type type, double scale) {
    return PrometheusNames.unmapped(name(dropwizardName) + suffix, type, scale, dropwizardName);
  }

  /** A Dropwizard name as a Prometheus one: {@code [a-zA-Z0-9_]}, not starting with a digit. */
  static String name(String dropwizardName) {
    String n = dropwizardName.replaceAll("[^a-zA-Z0-9_]", "_");
    return n.isEmpty() || Character.isDigit(n.charAt(0)) ? "_" + n : n;
  }

  /** The families being rendered, by name, each with its samples. */
  private static final class Families {
    private final String server;
    private final Map<String, Block> blocks = new TreeMap<>();

    Families(String server) {
      this.server = server;
    }

    private static final class Block {
      final Family family;
      final StringBuilder samples = new StringBuilder();

      Block(Family family) {
        this.family = family;
      }
    }

    private StringBuilder block(Family f) {
      return blocks.computeIfAbsent(f.name(), n -> new Block(f)).samples;
    }

    /** One sample of {@code f} (its name plus {@code suffix}), with up to two labels of its own. */
    void sample(
        Family f, String suffix, String directory, String label, String labelValue, double value) {
      StringBuilder b = block(f);
      b.append(f.name()).append(suffix);
      labels(b, directory, label, labelValue);
      b.append(' ').append(format(value)).append('\n');
    }

    void summary(Family f, String directory, Snapshot s, long count) {
      for (double q : QUANTILES) {
        sample(f, "", directory, "quantile", Double.toString(q), s.getValue(q) * f.scale());
      }
      sample(f, "_count", directory, null, null, count);
    }

    private void labels(StringBuilder b, String directory, String label, String labelValue) {
      List<String> pairs = new ArrayList<>(3);
      if (server != null) {
        pairs.add(pair("server", server));
      }
      if (directory != null) {
        pairs.add(pair(PrometheusNames.DIRECTORY_LABEL, directory));
      }
      if (label != null) {
        pairs.add(pair(label, labelValue));
      }
      if (!pairs.isEmpty()) {
        b.append('{').append(String.join(",", pairs)).append('}');
      }
    }

    String text() {
      StringBuilder out = new StringBuilder();
      for (Block block : blocks.values()) {
        Family f = block.family;
        out.append("# HELP ").append(f.name()).append(' ').append(escapeHelp(f.help()));
        out.append('\n');
        out.append("# TYPE ").append(f.name()).append(' ').append(f.type().text).append('\n');
        out.append(block.samples);
      }
      return out.toString();
    }
  }

  private static String pair(String label, String value) {
    return label + "=\"" + escapeLabel(value) + "\"";
  }

  static String escapeLabel(String value) {
    return value.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
  }

  private static String escapeHelp(String help) {
    return help.replace("\\", "\\\\").replace("\n", "\\n");
  }

  private static String format(double v) {
    if (Double.isNaN(v)) {
      return "NaN";
    }
    if (Double.isInfinite(v)) {
      return v > 0 ? "+Inf" : "-Inf";
    }
    if (v == Math.rint(v) && Math.abs(v) < 1e15) {
      return Long.toString((long) v);
    }
    return String.format(Locale.ROOT, "%s", v);
  }
}
