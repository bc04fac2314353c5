package io.sluice.yarn;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.service.Service;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SluiceShuffleServiceTest {
  @TempDir Path localDir;

  @Test
  void warnsOfAMisspelledKeyByNameWithTheKeyItMeantAndWithoutItsValue() {
    Configuration nodeManager = new Configuration(false);
    nodeManager.set(YarnConfiguration.NM_LOCAL_DIRS, localDir.toString());
    nodeManager.set("sluice.server.port", "0");
    nodeManager.set("sluice.admin.tokn", "hunter2-the-admin-token");
    nodeManager.set("sluice.hadoop.dfs.replication", "2"); // Hadoop's: not checked
    List<String> warnings = new ArrayList<>();
    SluiceShuffleService service = new SluiceShuffleService(warnings::add);

    service.init(nodeManager);
    service.stop();

    assertThat(warnings)
        .containsExactly(
            "NodeManager configuration: unknown configuration key sluice.admin.tokn (ignored);"
                + " did you mean sluice.admin.token?");
    assertThat(String.join("\n", warnings)).doesNotContain("hunter2");
  }

  @Test
  void aServerThatCannotStartLeavesTheNodeManagerRunningUnlessAskedToStopIt() throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      Configuration nodeManager = new Configuration(false);
      nodeManager.set(YarnConfiguration.NM_LOCAL_DIRS, localDir.toString());
      nodeManager.set("sluice.server.host", "127.0.0.1");
      nodeManager.set("sluice.server.port", Integer.toString(taken.getLocalPort()));
      nodeManager.set("sluice.metrics.port", "-1");
      nodeManager.set("sluice.memory.max", "64m"); // fits this JVM's direct memory: the port fails

      SluiceShuffleService lenient = new SluiceShuffleService(w -> {});
      lenient.init(nodeManager);
      lenient.start();
      assertThat(lenient.isInState(Service.STATE.STARTED)).isTrue();
      assertThat(lenient.server()).isNull();
      assertThat(lenient.startFailure()).hasMessageContaining("" + taken.getLocalPort());
      assertThat(lenient.getMetaData().remaining()).isZero();
      lenient.stop();

      nodeManager.set("sluice.yarn.stopOnFailure", "true");
      SluiceShuffleService strict = new SluiceShuffleService(w -> {});
      strict.init(nodeManager);
      assertThatThrownBy(strict::start).hasMessageContaining("" + taken.getLocalPort());
      strict.stop();
    }
  }

  @Test
  void aBadSettingLeavesTheNodeManagerRunningUnlessAskedToStopIt() {
    Configuration nodeManager = new Configuration(false);
    nodeManager.set(YarnConfiguration.NM_LOCAL_DIRS, localDir.toString());
    nodeManager.set("sluice.memory.max", "lots");

    SluiceShuffleService lenient = new SluiceShuffleService(w -> {});
    lenient.init(nodeManager);
    lenient.start();
    assertThat(lenient.server()).isNull();
    assertThat(lenient.startFailure()).hasMessageContaining("sluice.memory.max");
    lenient.stop();

    nodeManager.set("sluice.yarn.stopOnFailure", "true");
    SluiceShuffleService strict = new SluiceShuffleService(w -> {});
    assertThatThrownBy(() -> strict.init(nodeManager)).hasMessageContaining("sluice.memory.max");
  }
}
