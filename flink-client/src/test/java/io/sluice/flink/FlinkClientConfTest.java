package io.sluice.flink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.common.ConfigKey;
import io.sluice.testutil.TestCluster;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.flink.configuration.Configuration;
import org.junit.jupiter.api.Test;

class FlinkClientConfTest {
  static String serverList(TestCluster cluster) {
    return cluster.servers().stream()
        .map(s -> "127.0.0.1:" + s.port())
        .collect(Collectors.joining(","));
  }

  private static Configuration conf(String... keyValues) {
    Configuration conf = new Configuration();
    for (int i = 0; i < keyValues.length; i += 2) {
      conf.setString(keyValues[i], keyValues[i + 1]);
    }
    return conf;
  }

  @Test
  void readsTheServerList() {
    List<InetSocketAddress> servers =
        FlinkClientConf.servers(conf("sluice.servers", " a.example:9099, b.example:1 ,"));
    assertThat(servers)
        .extracting(s -> s.getHostString() + ":" + s.getPort())
        .containsExactly("a.example:9099", "b.example:1");
  }

  @Test
  void aMissingOrMalformedServerListIsAnErrorNamingTheKey() {
    assertThatThrownBy(() -> FlinkClientConf.servers(conf()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("sluice.servers lists no server");
    assertThatThrownBy(() -> FlinkClientConf.servers(conf("sluice.servers", "a.example")))
        .hasMessageContaining("Invalid entry 'a.example' in sluice.servers: expected host:port");
    assertThatThrownBy(() -> FlinkClientConf.servers(conf("sluice.servers", "a:70000")))
        .hasMessageContaining("sluice.servers");
    // the shuffle master fails at start, before any job
    assertThatThrownBy(() -> new SluiceShuffleMaster(conf("sluice.servers", "a:b")).start())
        .hasMessageContaining("Invalid entry 'a:b' in sluice.servers");
  }

  @Test
  void sizesMemoryInNetworkBuffers() {
    FlinkClientConf c =
        new FlinkClientConf(
            conf("sluice.flink.regionSize", "100k", "sluice.flink.inputGateMemory", "64k"),
            32 * 1024);
    assertThat(c.writerBuffers()).isEqualTo(3);
    assertThat(c.gateBuffers()).isEqualTo(2);
    assertThat(c.readConcurrency()).isEqualTo(32);
    assertThat(c.sluiceConf().asMap()).containsEntry("sluice.flink.regionSize", "100k");

    assertThatThrownBy(() -> new FlinkClientConf(conf("sluice.flink.regionSize", "32k"), 32 * 1024))
        .hasMessageContaining("sluice.flink.regionSize must hold at least two network buffers");
    assertThatThrownBy(
            () -> new FlinkClientConf(conf("sluice.flink.readConcurrency", "0"), 32 * 1024))
        .hasMessageContaining("sluice.flink.readConcurrency must be at least 1");
  }

  @Test
  void reportsSluiceKeysNobodyDeclares() {
    Configuration flink =
        conf(
            "sluice.flink.regionSiz", "1m",
            "sluice.flink.regionSize", "1m",
            "sluice.push.compression", "none",
            "taskmanager.numberOfTaskSlots", "2");
    assertThat(FlinkClientConf.unknownKeys(flink)).containsExactly("sluice.flink.regionSiz");
    assertThat(FlinkClientConf.unknownKeyWarnings(flink))
        .containsExactly(
            "unknown configuration key sluice.flink.regionSiz (ignored);"
                + " did you mean sluice.flink.regionSize?");
  }

  @Test
  void declaresItsKeysInTheSluiceNamespace() {
    assertThat(FlinkClientConf.KEYS)
        .extracting(k -> k.name())
        .containsExactly(
            "sluice.servers",
            "sluice.flink.regionSize",
            "sluice.flink.inputGateMemory",
            "sluice.flink.readConcurrency",
            "sluice.flink.fallback",
            "sluice.flink.fallback.networkMemoryFraction");
  }

  @Test
  void aMisspeltFallbackIsRefusedNamingTheValues() {
    Configuration conf = new Configuration();
    assertThat(FlinkClientConf.fallsBack(conf)).as("auto by default").isTrue();
    conf.setString("sluice.flink.fallback", "never");
    assertThat(FlinkClientConf.fallsBack(conf)).isFalse();
    conf.setString("sluice.flink.fallback", "sometimes");
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> FlinkClientConf.fallsBack(conf))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'sometimes'")
        .hasMessageContaining("sluice.flink.fallback")
        .hasMessageContaining("auto or never");
    conf.setString("sluice.flink.fallback.networkMemoryFraction", "1");
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> FlinkClientConf.fallbackNetworkFraction(conf))
        .hasMessageContaining("sluice.flink.fallback.networkMemoryFraction");
  }

  @Test
  void thePluginRunsOnTheFlinkItIsBuiltForAndRefusesAnotherNamingTheJarToInstall() {
    String flink = org.apache.flink.runtime.util.EnvironmentInformation.getVersion();
    assertThat(FlinkLine.runsOn(flink))
        .as("built for %s, running on %s", FlinkLine.NAME, flink)
        .isTrue();
    SluiceShuffleServiceFactory.checkFlinkVersion(flink);
    SluiceShuffleServiceFactory.checkFlinkVersion(
        org.apache.flink.runtime.util.EnvironmentInformation.UNKNOWN);
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> SluiceShuffleServiceFactory.checkFlinkVersion("1.19.2"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("built for Flink " + FlinkLine.NAME + ", but this is Flink 1.19.2")
        .hasMessageContaining("-flink2.3-shaded.jar for Flink 2.0 to 2.3");
  }

  @Test
  void theConfigurationDocsDocumentEveryFlinkKey() throws Exception {
    // the project's docs, from flink-client or from a Flink line's module under it
    Path dir = Paths.get("").toAbsolutePath();
    while (!Files.exists(dir.resolve("docs/configuration.md"))) {
      dir = dir.getParent();
    }
    String docs = Files.readString(dir.resolve("docs/configuration.md"), StandardCharsets.UTF_8);
    for (ConfigKey<?> key : FlinkClientConf.KEYS) {
      assertThat(docs)
          .as(
              "docs/configuration.md must have the row '| `%s` | Flink client | `%s` | DOC |',"
                  + " DOC being the key's doc in the code",
              key.name(), key.defaultValue())
          .containsPattern(
              Pattern.compile(
                  "(?m)^\\| `"
                      + Pattern.quote(key.name())
                      + "` \\| Flink client \\| `"
                      + Pattern.quote(key.defaultValue())
                      + "` \\| "
                      + Pattern.quote(key.doc())
                      + " \\|$"));
    }
  }
}
