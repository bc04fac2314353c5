package io.sluice.server.storage;

import static org.assertj.core.api.Assertions.assertThat;

import com.codahale.metrics.MetricRegistry;
import io.sluice.common.SluiceConf;
import io.sluice.server.ServerConf;
import io.sluice.server.ServerMetrics;
import io.sluice.server.memory.MemoryBudget;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SplitTableTest {
  @TempDir Path tmp;
  private DataDirectories dirs;

  @BeforeEach
  void setUp() throws Exception {
    ServerConf conf = new ServerConf(SluiceConf.of(Map.of("sluice.server.dirs", tmp.toString())));
    MemoryBudget memory = new MemoryBudget(conf.memoryMax());
    dirs = new DataDirectories(conf, memory, new ServerMetrics(new MetricRegistry(), memory));
  }

  @AfterEach
  void tearDown() {
    dirs.close();
  }

  private static long idOf(ReducePartitionSplit split) {
    return ServerShuffle.splitId(split.key().partitionId(), split.key().epoch());
  }

  private List<ReducePartitionSplit> splits(int n) {
    List<ReducePartitionSplit> out = new ArrayList<>();
    for (int p = 0; p < n; p++) {
      out.add(dirs.newSplit(new SplitKey("app-1", 0, p, p % 3)));
    }
    return out;
  }

  @Test
  void everyAddedSplitIsFoundThroughResizesAndAbsentIdsAreNot() {
    SplitTable table = new SplitTable();
    List<ReducePartitionSplit> splits = splits(3000);
    for (ReducePartitionSplit s : splits) {
      table.add(idOf(s), s);
    }
    for (ReducePartitionSplit s : splits) {
      assertThat(table.get(idOf(s))).isSameAs(s);
    }
    assertThat(table.get(ServerShuffle.splitId(0, 1)))
        .isNull(); // partition 0 was added with epoch 0 only
    assertThat(table.get(ServerShuffle.splitId(3000, 0))).isNull();
    assertThat(table.get(-1L)).isNull();
    assertThat(table.values()).containsExactlyInAnyOrderElementsOf(splits);
  }

  @Test
  void aLookupRacingAddsFindsTheRightSplitOrNothing() throws Exception {
    SplitTable table = new SplitTable();
    List<ReducePartitionSplit> splits = splits(5000);
    AtomicBoolean done = new AtomicBoolean();
    AtomicReference<String> wrong = new AtomicReference<>();
    Thread reader =
        new Thread(
            () -> {
              int found = 0;
              while (!done.get() || found == 0) {
                found = 0;
                for (ReducePartitionSplit s : splits) {
                  SplitKey k = s.key();
                  ReducePartitionSplit got = table.get(idOf(s));
                  if (got != null && got != s) {
                    wrong.compareAndSet(null, "looking up " + k + " found " + got.key());
                  }
                  found += got == null ? 0 : 1;
                }
              }
            });
    reader.start();
    for (ReducePartitionSplit s : splits) {
      table.add(idOf(s), s);
    }
    done.set(true);
    reader.join();
    assertThat(wrong.get()).isNull();
  }
}
