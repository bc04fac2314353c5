package io.sluice.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.beust.jcommander.JCommander;
import com.beust.jcommander.ParameterException;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code shuffle-bench server --replication}: the values it takes and those it refuses. */
class ServerBenchmarkOptionsTest {
  private static ServerBenchmarkOptions parse(String... args) {
    ServerBenchmarkOptions options = new ServerBenchmarkOptions();
    JCommander.newBuilder().addObject(options).build().parse(args);
    return options;
  }

  private static ServerBenchmarkOptions valid(String... args) {
    ServerBenchmarkOptions options = parse(args);
    options.validate();
    return options;
  }

  @Test
  void replicationDefaultsToFactorOneOnOneServer() {
    ServerBenchmarkOptions options = valid();

    assertThat(options.replicationRuns()).containsExactly(1);
    assertThat(options.serverCount()).isEqualTo(1);
  }

  @Test
  void factorTwoRunsOnTwoServers() {
    ServerBenchmarkOptions options = valid("--replication", "2");

    assertThat(options.replicationRuns()).containsExactly(2);
    assertThat(options.serverCount()).isEqualTo(2);
  }

  @Test
  void bothRunsFactorOneThenTwoOnTwoServers() {
    ServerBenchmarkOptions options = valid("--replication", " Both ");

    assertThat(options.replication).isEqualTo("both");
    assertThat(options.replicationRuns()).containsExactly(1, 2);
    assertThat(options.serverCount()).isEqualTo(2);
  }

  @Test
  void factorTwoCombinesWithTheOtherComparisons() {
    assertThat(valid("--replication", "2", "--checksums", "both").checksumRuns())
        .containsExactly(false, true);
    assertThat(valid("--replication", "2", "--tls").securityRuns())
        .containsExactly(WireSecurity.PLAIN, WireSecurity.TLS);
  }

  @Test
  void otherFactorsAreRefusedNamingTheOption() {
    for (String bad : List.of("0", "3", "two", "")) {
      assertThatThrownBy(() -> valid("--replication", bad))
          .isInstanceOf(ParameterException.class)
          .hasMessageContaining("--replication must be 1, 2 or both");
    }
  }

  @Test
  void bothIsOneComparisonAtATime() {
    for (List<String> other :
        List.of(List.of("--checksums", "both"), List.of("--tls"), List.of("--auth"))) {
      List<String> args = new ArrayList<>(List.of("--replication", "both"));
      args.addAll(other);

      assertThatThrownBy(() -> valid(args.toArray(new String[0])))
          .isInstanceOf(ParameterException.class)
          .hasMessageContaining("--replication both");
    }
  }

  @Test
  void theFactorIsNotAConfSetting() {
    assertThatThrownBy(() -> valid("--conf", "sluice.replication.factor=2"))
        .isInstanceOf(ParameterException.class)
        .hasMessageContaining("--conf")
        .hasMessageContaining("--replication");
  }

  @Test
  void aBadValueEndsTheRunWithExitCodeTwoAndTheMessage() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();

    int exit =
        ServerBenchmark.run(
            new String[] {"--replication", "3"},
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));

    assertThat(exit).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8))
        .contains("shuffle-bench server: --replication must be 1, 2 or both, not 3");
    assertThat(out.toString(StandardCharsets.UTF_8)).isEmpty();
  }
}
