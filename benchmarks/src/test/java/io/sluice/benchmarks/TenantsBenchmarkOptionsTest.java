package io.sluice.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code shuffle-bench tenants}: the rounds it takes and refuses before anything runs, and the
 * spread of a measure over rounds. No server starts here.
 */
class TenantsBenchmarkOptionsTest {
  private static int run(ByteArrayOutputStream out, ByteArrayOutputStream err, String... args) {
    return TenantsBenchmark.run(
        args,
        new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
  }

  @Test
  void helpListsTheRounds() {
    ByteArrayOutputStream help = new ByteArrayOutputStream();
    assertThat(run(help, new ByteArrayOutputStream(), "--help")).isZero();
    assertThat(help.toString(StandardCharsets.UTF_8)).contains("--rounds");
  }

  @Test
  void noRoundsIsRefusedBeforeTheRun(@TempDir Path dir) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();

    int exit = run(out, err, "--rounds", "0", "--dir", dir.resolve("data").toString());

    assertThat(exit).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8)).contains("--rounds");
    assertThat(out.toString(StandardCharsets.UTF_8)).isEmpty();
    assertThat(dir.resolve("data")).doesNotExist();
  }

  @Test
  void spreadIsOverTheRoundsThatMeasuredSomething() {
    Spread s = Spread.of(1.2, Double.NaN, 0.8, 1.0);

    assertThat(s.min()).isEqualTo(0.8);
    assertThat(s.median()).isEqualTo(1.0);
    assertThat(s.max()).isEqualTo(1.2);
    assertThat(s.json())
        .isEqualTo("{\"min\":0.8,\"median\":1,\"max\":1.2,\"rounds\":[1.2,null,0.8,1]}");
    assertThat(Spread.of(2, 1).median()).isEqualTo(1.5);
    assertThat(Spread.of(Double.NaN).median()).isNaN();
  }
}
