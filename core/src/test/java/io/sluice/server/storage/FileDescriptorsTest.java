package io.sluice.server.storage;

import static org.assertj.core.api.Assertions.assertThat;

import com.codahale.metrics.MetricRegistry;
import io.sluice.common.Clock;
import io.sluice.common.SluiceConf;
import io.sluice.server.ServerConf;
import io.sluice.server.ServerMetrics;
import io.sluice.server.memory.MemoryBudget;
import java.io.IOException;
import java.nio.file.FileSystemException;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A write that fails because the process is out of file descriptors is not a failed disk: the
 * directory stays in service (the writer fails alone); a write that fails otherwise takes it out.
 */
class FileDescriptorsTest {
  @TempDir Path tmp;

  @Test
  void tooManyOpenFilesLeavesTheDirectoryInServiceAndAnyOtherFailureTakesItOut()
      throws IOException {
    ServerConf conf =
        new ServerConf(SluiceConf.of(Map.of("sluice.server.dirs", tmp.resolve("d").toString())));
    MemoryBudget memory = new MemoryBudget(conf.memoryMax(), 0.85, 0.95, 0.5, Clock.SYSTEM);
    DataDirectories dirs =
        new DataDirectories(conf, memory, new ServerMetrics(new MetricRegistry(), memory));
    try {
      DataDirectory dir = dirs.all().get(0);
      IOException emfile =
          new IOException(
              "flush failed",
              new FileSystemException(dir + "/app/0/1-0.data", null, "Too many open files"));

      assertThat(dirs.failed(dir, "a flush of app/0/1-0", emfile)).isFalse();
      assertThat(dir.health()).isEqualTo(DataDirectory.Health.HEALTHY);

      assertThat(dirs.failed(dir, "a flush of app/0/2-0", new IOException("Input/output error")))
          .isTrue();
      assertThat(dir.health()).isEqualTo(DataDirectory.Health.FAILED);
    } finally {
      dirs.close();
    }
  }
}
