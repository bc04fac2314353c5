package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.common.SluiceConf;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ServerConfTest {
  @Test
  void theMetricsPortBindsItsOwnAddressOrTheServers() {
    ServerConf same = new ServerConf(SluiceConf.of(Map.of("sluice.server.host", "10.0.0.5")));
    assertThat(same.metricsHost()).isEqualTo("10.0.0.5");
    ServerConf own =
        new ServerConf(
            SluiceConf.of(
                Map.of("sluice.server.host", "0.0.0.0", "sluice.metrics.host", "127.0.0.1")));
    assertThat(own.host()).isEqualTo("0.0.0.0");
    assertThat(own.metricsHost()).isEqualTo("127.0.0.1");
  }
}
