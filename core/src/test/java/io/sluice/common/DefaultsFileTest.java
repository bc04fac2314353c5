package io.sluice.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class DefaultsFileTest {
  /** The repository's conf dir, seen from the core module's directory (surefire's cwd). */
  private static final Path DEFAULTS_FILE = Paths.get("..", "conf", "sluice-defaults.conf");

  private static final String REGENERATE =
      "conf/sluice-defaults.conf is out of date with ConfigKeys.ALL. Regenerate it from the repo"
          + " root with:\n"
          + "  mvn -q -pl core compile && java -cp core/target/classes"
          + " io.sluice.common.DefaultsFile conf/sluice-defaults.conf";

  @Test
  void checkedInFileMatchesTheCode() throws IOException {
    assertThat(DEFAULTS_FILE).as(REGENERATE).exists();
    String checkedIn = Files.readString(DEFAULTS_FILE, StandardCharsets.UTF_8);
    String expected = DefaultsFile.render();
    if (!checkedIn.equals(expected)) {
      fail(REGENERATE + "\n" + firstDifference(checkedIn, expected));
    }
  }

  @Test
  void docsConfigurationTablesMatchTheCode() throws IOException {
    String docs =
        Files.readString(Paths.get("..", "docs", "configuration.md"), StandardCharsets.UTF_8);
    for (ConfigKey<?> key : ConfigKeys.ALL) {
      assertThat(docs)
          .as(
              "docs/configuration.md must have the row '| `%s` | SCOPE | `%s` | DOC |', DOC being"
                  + " the key's doc in the code",
              key.name(), key.defaultValue())
          .containsPattern(tableRow(key));
    }
  }

  /** A row of docs/configuration.md's tables: key, scope (any), default, doc. */
  static Pattern tableRow(ConfigKey<?> key) {
    return Pattern.compile(
        "(?m)^\\| `"
            + Pattern.quote(key.name())
            + "` \\| [^|`]+ \\| `"
            + Pattern.quote(key.defaultValue())
            + "` \\| "
            + Pattern.quote(key.doc())
            + " \\|$");
  }

  private static String firstDifference(String actual, String expected) {
    String[] a = actual.split("\n", -1);
    String[] e = expected.split("\n", -1);
    for (int i = 0; i < Math.max(a.length, e.length); i++) {
      String inFile = i < a.length ? "'" + a[i] + "'" : "(end of file)";
      String fromCode = i < e.length ? "'" + e[i] + "'" : "(end of file)";
      if (!inFile.equals(fromCode)) {
        return "First difference at line "
            + (i + 1)
            + ": the file has "
            + inFile
            + ", the code renders "
            + fromCode;
      }
    }
    return "The files differ only in line endings.";
  }

  @Test
  void fileReadsBackAsEveryKeyWithItsDefault() throws IOException {
    Path file = Files.createTempFile("sluice-defaults", ".conf");
    try {
      Files.writeString(file, DefaultsFile.render(), StandardCharsets.UTF_8);
      SluiceConf conf = SluiceConf.load(file);

      Map<String, String> expected = new TreeMap<>();
      for (ConfigKey<?> key : ConfigKeys.ALL) {
        expected.put(key.name(), key.defaultValue());
      }
      assertThat(conf.asMap()).isEqualTo(expected);
      assertThat(conf.unknownKeys()).isEmpty();
    } finally {
      Files.delete(file);
    }
  }

  @Test
  void keysAppearInTheOrderOfConfigKeysEachAfterItsDoc() {
    String[] lines = DefaultsFile.render().split("\n", -1);
    int next = 0;
    for (int i = 0; i < lines.length; i++) {
      if (!lines[i].isEmpty() && !lines[i].startsWith("#")) {
        ConfigKey<?> key = ConfigKeys.ALL.get(next++);
        assertThat(lines[i]).isEqualTo(key.name() + " = " + key.defaultValue());
        assertThat(lines[i - 1]).isEqualTo("# " + key.doc());
      }
    }
    assertThat(next).isEqualTo(ConfigKeys.ALL.size());
  }

  @Test
  void everyKeyBelongsToAConcern() {
    assertThat(DefaultsFile.render())
        .as("a key in ConfigKeys.ALL is in no section: add its config class to DefaultsFile")
        .doesNotContain("# ---- Other settings.");
  }
}
