package io.sluice.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.server.memory.DirectMemoryLimit;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The direct memory bin/shuffle-daemon derives from the daemon's options and files. */
class DirectMemorySizeTest {
  @TempDir Path home;

  private static long parseMegabytes(String size) {
    assertThat(size).endsWith("m");
    return Long.parseLong(size.substring(0, size.length() - 1)) << 20;
  }

  @Test
  void theDerivedLimitPassesTheServersCheckForAnyBudget() {
    for (long max : new long[] {1L << 20, 64L << 20, 512L << 20, 1L << 30, 4L << 30, 100L << 30}) {
      long limit = parseMegabytes(DirectMemorySize.megabytes(DirectMemorySize.forMemoryMax(max)));
      assertThatCode(() -> DirectMemoryLimit.check(max, limit))
          .as("sluice.memory.max %d", max)
          .doesNotThrowAnyException();
    }
  }

  @Test
  void memoryFourGigabytesGetsItsEighthAndTheJdksSlack() throws IOException {
    // 4096m + an eighth (512m) + 64m
    assertThat(DirectMemorySize.forOptions(new String[] {"--memory", "4g"}, null))
        .isEqualTo("4672m");
  }

  @Test
  void aSmallBudgetGetsTheLeastHeadroom() throws IOException {
    // 64m + 64m (an eighth would be 8m) + 64m
    assertThat(DirectMemorySize.forOptions(new String[] {"--memory", "64m"}, null))
        .isEqualTo("192m");
  }

  @Test
  void readsTheBudgetFromTheSameLayersAsTheDaemon() throws IOException {
    Files.createDirectories(home.resolve("conf"));
    Files.writeString(
        home.resolve("conf/sluice-defaults.conf"),
        "sluice.memory.max = 1g\n",
        StandardCharsets.UTF_8);
    assertThat(DirectMemorySize.forOptions(new String[0], home.toString())).isEqualTo("1216m");

    Files.writeString(
        home.resolve("conf/sluice.conf"), "sluice.memory.max = 2g\n", StandardCharsets.UTF_8);
    assertThat(DirectMemorySize.forOptions(new String[0], home.toString())).isEqualTo("2368m");

    Path site = Files.writeString(home.resolve("site.conf"), "sluice.memory.max = 8g\n");
    assertThat(
            DirectMemorySize.forOptions(
                new String[] {"--conf", site.toString(), "--set", "sluice.memory.max=3g"},
                home.toString()))
        .isEqualTo(megabytesOf(3L << 30));
  }

  @Test
  void aBadSizeFailsNamingTheKey() {
    assertThatThrownBy(() -> DirectMemorySize.forOptions(new String[] {"--memory", "12zz"}, null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("sluice.memory.max");
  }

  private static String megabytesOf(long max) {
    return DirectMemorySize.megabytes(DirectMemorySize.forMemoryMax(max));
  }
}
