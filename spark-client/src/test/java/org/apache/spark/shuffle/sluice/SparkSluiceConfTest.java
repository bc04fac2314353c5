package org.apache.spark.shuffle.sluice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.client.ClientConf;
import io.sluice.common.SluiceConf;
import io.sluice.protocol.proto.ServerAddress;
import java.util.List;
import org.apache.spark.SparkConf;
import org.junit.jupiter.api.Test;

class SparkSluiceConfTest {
  @Test
  void everySparkSluiceKeyReachesTheCore() {
    SparkConf spark =
        new SparkConf(false)
            .set("spark.sluice.push.bufferSize", "16k")
            .set("spark.sluice.read.prefetchChunks", "5")
            .set("spark.executor.memory", "1g");
    SluiceConf conf = SparkSluiceConf.toSluiceConf(spark);
    assertThat(conf.get(ClientConf.PUSH_BUFFER_SIZE)).isEqualTo(16 << 10);
    assertThat(conf.get(ClientConf.READ_PREFETCH_CHUNKS)).isEqualTo(5);
    assertThat(conf.asMap()).doesNotContainKey("sluice.executor.memory").hasSize(2);
  }

  @Test
  void sparksHadoopSettingsReachTheReadersOfTheDistributedTier() {
    SparkConf spark =
        new SparkConf(false)
            .set("spark.hadoop.fs.defaultFS", "hdfs://nn:8020")
            .set("spark.hadoop.dfs.client.read.shortcircuit", "true")
            .set("spark.sluice.hadoop.dfs.client.read.shortcircuit", "false");
    SluiceConf conf = SparkSluiceConf.toSluiceConf(spark);
    assertThat(conf.hadoopSettings())
        .containsEntry("fs.defaultFS", "hdfs://nn:8020")
        .containsEntry("dfs.client.read.shortcircuit", "false") // the explicit one wins
        .hasSize(2);
    assertThat(conf.unknownKeys()).isEmpty();
  }

  @Test
  void warnsOfSparkSluiceKeysNobodyDeclaresAsTheyAreWrittenInSparksConfiguration() {
    SparkConf spark =
        new SparkConf(false)
            .set(SparkSluiceConf.SERVERS, "a:1")
            .set(SparkSluiceConf.SERVER_DISCOVERY, "x.Discovery")
            .set(ShuffleFallback.POLICY, "auto")
            .set(ShuffleFallback.MAX_PARTITIONS, "100")
            .set(YarnServerDiscovery.SERVER_PORT, "9290")
            .set("spark.sluice.push.bufferSize", "16k")
            .set("spark.sluice.hadoop.dfs.replication", "2")
            .set("spark.sluice.fallbak", "never")
            .set("spark.sluice.Servers", "b:2")
            .set("spark.sluicex.whatever", "1")
            .set("spark.executor.memory", "1g");

    assertThat(SparkSluiceConf.unknownKeyWarnings(spark))
        .containsExactly(
            "unknown configuration key spark.sluice.Servers (ignored);"
                + " did you mean spark.sluice.servers?",
            "unknown configuration key spark.sluice.fallbak (ignored);"
                + " did you mean spark.sluice.fallback?");
  }

  @Test
  void uncompressedSparkShuffleMeansUncompressedBatchesUnlessSetExplicitly() {
    SparkConf spark = new SparkConf(false).set("spark.shuffle.compress", "false");
    assertThat(SparkSluiceConf.toSluiceConf(spark).get(ClientConf.COMPRESSION)).isEqualTo("none");
    spark.set("spark.sluice.push.compression", "lz4");
    assertThat(SparkSluiceConf.toSluiceConf(spark).get(ClientConf.COMPRESSION)).isEqualTo("lz4");
  }

  @Test
  void authenticationNeedsSparkAuthenticateAndKeepsTheClusterSecretOffExecutors() {
    SparkConf spark = new SparkConf(false).set("spark.sluice.auth.enabled", "true");
    assertThatThrownBy(() -> SparkSluiceConf.checkCompatible(spark))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("Set spark.authenticate=true");
    spark.set("spark.authenticate", "true").set("spark.sluice.auth.clusterSecret", "s");
    assertThatThrownBy(() -> SparkSluiceConf.checkCompatible(spark))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("spark.sluice.auth.clusterSecretFile");
    spark.remove("spark.sluice.auth.clusterSecret");
    spark.set("spark.sluice.auth.clusterSecretFile", "/only/on/the/driver");
    SparkSluiceConf.checkCompatible(spark);
    assertThat(SparkSluiceConf.toSluiceConf(spark, true).asMap())
        .containsEntry("sluice.auth.clusterSecretFile", "/only/on/the/driver");
    assertThat(SparkSluiceConf.toSluiceConf(spark, false).asMap())
        .doesNotContainKey("sluice.auth.clusterSecretFile");
  }

  @Test
  void pushBasedShuffleIsRefusedNamingTheSetting() {
    SparkConf spark = new SparkConf(false).set("spark.shuffle.push.enabled", "true");
    assertThatThrownBy(() -> SparkSluiceConf.checkCompatible(spark))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("Set spark.shuffle.push.enabled=false");
    SparkSluiceConf.checkCompatible(spark.set("spark.shuffle.push.enabled", "false"));
  }

  @Test
  void serverListParses() {
    List<ServerAddress> servers = ConfiguredServers.parse(" a:1, b.example:9290 ,");
    assertThat(servers).extracting(ServerAddress::getHost).containsExactly("a", "b.example");
    assertThat(servers).extracting(ServerAddress::getPort).containsExactly(1, 9290);
  }

  @Test
  void badServerListsAreRefusedNamingTheEntry() {
    assertThatThrownBy(() -> ConfiguredServers.parse("a:1,b"))
        .hasMessageContaining("'b'")
        .hasMessageContaining(SparkSluiceConf.SERVERS);
    assertThatThrownBy(() -> ConfiguredServers.parse("a:x")).hasMessageContaining("'a:x'");
    assertThatThrownBy(() -> ConfiguredServers.parse(" , ")).hasMessageContaining("no server");
  }

  @Test
  void withoutServersOrDiscoveryTheErrorSaysWhatToSet() {
    assertThatThrownBy(() -> ServerDiscovery.fromConf(new SparkConf(false)))
        .hasMessageContaining(SparkSluiceConf.SERVERS)
        .hasMessageContaining(SparkSluiceConf.SERVER_DISCOVERY);
    SparkConf custom =
        new SparkConf(false).set(SparkSluiceConf.SERVER_DISCOVERY, FixedServers.class.getName());
    assertThat(ServerDiscovery.fromConf(custom)).isInstanceOf(FixedServers.class);
  }

  /** A discovery plugged in by class name. */
  public static final class FixedServers implements ServerDiscovery {
    @Override
    public List<ServerAddress> servers(SparkConf conf) {
      return List.of(io.sluice.client.ClientContext.address("h", 1));
    }
  }
}
