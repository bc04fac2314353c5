package io.sluice.e2e.flink;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.e2e.flink.FlinkHarness.ServerTotals;
import io.sluice.testutil.TestCluster;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The jar operators drop into Flink's {@code lib/}: a Flink JVM whose class path has Flink and the
 * shaded jar, but none of the libraries Sluice is built on, runs a batch job through Sluice servers
 * (in this JVM), so everything the plugin needs is in the jar and relocated where it must be.
 */
class FlinkShadedJarIT {
  @TempDir Path tmp;

  @Test
  void theShadedJarBringsEverythingItNeedsAndHidesItsLibraries() throws Exception {
    Path jar = Paths.get(System.getProperty("sluice.flinkClientJar"));
    try (ZipFile zip = new ZipFile(jar.toFile())) {
      assertThat(zip.getEntry("io/sluice/flink/SluiceShuffleServiceFactory.class")).isNotNull();
      assertThat(zip.getEntry("io/sluice/shaded/io/netty/channel/Channel.class")).isNotNull();
      assertThat(zip.stream().map(e -> e.getName()))
          .noneMatch(name -> name.startsWith("io/netty/"))
          .noneMatch(name -> name.startsWith("com/google/protobuf/"))
          .noneMatch(name -> name.startsWith("net/jpountz/"))
          .noneMatch(name -> name.startsWith("org/apache/flink/"))
          .noneMatch(name -> name.startsWith("org/slf4j/"))
          .noneMatch(name -> name.startsWith("org/rocksdb/"));
    }

    try (TestCluster servers = TestCluster.start(tmp.resolve("sluice"), 2)) {
      ServerTotals before = FlinkHarness.totals(servers);
      Path out = tmp.resolve("result.txt");
      Path log = tmp.resolve("flink-jvm.log");
      String classpath = jar + File.pathSeparator + System.getProperty("sluice.flinkClasspath");
      Process flink =
          new ProcessBuilder(
                  Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
                  "-Xmx768m",
                  "-cp",
                  classpath,
                  ShadedJarJob.class.getName(),
                  FlinkHarness.serverList(servers),
                  out.toString())
              .redirectErrorStream(true)
              .redirectOutput(log.toFile())
              .start();
      boolean exited = flink.waitFor(120, TimeUnit.SECONDS);
      if (!exited) {
        flink.destroyForcibly();
      }
      String output = Files.readString(log);
      assertThat(exited).as("the Flink JVM ended; its output:\n%s", output).isTrue();
      assertThat(flink.exitValue()).as("exit code; output:\n%s", output).isZero();
      assertThat(output).contains("Sluice shuffle environment of TaskManager");

      assertThat(Files.readAllLines(out, StandardCharsets.UTF_8)).isEqualTo(expectedWordCount());
      ServerTotals carried = FlinkHarness.totals(servers).since(before);
      assertThat(carried.bytesPushed).isPositive();
      assertThat(carried.mapReads).isPositive();
    }
  }

  /** The word count of {@link FlinkJobs#wordCount}, computed here. */
  private static List<String> expectedWordCount() {
    Map<String, Integer> counts = new TreeMap<>();
    for (String line : FlinkJobs.lines(3000)) {
      for (String word : line.toLowerCase(Locale.ROOT).split("\\s+")) {
        if (!word.isEmpty()) {
          counts.merge(word, 1, Integer::sum);
        }
      }
    }
    List<String> lines = new ArrayList<>();
    counts.forEach((word, count) -> lines.add(word + "=" + count));
    Collections.sort(lines);
    return lines;
  }
}
