package io.sluice.server.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
 * What a decommissioned server still takes: no shuffle (not even one it has), no new split, no more
 * data for an open one (it is committed with what it took); but a map partition placed before goes
 * on, so no producer fails; and cancelling takes everything again.
 */
class DecommissionAdmissionTest {
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

  private ByteBuf reserved(byte[] payload) {
    ByteBuf b = Unpooled.directBuffer();
    BatchFormat.writeBatch(b, 0, 0, 0, payload);
    assertThat(memory.tryReserve(b.readableBytes())).isTrue();
    return b;
  }

  @Test
  void decommissionCommitsOpenSplitsRefusesNewOnesAndLetsPlacedMapPartitionsFinish()
      throws Exception {
    ServerShuffle shuffle = registry.register("app", 0, ShuffleShape.of(2, 4));
    ReducePartitionSplit open = shuffle.splitForPush(0, 0);
    assertThat(open.append(reserved(new byte[100]))).isEqualTo(Status.OK);
    MapPartitionFile placed = shuffle.mapPartitionForRegion(0, 0, 4, 0);

    List<CommittedSplitFile> committed = registry.decommission().get(1, TimeUnit.MINUTES);

    assertThat(committed).extracting(f -> f.key().partitionId()).containsExactly(0);
    assertThat(open.isCommitted()).isTrue();
    ByteBuf late = reserved(new byte[10]);
    int lateBytes = late.readableBytes();
    assertThat(open.append(late))
        .as("more data for a committed split")
        .isEqualTo(Status.HARD_SPLIT);
    late.release(); // refused: the caller keeps the body and its reservation
    memory.release(lateBytes);
    assertThatThrownBy(() -> shuffle.splitForPush(1, 0))
        .isInstanceOf(StorageUnavailableException.class)
        .hasMessageContaining("decommissioned");
    assertThatThrownBy(() -> registry.register("app", 0, ShuffleShape.of(2, 4)))
        .isInstanceOf(ServerDecommissionedException.class)
        .hasMessageContaining("decommissioned");
    assertThatThrownBy(() -> registry.register("other", 0, ShuffleShape.of(2, 4)))
        .isInstanceOf(ServerDecommissionedException.class);
    assertThat(shuffle.mapPartitionForRegion(0, 0, 4, 0)).isSameAs(placed);
    assertThat(shuffle.mapPartitionForRegion(1, 0, 4, 0))
        .as("a map partition of a shuffle placed here before")
        .isNotNull();

    registry.cancelDecommission();
    assertThat(registry.register("other", 0, ShuffleShape.of(2, 4))).isNotNull();
    assertThat(shuffle.splitForPush(1, 0)).isNotNull();
  }
}
