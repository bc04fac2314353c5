package io.sluice.common;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class UnknownKeysTest {
  private final UnknownKeys core = UnknownKeys.core();

  @Test
  void findsSluiceKeysNobodyDeclaresAndLeavesOthersAlone() {
    List<String> unknown =
        core.find(
            List.of(
                "sluice.server.prot",
                "sluice.server.port",
                "sluice.hadoop.dfs.replication",
                "spark.executor.memory",
                "sluice.aaa"));

    assertThat(unknown).containsExactly("sluice.aaa", "sluice.server.prot");
  }

  @Test
  void suggestsAKeyAFewEditsAway() {
    assertThat(core.suggestion("sluice.server.prot")).isEqualTo("sluice.server.port"); // swap
    assertThat(core.suggestion("sluice.memory.mx")).isEqualTo("sluice.memory.max"); // deletion
    assertThat(core.suggestion("sluice.push.bufferSizee")).isEqualTo("sluice.push.bufferSize");
    assertThat(core.suggestion("sluice.network.ioThraeds")).isEqualTo("sluice.network.ioThreads");
  }

  @Test
  void suggestsAKeyTheSameButForCase() {
    assertThat(core.suggestion("sluice.push.buffersize")).isEqualTo("sluice.push.bufferSize");
    assertThat(core.suggestion("SLUICE.MEMORY.MAX")).isEqualTo("sluice.memory.max");
  }

  @Test
  void suggestsAKeyOneSegmentApart() {
    // a segment too many, and one too few
    assertThat(core.suggestion("sluice.server.memory.max")).isEqualTo("sluice.memory.max");
    assertThat(core.suggestion("sluice.compression")).isEqualTo("sluice.push.compression");
  }

  @Test
  void suggestsNothingWhenNoKeyIsClose() {
    assertThat(core.suggestion("sluice.aaa")).isNull();
    assertThat(core.suggestion("sluice.completely.different")).isNull();
    assertThat(core.suggestion("sluice.memory.xyzzy")).isNull();
  }

  @Test
  void theClosestKeyWins() {
    UnknownKeys keys = new UnknownKeys("", List.of("sluice.abcdefgh", "sluice.abcdefgx"));

    assertThat(keys.suggestion("sluice.abcdefhx")).isEqualTo("sluice.abcdefgx"); // 1 vs 2 edits
    assertThat(keys.suggestion("sluice.ABCDEFGH")).isEqualTo("sluice.abcdefgh"); // case over edits
  }

  @Test
  void countsEdits() {
    assertThat(UnknownKeys.edits("port", "prot", 3)).isEqualTo(1);
    assertThat(UnknownKeys.edits("port", "port", 3)).isZero();
    assertThat(UnknownKeys.edits("kitten", "sitting", 5)).isEqualTo(3);
    assertThat(UnknownKeys.edits("a", "abcdef", 2)).isEqualTo(3); // capped at limit + 1
  }

  @Test
  void warnsByNameWithTheSuggestionAndNeverTheValue() {
    SluiceConf conf =
        SluiceConf.of(
            java.util.Map.of(
                "sluice.auth.clusterSecert", "hunter2-the-secret",
                "sluice.aaa", "plain-value",
                "sluice.auth.enabled", "true"));

    List<String> warnings = core.warnings(conf);

    assertThat(warnings)
        .containsExactly(
            "unknown configuration key sluice.aaa (ignored)",
            "unknown configuration key sluice.auth.clusterSecert (ignored);"
                + " did you mean sluice.auth.clusterSecret?");
    assertThat(String.join("\n", warnings)).doesNotContain("hunter2", "plain-value");
  }

  @Test
  void componentsAddTheirKeysAndTheWayTheirUsersWriteThem() {
    UnknownKeys spark =
        core.withNames(List.of("sluice.servers", "sluice.fallback")).shownWithPrefix("spark.");

    assertThat(spark.find(List.of("sluice.servers", "sluice.fallbak")))
        .containsExactly("sluice.fallbak");
    assertThat(spark.warnings(List.of("sluice.servers", "sluice.fallbak")))
        .containsExactly(
            "unknown configuration key spark.sluice.fallbak (ignored);"
                + " did you mean spark.sluice.fallback?");
    assertThat(core.find(List.of("sluice.servers"))).containsExactly("sluice.servers");
  }
}
