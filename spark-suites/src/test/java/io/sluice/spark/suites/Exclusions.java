package io.sluice.spark.suites;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The tests of Spark's suites that do not run on Sluice, each with its reason: lines {@code Suite
 * :: test name :: reason} ({@code #} starts a comment). A test may be listed only when it checks
 * the built-in shuffle's own files or block-fetch internals.
 */
final class Exclusions {
  private final Map<String, Map<String, String>> bySuite = new LinkedHashMap<>();

  private Exclusions() {}

  static Exclusions read(Path file) throws IOException {
    Exclusions e = new Exclusions();
    List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i).strip();
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      String[] parts = line.split(" :: ", -1);
      if (parts.length != 3 || parts[0].isBlank() || parts[1].isBlank() || parts[2].isBlank()) {
        throw new IllegalArgumentException(
            file + " line " + (i + 1) + " is not 'Suite :: test name :: reason': " + line);
      }
      String previous =
          e.bySuite
              .computeIfAbsent(parts[0].strip(), s -> new LinkedHashMap<>())
              .put(parts[1].strip(), parts[2].strip());
      if (previous != null) {
        throw new IllegalArgumentException(
            file + " line " + (i + 1) + " lists a test twice: " + parts[1]);
      }
    }
    return e;
  }

  /** Test name to reason, for one suite. */
  Map<String, String> of(String suite) {
    return bySuite.getOrDefault(suite, Map.of());
  }
}
