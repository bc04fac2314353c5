package io.sluice.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.server.ServerConf;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SluiceConfTest {
  private static final ConfigKey<Long> SIZE = ConfigKey.bytes("sluice.test.size", "1m", "A size.");
  private static final ConfigKey<Long> DURATION =
      ConfigKey.millis("sluice.test.duration", "30s", "A duration.");
  private static final ConfigKey<Integer> COUNT =
      ConfigKey.integer("sluice.test.count", 3, "A count.");
  private static final ConfigKey<Double> SHARE =
      ConfigKey.fraction("sluice.test.share", 0.5, "A fraction.");
  private static final ConfigKey<Boolean> FLAG =
      ConfigKey.bool("sluice.test.flag", true, "A flag.");

  @Test
  void sizesTakePowerOf1024Suffixes() {
    assertThat(SIZE.parse("100")).isEqualTo(100L);
    assertThat(SIZE.parse("512k")).isEqualTo(512L << 10);
    assertThat(SIZE.parse("64m")).isEqualTo(64L << 20);
    assertThat(SIZE.parse("2g")).isEqualTo(2L << 30);
    assertThat(SIZE.parse("1t")).isEqualTo(1L << 40);
    assertThat(SIZE.parse(" 8M ")).isEqualTo(8L << 20);
    assertThat(SIZE.parse("2gb")).isEqualTo(2L << 30);
    assertThat(SIZE.parse("0")).isZero();
  }

  @Test
  void badSizesNameTheKeyAndTheValue() {
    for (String bad : new String[] {"12zz", "-1k", "1.5g", "", "99999999999t"}) {
      assertThatThrownBy(() -> SIZE.parse(bad))
          .as("size '%s'", bad)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("sluice.test.size")
          .hasMessageContaining("'" + bad.trim() + "'");
    }
  }

  @Test
  void durationsNeedAUnit() {
    assertThat(DURATION.parse("500ms")).isEqualTo(500L);
    assertThat(DURATION.parse("30s")).isEqualTo(30_000L);
    assertThat(DURATION.parse("5min")).isEqualTo(300_000L);
    assertThat(DURATION.parse("1h")).isEqualTo(3_600_000L);
    assertThat(DURATION.parse(" 2S ")).isEqualTo(2_000L);

    for (String bad : new String[] {"10", "-5s", "xs", "1d", "1.5s"}) {
      assertThatThrownBy(() -> DURATION.parse(bad))
          .as("duration '%s'", bad)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("sluice.test.duration")
          .hasMessageContaining("'" + bad + "'");
    }
  }

  @Test
  void integersFractionsAndBooleans() {
    assertThat(COUNT.parse("42")).isEqualTo(42);
    assertThat(SHARE.parse("0.25")).isEqualTo(0.25);
    assertThat(FLAG.parse("FALSE")).isFalse();

    assertThatThrownBy(() -> COUNT.parse("4x"))
        .hasMessageContaining("sluice.test.count")
        .hasMessageContaining("'4x'")
        .hasMessageContaining("an integer");
    assertThatThrownBy(() -> SHARE.parse("1.5"))
        .hasMessageContaining("sluice.test.share")
        .hasMessageContaining("'1.5'")
        .hasMessageContaining("between 0.0 and 1.0");
    assertThatThrownBy(() -> SHARE.parse("NaN")).hasMessageContaining("sluice.test.share");
    assertThatThrownBy(() -> FLAG.parse("yes"))
        .hasMessageContaining("sluice.test.flag")
        .hasMessageContaining("'yes'")
        .hasMessageContaining("true or false");
  }

  @Test
  void keysMustBeInTheNamespaceAndTheirDefaultsMustParse() {
    assertThatThrownBy(() -> ConfigKey.integer("server.port", 1, "doc"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("server.port");
    assertThatThrownBy(() -> ConfigKey.bytes("sluice.test.bad", "lots", "doc"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("sluice.test.bad")
        .hasMessageContaining("'lots'");
  }

  @Test
  void getFallsBackToTheDefaultWhenMissingOrEmpty() {
    assertThat(SluiceConf.empty().get(SIZE)).isEqualTo(1L << 20);
    assertThat(SluiceConf.of(Map.of("sluice.test.size", "")).get(SIZE)).isEqualTo(1L << 20);
    assertThat(SluiceConf.of(Map.of("sluice.test.size", "4k")).get(SIZE)).isEqualTo(4096L);
  }

  @Test
  void getOfABadValueNamesTheKeyAndTheValue() {
    SluiceConf conf = SluiceConf.empty().with(ServerConf.MEMORY_MAX.name(), "lots");

    assertThatThrownBy(() -> conf.get(ServerConf.MEMORY_MAX))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("sluice.memory.max")
        .hasMessageContaining("'lots'");
  }

  @Test
  void laterLayersWin() {
    SluiceConf conf =
        SluiceConf.of(Map.of("sluice.test.count", "1", "sluice.test.flag", "false"))
            .with(Map.of("sluice.test.count", "2"))
            .with("sluice.test.count", "3");

    assertThat(conf.get(COUNT)).isEqualTo(3);
    assertThat(conf.get(FLAG)).isFalse();
  }

  @Test
  void unknownKeysAreSluiceKeysNoConfigClassDeclares() {
    SluiceConf conf =
        SluiceConf.of(
            Map.of(
                "sluice.server.prot",
                "9000",
                ServerConf.PORT.name(),
                "9000",
                "spark.executor.memory",
                "4g"));

    assertThat(conf.unknownKeys()).containsExactly("sluice.server.prot");
  }

  @Test
  void expandsTmpdirAndUserHome() {
    String tmp = System.getProperty("java.io.tmpdir");
    String tmpNoSlash = tmp.endsWith("/") ? tmp.substring(0, tmp.length() - 1) : tmp;

    assertThat(SluiceConf.empty().get(ServerConf.DIRS)).isEqualTo(tmpNoSlash + "/sluice-data");
    assertThat(SluiceConf.expand("${user.home}/x"))
        .isEqualTo(System.getProperty("user.home") + "/x");
    assertThat(SluiceConf.expand("/data/${unknown}")).isEqualTo("/data/${unknown}");
  }

  @Test
  void loadsPropertiesFilesAndTrimsValues(@TempDir Path dir) throws IOException {
    Path file = dir.resolve("sluice.conf");
    Files.writeString(
        file,
        "# a comment\n\nsluice.test.count = 7   \nsluice.test.size=2m\n",
        StandardCharsets.UTF_8);

    SluiceConf conf = SluiceConf.load(file);

    assertThat(conf.asMap())
        .containsOnly(Map.entry("sluice.test.count", "7"), Map.entry("sluice.test.size", "2m"));
    assertThat(conf.get(COUNT)).isEqualTo(7);
  }
}
