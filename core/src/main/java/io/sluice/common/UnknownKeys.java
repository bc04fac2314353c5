package io.sluice.common;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * Finds the {@code sluice.*} settings no component declares (usually typos) and words one warning
 * for each, naming the key as the user wrote it and, when a declared key is close, suggesting it:
 * {@code unknown configuration key sluice.server.prot (ignored); did you mean sluice.server.port?}.
 * The daemon, the aux service, the Spark driver and the Flink JobManager all warn through this
 * class, each with the keys of its own it adds to those of {@link ConfigKeys#ALL}.
 *
 * <p>A warning never holds the setting's value: a misspelled secret key ({@code
 * sluice.auth.clusterSecert}) is exactly the one whose value must not reach a log.
 *
 * <p>A key is "close" when it is the same but for case; else when it is at most a few edits away
 * (insertions, deletions, substitutions, swaps of neighbours; 1 for short names, up to 3 for long
 * ones), case ignored; else when it is the same with one dot-separated segment left out or added
 * ({@code sluice.server.memory.max} for {@code sluice.memory.max}). The closest wins; among equals,
 * the first declared. Settings under {@value SluiceConf#HADOOP_PREFIX} are Hadoop's and never
 * checked. Immutable and thread safe.
 */
public final class UnknownKeys {
  private static final String NAMESPACE = "sluice.";

  private final String shownPrefix;
  private final List<String> known;
  private final Set<String> knownSet;

  /**
   * @param shownPrefix put before every key a warning names, for components whose users write
   *     {@code sluice.x} differently ({@code "spark."}: Spark's {@code spark.sluice.x}); empty for
   *     none
   * @param knownNames the declared keys, all in the {@code sluice.} namespace
   */
  public UnknownKeys(String shownPrefix, Collection<String> knownNames) {
    this.shownPrefix = Objects.requireNonNull(shownPrefix, "shownPrefix");
    this.known = List.copyOf(new LinkedHashSet<>(knownNames));
    this.knownSet = Set.copyOf(known);
  }

  /** Against the keys of {@link ConfigKeys#ALL}: the server's, the network's and the client's. */
  public static UnknownKeys core() {
    return new UnknownKeys("", names(ConfigKeys.ALL));
  }

  /** These keys, with {@code keys} known too. */
  public UnknownKeys withKeys(Collection<? extends ConfigKey<?>> keys) {
    return withNames(names(keys));
  }

  /** These keys, with the keys named {@code names} known too. */
  public UnknownKeys withNames(Collection<String> names) {
    List<String> all = new ArrayList<>(known);
    all.addAll(names);
    return new UnknownKeys(shownPrefix, all);
  }

  /** These keys, with {@code prefix} before every key a warning names. */
  public UnknownKeys shownWithPrefix(String prefix) {
    return new UnknownKeys(prefix, known);
  }

  /** The names of {@code names} in the {@code sluice.} namespace that nobody declares, sorted. */
  public List<String> find(Collection<String> names) {
    Set<String> unknown = new TreeSet<>();
    for (String name : names) {
      if (name.startsWith(NAMESPACE)
          && !name.startsWith(SluiceConf.HADOOP_PREFIX)
          && !knownSet.contains(name)) {
        unknown.add(name);
      }
    }
    return List.copyOf(unknown);
  }

  /** {@link #find} of the keys {@code conf} sets. */
  public List<String> find(SluiceConf conf) {
    return find(conf.asMap().keySet());
  }

  /** One warning per unknown key of {@code names}, in the order of {@link #find}; never a value. */
  public List<String> warnings(Collection<String> names) {
    List<String> warnings = new ArrayList<>();
    for (String name : find(names)) {
      String close = suggestion(name);
      warnings.add(
          "unknown configuration key "
              + shownPrefix
              + name
              + " (ignored)"
              + (close == null ? "" : "; did you mean " + shownPrefix + close + "?"));
    }
    return warnings;
  }

  /** {@link #warnings} for the keys {@code conf} sets. */
  public List<String> warnings(SluiceConf conf) {
    return warnings(conf.asMap().keySet());
  }

  /** The declared key closest to {@code unknown} (as described above), or null when none is. */
  public String suggestion(String unknown) {
    String u = unknown.toLowerCase(Locale.ROOT);
    String best = null;
    int bestScore = Integer.MAX_VALUE;
    for (String name : known) {
      int score = closeness(u, name.toLowerCase(Locale.ROOT));
      if (score < bestScore) {
        best = name;
        bestScore = score;
      }
    }
    return best;
  }

  /**
   * 0 when the same but for case, 1 + edits when few enough, then (worse than any edits) a segment
   * apart: {@code sluice.server} is {@code sluice.servers}, not {@code sluice.server.port};
   * MAX_VALUE when not close.
   */
  private static int closeness(String unknown, String known) {
    if (unknown.equals(known)) {
      return 0;
    }
    int limit = editLimit(unknown);
    int edits = edits(unknown, known, limit);
    if (edits <= limit) {
      return 1 + edits;
    }
    if (oneSegmentApart(unknown, known) || oneSegmentApart(known, unknown)) {
      return limit + 2;
    }
    return Integer.MAX_VALUE;
  }

  /** Edits allowed for a key: by the length of its name after {@code sluice.}. */
  private static int editLimit(String key) {
    int length = key.startsWith(NAMESPACE) ? key.length() - NAMESPACE.length() : key.length();
    return length <= 8 ? 1 : length <= 20 ? 2 : 3;
  }

  /** Whether {@code longer} is {@code shorter} with one segment (not the first) added. */
  private static boolean oneSegmentApart(String longer, String shorter) {
    String[] segments = longer.split("\\.", -1);
    for (int drop = 1; drop < segments.length; drop++) {
      StringBuilder b = new StringBuilder();
      for (int i = 0; i < segments.length; i++) {
        if (i != drop) {
          b.append(b.length() == 0 ? "" : ".").append(segments[i]);
        }
      }
      if (b.toString().equals(shorter)) {
        return true;
      }
    }
    return false;
  }

  /**
   * The optimal-string-alignment distance of {@code a} and {@code b} (insertions, deletions,
   * substitutions and swaps of neighbouring characters), or {@code limit + 1} when it is larger.
   */
  static int edits(String a, String b, int limit) {
    if (Math.abs(a.length() - b.length()) > limit) {
      return limit + 1;
    }
    int[][] d = new int[a.length() + 1][b.length() + 1];
    for (int i = 0; i <= a.length(); i++) {
      d[i][0] = i;
    }
    for (int j = 0; j <= b.length(); j++) {
      d[0][j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      for (int j = 1; j <= b.length(); j++) {
        int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
        d[i][j] = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
        if (i > 1
            && j > 1
            && a.charAt(i - 1) == b.charAt(j - 2)
            && a.charAt(i - 2) == b.charAt(j - 1)) {
          d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
        }
      }
    }
    return Math.min(d[a.length()][b.length()], limit + 1);
  }

  private static List<String> names(Collection<? extends ConfigKey<?>> keys) {
    List<String> names = new ArrayList<>();
    for (ConfigKey<?> key : keys) {
      names.add(key.name());
    }
    return names;
  }
}
