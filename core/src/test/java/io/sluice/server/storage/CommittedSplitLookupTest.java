package io.sluice.server.storage;

import static org.assertj.core.api.Assertions.assertThat;

import com.codahale.metrics.MetricRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sluice.common.Clock;
import io.sluice.common.SluiceConf;
import io.sluice.protocol.BatchFormat;
import io.sluice.protocol.proto.Status;
import io.sluice.server.ServerConf;
import io.sluice.server.ServerMetrics;
import io.sluice.server.memory.MemoryBudget;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A reducer's open finds its split among every committed split of the shuffle by (partition,
 * epoch): each one that exists, none that does not, whatever order the splits were opened in.
 */
class CommittedSplitLookupTest {
  @TempDir Path tmp;
  private MemoryBudget memory;
  private DataDirectories dirs;
  private ShuffleRegistry registry;

  @BeforeEach
  void start() throws Exception {
    ServerConf conf =
        new ServerConf(SluiceConf.of(Map.of("sluice.server.dirs", tmp.resolve("a").toString())));
    memory = new MemoryBudget(conf.memoryMax());
    dirs = new DataDirectories(conf, memory, new ServerMetrics(new MetricRegistry(), memory));
    registry = new ShuffleRegistry(dirs, Clock.SYSTEM);
  }

  @AfterEach
  void stop() {
    dirs.close();
  }

  private ByteBuf reserved(int partition) {
    ByteBuf b = Unpooled.directBuffer();
    BatchFormat.writeBatch(b, 0, 0, partition, new byte[10 + partition]);
    assertThat(memory.tryReserve(b.readableBytes())).isTrue();
    return b;
  }

  @Test
  void findsEverySplitByPartitionAndEpoch() throws Exception {
    int partitions = 300;
    ServerShuffle shuffle = registry.register("app", 0, ShuffleShape.of(1, partitions));
    // opened from the last partition down; every third partition also moved to epoch 1 and 2,
    // every seventh has no split on this server
    for (int p = partitions - 1; p >= 0; p--) {
      if (p % 7 == 3) {
        continue;
      }
      int epochs = p % 3 == 0 ? 3 : 1;
      for (int e = epochs - 1; e >= 0; e--) {
        assertThat(shuffle.splitForPush(p, e).append(reserved(p))).isEqualTo(Status.OK);
      }
    }
    assertThat(shuffle.committedSplit(0, 0)).as("before the commit").isNull();

    List<CommittedSplitFile> committed = shuffle.commit().get(1, TimeUnit.MINUTES);

    int found = 0;
    for (int p = 0; p < partitions + 2; p++) {
      for (int e = 0; e < 4; e++) {
        CommittedSplitFile f = shuffle.committedSplit(p, e);
        boolean exists = p < partitions && p % 7 != 3 && e < (p % 3 == 0 ? 3 : 1);
        if (exists) {
          assertThat(f).as("partition %d epoch %d", p, e).isNotNull();
          assertThat(f.key().partitionId()).isEqualTo(p);
          assertThat(f.key().epoch()).isEqualTo(e);
          found++;
        } else {
          assertThat(f).as("partition %d epoch %d", p, e).isNull();
        }
      }
    }
    assertThat(found).isEqualTo(committed.size());
  }
}
