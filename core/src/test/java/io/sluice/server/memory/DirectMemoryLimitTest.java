package io.sluice.server.memory;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.codahale.metrics.MetricRegistry;
import io.sluice.common.Clock;
import io.sluice.common.SluiceConf;
import io.sluice.network.NetworkConf;
import io.sluice.server.ServerConf;
import io.sluice.server.ShuffleServer;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DirectMemoryLimitTest {
  @TempDir Path tmp;

  @Test
  void aBudgetAboveTheDirectLimitIsRefusedNamingTheSettings() {
    assertThatThrownBy(() -> DirectMemoryLimit.check(4L << 30, 2L << 30))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContainingAll(
            "sluice.memory.max (4096 MiB)",
            "direct memory limit (2048 MiB)",
            "-XX:MaxDirectMemorySize to at least 4608 MiB",
            "SLUICE_DIRECT_MEMORY",
            "YARN_NODEMANAGER_OPTS");
    assertThatCode(() -> DirectMemoryLimit.check(1L << 30, 2L << 30)).doesNotThrowAnyException();
    // the headroom is an eighth of the budget, at least 64 MiB
    assertThatThrownBy(() -> DirectMemoryLimit.check(100L << 20, 150L << 20))
        .hasMessageContaining("64 MiB of headroom");
  }

  @Test
  void aServerDoesNotStartWithABudgetItCannotHold() {
    SluiceConf conf =
        SluiceConf.of(
            Map.of(
                "sluice.server.port", "0",
                "sluice.server.host", "127.0.0.1",
                "sluice.server.dirs", tmp.toString(),
                "sluice.memory.max", "64t"));
    assertThatThrownBy(
            () ->
                new ShuffleServer(
                    new ServerConf(conf),
                    new NetworkConf(conf),
                    new MetricRegistry(),
                    Clock.SYSTEM))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("raise -XX:MaxDirectMemorySize");
  }
}
