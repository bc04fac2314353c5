package io.sluice.yarn;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.sluice.common.SluiceConf;
import io.sluice.network.NetworkConf;
import io.sluice.server.ServerConf;
import java.nio.file.Paths;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.junit.jupiter.api.Test;

class YarnServerConfTest {
  private static Configuration nodeManager() {
    Configuration conf = new Configuration(false);
    conf.set(YarnConfiguration.NM_LOCAL_DIRS, "/d1/yarn/local, file:///d2/yarn/local");
    conf.set("sluice.server.port", "7000");
    conf.set("sluice.memory.max", "2g");
    conf.set("yarn.nodemanager.address", "0.0.0.0:45454"); // not ours: left out
    return conf;
  }

  @Test
  void readsTheSluiceKeysAndPutsDataInEachLocalDirectory() {
    ServerConf conf = new ServerConf(YarnServerConf.from(nodeManager(), null));

    assertThat(conf.port()).isEqualTo(7000);
    assertThat(conf.memoryMax()).isEqualTo(2L << 30);
    assertThat(conf.dirs())
        .containsExactly(Paths.get("/d1/yarn/local/sluice"), Paths.get("/d2/yarn/local/sluice"));
    assertThat(conf.stateDir()).isEqualTo(Paths.get("/d1/yarn/local/sluice/.sluice-state"));
    assertThat(YarnServerConf.from(nodeManager(), null).asMap())
        .doesNotContainKey("yarn.nodemanager.address");
  }

  @Test
  void keepsItsStateInTheRecoveryPathWhenNodeManagerRecoveryIsOn() {
    ServerConf conf =
        new ServerConf(
            YarnServerConf.from(
                nodeManager(), new Path("file:///var/nm-recovery/nm-aux-services/sluice_shuffle")));

    assertThat(conf.stateDir())
        .isEqualTo(Paths.get("/var/nm-recovery/nm-aux-services/sluice_shuffle"));
  }

  @Test
  void keysSetInYarnSiteWin() {
    Configuration hadoop = nodeManager();
    hadoop.set("sluice.server.dirs", "/fast/sluice");
    hadoop.set("sluice.state.dir", "/state/sluice");
    ServerConf conf = new ServerConf(YarnServerConf.from(hadoop, new Path("/var/nm-recovery")));

    assertThat(conf.dirs()).containsExactly(Paths.get("/fast/sluice"));
    assertThat(conf.stateDir()).isEqualTo(Paths.get("/state/sluice"));
  }

  @Test
  void tlsSettingsPassThroughToTheServer() {
    Configuration hadoop = nodeManager();
    hadoop.set("sluice.tls.enabled", "true");
    hadoop.set("sluice.tls.protocols", "TLSv1.3");
    hadoop.set("sluice.tls.keyStore", "/etc/sluice/server.p12");
    hadoop.set("sluice.tls.keyStorePasswordFile", "/etc/sluice/server.pass");
    SluiceConf sluice = YarnServerConf.from(hadoop, null);

    assertThat(sluice.asMap())
        .containsEntry("sluice.tls.enabled", "true")
        .containsEntry("sluice.tls.protocols", "TLSv1.3")
        .containsEntry("sluice.tls.keyStore", "/etc/sluice/server.p12")
        .containsEntry("sluice.tls.keyStorePasswordFile", "/etc/sluice/server.pass");
    assertThat(sluice.unknownKeys()).isEmpty();
    // the server reads them: a missing password file stops the service at init, naming it
    assertThatThrownBy(() -> new NetworkConf(sluice))
        .hasMessageContaining("sluice.tls.keyStorePasswordFile")
        .hasMessageContaining("/etc/sluice/server.pass");
  }

  @Test
  void metricNamesDropThePrefixAndKeepToSafeCharacters() {
    assertThat(HadoopMetricsBridge.name("sluice.server.bytesPushed")).isEqualTo("bytesPushed");
    assertThat(HadoopMetricsBridge.name("sluice.server.dir./data/1.health"))
        .isEqualTo("dir__data_1_health");
    assertThat(HadoopMetricsBridge.name("sluice.server.state.writes")).isEqualTo("state_writes");
  }

  @Test
  void stopsTakingSplitsBelowTheNodeManagersDiskHealthThreshold() {
    assertThat(new ServerConf(YarnServerConf.from(nodeManager(), null)).diskMaxUsage())
        .as("below the NodeManager's 90 %")
        .isEqualTo(0.85, within(1e-9));
    Configuration lenient = nodeManager();
    lenient.set(YarnConfiguration.NM_MAX_PER_DISK_UTILIZATION_PERCENTAGE, "100");
    assertThat(new ServerConf(YarnServerConf.from(lenient, null)).diskMaxUsage())
        .as("never above Sluice's own default")
        .isEqualTo(0.95, within(1e-9));
    Configuration set = nodeManager();
    set.set("sluice.disk.maxUsage", "0.5");
    assertThat(new ServerConf(YarnServerConf.from(set, null)).diskMaxUsage()).isEqualTo(0.5);
  }
}
