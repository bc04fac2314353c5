package io.sluice.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.common.ConfigKey;
import io.sluice.common.ConfigKeys;
import io.sluice.flink.FlinkClientConf;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The README and docs/*.md: every relative link leads to a file of the repository (and a heading of
 * it, for links with an anchor), and every configuration key they name is one the code knows.
 */
class DocsTest {
  /** The Spark client's classes that declare its own {@code spark.sluice.*} keys. */
  private static final List<String> SPARK_KEY_CLASSES =
      List.of(
          "org.apache.spark.shuffle.sluice.SparkSluiceConf",
          "org.apache.spark.shuffle.sluice.ShuffleFallback",
          "org.apache.spark.shuffle.sluice.YarnServerDiscovery");

  /**
   * Names that are not Sluice keys: {@code sluice.hadoop.*} settings go to the Hadoop configuration
   * as they are (the distributed tier), so any name under it is valid; {@code
   * sluice.server.dir.<dir>.suspect} is the registry's name of a metric, in the code's doc of
   * {@code sluice.integrity.suspectAfter}, which docs/configuration.md quotes.
   */
  private static final List<String> NOT_KEY_PREFIXES =
      List.of("sluice.hadoop.", "sluice.server.dir.");

  /** A {@code [text](target)} link. */
  private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");

  /**
   * A key: {@code sluice.} or {@code spark.sluice.} not inside a longer name (a package such as
   * {@code io.sluice.common}, a path such as {@code conf/sluice.conf}).
   */
  private static final Pattern KEY =
      Pattern.compile("(?<![\\w.$/-])((?:spark\\.)?sluice\\.[A-Za-z0-9_.]*)");

  /** File names that match {@link #KEY}: {@code sluice.conf}, {@code sluice.proto}. */
  private static final Pattern FILE_NAME =
      Pattern.compile(".*\\.(conf|proto|xml|json|yml|md|sh|svg|properties)$");

  @Test
  void everyRelativeLinkLeadsToAFileOfTheRepository() throws IOException {
    Path root = repositoryRoot();
    List<String> broken = new ArrayList<>();
    for (Path doc : documents(root)) {
      String text = Files.readString(doc, StandardCharsets.UTF_8);
      Matcher m = LINK.matcher(text);
      while (m.find()) {
        String target = m.group(1);
        if (target.matches("[a-z]+:.*")) {
          continue; // http://, https://, mailto:
        }
        int hash = target.indexOf('#');
        String file = hash < 0 ? target : target.substring(0, hash);
        String anchor = hash < 0 ? null : target.substring(hash + 1);
        Path resolved = file.isEmpty() ? doc : doc.getParent().resolve(file).normalize();
        String where = root.relativize(doc) + ": (" + target + ")";
        if (!resolved.startsWith(root)) {
          broken.add(where + " leaves the repository");
        } else if (!Files.exists(resolved)) {
          broken.add(where + " names no file");
        } else if (anchor != null && !anchors(resolved).contains(anchor)) {
          broken.add(where + " names no heading of " + root.relativize(resolved));
        }
      }
    }
    assertThat(broken).as("broken links in the README and docs/").isEmpty();
  }

  @Test
  void everyConfigurationKeyNamedInTheDocsExists() throws Exception {
    Set<String> keys = new TreeSet<>();
    for (ConfigKey<?> key : ConfigKeys.ALL) {
      keys.add(key.name());
    }
    for (ConfigKey<?> key : FlinkClientConf.KEYS) {
      keys.add(key.name());
    }
    Set<String> sparkKeys = sparkOwnKeys();
    assertThat(sparkKeys).contains("spark.sluice.servers", "spark.sluice.fallback");

    Path root = repositoryRoot();
    List<String> unknown = new ArrayList<>();
    int named = 0;
    for (Path doc : documents(root)) {
      String text = Files.readString(doc, StandardCharsets.UTF_8);
      Matcher m = KEY.matcher(text);
      while (m.find()) {
        String name = m.group(1);
        char next = m.end() < text.length() ? text.charAt(m.end()) : ' ';
        // a prefix: `spark.sluice.*`, `sluice.<key>`, `sluice.hadoop.`
        boolean prefix = next == '*' || next == '<' || (name.endsWith(".") && next == '`');
        while (!prefix && name.endsWith(".")) {
          name = name.substring(0, name.length() - 1); // the end of a sentence
        }
        if (FILE_NAME.matcher(name).matches()) {
          continue;
        }
        named++;
        if (!known(name, prefix, keys, sparkKeys)) {
          unknown.add(root.relativize(doc) + ": " + name);
        }
      }
    }
    assertThat(named).as("keys named in the docs").isGreaterThan(100);
    assertThat(unknown)
        .as(
            "configuration keys named in the README or docs/ that the code does not declare"
                + " (ConfigKeys.ALL, FlinkClientConf.KEYS, the Spark client's own keys)")
        .isEmpty();
  }

  private static boolean known(
      String name, boolean prefix, Set<String> keys, Set<String> sparkKeys) {
    String core = name.startsWith("spark.") ? name.substring("spark.".length()) : name;
    if (NOT_KEY_PREFIXES.stream().anyMatch(core::startsWith)) {
      return true;
    }
    if (prefix) {
      // some key must start with it
      return keys.stream().anyMatch(k -> k.startsWith(core))
          || sparkKeys.stream().anyMatch(k -> k.startsWith(name));
    }
    return keys.contains(core) || sparkKeys.contains(name);
  }

  /** The Spark client's own keys: the {@code spark.sluice.*} string constants of its classes. */
  private static Set<String> sparkOwnKeys() throws ReflectiveOperationException {
    Set<String> keys = new TreeSet<>();
    for (String className : SPARK_KEY_CLASSES) {
      for (Field field : Class.forName(className).getDeclaredFields()) {
        if (Modifier.isStatic(field.getModifiers()) && field.getType() == String.class) {
          field.setAccessible(true);
          String value = (String) field.get(null);
          if (value != null && value.startsWith("spark.sluice.") && !value.endsWith(".")) {
            keys.add(value);
          }
        }
      }
    }
    return keys;
  }

  /** README.md and every docs/*.md. */
  private static List<Path> documents(Path root) throws IOException {
    List<Path> docs = new ArrayList<>();
    docs.add(root.resolve("README.md"));
    try (Stream<Path> files = Files.list(root.resolve("docs"))) {
      docs.addAll(
          files
              .filter(p -> p.getFileName().toString().endsWith(".md"))
              .sorted()
              .collect(Collectors.toList()));
    }
    assertThat(docs).hasSizeGreaterThan(10);
    return docs;
  }

  /** GitHub's anchors of the headings of a Markdown file (none for other files). */
  private static Set<String> anchors(Path file) throws IOException {
    Set<String> anchors = new TreeSet<>();
    if (!file.getFileName().toString().endsWith(".md")) {
      return anchors;
    }
    boolean inCode = false;
    for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
      if (line.startsWith("```")) {
        inCode = !inCode;
      } else if (!inCode && line.startsWith("#")) {
        String heading = line.replaceFirst("^#+\\s*", "").trim();
        anchors.add(
            heading
                .toLowerCase(java.util.Locale.ROOT)
                .replaceAll("[^\\p{L}\\p{N} _-]", "")
                .replace(' ', '-'));
      }
    }
    return anchors;
  }

  /** The repository's root: sluice.home (set by the build), or the first parent with docs/. */
  private static Path repositoryRoot() {
    String home = System.getProperty("sluice.home");
    Path dir =
        home != null && !home.isEmpty()
            ? Paths.get(home).toAbsolutePath().normalize()
            : Paths.get("").toAbsolutePath();
    while (dir != null && !Files.isDirectory(dir.resolve("docs"))) {
      dir = dir.getParent();
    }
    assertThat(dir).as("the repository's root (a directory with docs/)").isNotNull();
    return dir;
  }
}
