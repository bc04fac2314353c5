package io.sluice.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * The data directory of a benchmark run: the one {@code --dir} names, created if needed and kept,
 * or a fresh one under {@code java.io.tmpdir}, deleted when closed.
 */
final class BenchDirectory implements AutoCloseable {
  private final Path path;
  private final boolean own;

  private BenchDirectory(Path path, boolean own) {
    this.path = path;
    this.own = own;
  }

  /**
   * @param given the {@code --dir} option, or null for a fresh directory named {@code prefix}...
   */
  static BenchDirectory open(String given, String prefix) throws IOException {
    return given == null
        ? new BenchDirectory(
            Files.createTempDirectory(Paths.get(System.getProperty("java.io.tmpdir")), prefix),
            true)
        : new BenchDirectory(Files.createDirectories(Paths.get(given).toAbsolutePath()), false);
  }

  Path path() {
    return path;
  }

  @Override
  public void close() throws IOException {
    if (!own) {
      return;
    }
    try (Stream<Path> paths = Files.walk(path)) {
      for (Path p : (Iterable<Path>) paths.sorted(Comparator.reverseOrder())::iterator) {
        Files.deleteIfExists(p);
      }
    }
  }
}
