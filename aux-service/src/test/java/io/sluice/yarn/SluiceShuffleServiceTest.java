package io.sluice.yarn;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
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
}
