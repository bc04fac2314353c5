package io.sluice.server.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.codahale.metrics.MetricRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.sluice.common.SluiceConf;
import io.sluice.protocol.MapBlockFormat;
import io.sluice.protocol.MapPartitionId;
import io.sluice.server.ServerConf;
import io.sluice.server.ServerMetrics;
import io.sluice.server.memory.MemoryBudget;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A map partition's per-subpartition bookkeeping is counted in the memory budget while a region is
 * open and while its index record waits for the flusher, and balances to zero; a region that does
 * not fit is refused; empty regions are bounded.
 */
class MapPartitionBookkeepingTest {
  private static final int SUBPARTITIONS = 65_536;
  private static final long BOOKKEEPING = 16L * SUBPARTITIONS;

  @TempDir Path tmp;
  private MemoryBudget memory;
  private DataDirectories dirs;

  private void start(String memoryMax) throws IOException {
    ServerConf conf =
        new ServerConf(
            SluiceConf.of(
                Map.of(
                    "sluice.server.dirs",
                    tmp.resolve("d0").toString(),
                    "sluice.flush.size",
                    "4k",
                    "sluice.memory.max",
                    memoryMax)));
    memory = new MemoryBudget(conf.memoryMax());
    dirs = new DataDirectories(conf, memory, new ServerMetrics(new MetricRegistry(), memory));
  }

  @AfterEach
  void tearDown() {
    if (dirs != null) {
      dirs.close();
    }
  }

  @Test
  void bookkeepingIsReservedWhileARegionIsOpenAndBalancesToZero() throws Exception {
    start("16m");
    assertThat(MapPartitionFile.regionBookkeepingBytes(SUBPARTITIONS)).isEqualTo(BOOKKEEPING);
    MapPartitionFile p = dirs.newMapPartition(new MapPartitionId("app", 1, 0, 0), SUBPARTITIONS);
    assertThat(memory.held()).as("no region open: nothing held").isZero();
    for (int region = 0; region < 3; region++) {
      assertThat(p.startRegion(region, SUBPARTITIONS, false)).isTrue();
      assertThat(memory.held()).as("region %d open", region).isGreaterThanOrEqualTo(BOOKKEEPING);
      ByteBuf frame = frame(region * 7);
      assertThat(memory.tryReserve(frame.readableBytes())).isTrue();
      p.append(region, region, frame);
      p.finishRegion(region);
    }
    p.commit(3).get(1, TimeUnit.MINUTES);
    assertThat(memory.held()).as("committed: index records written and released").isZero();

    // a partition dropped with a region open gives its bookkeeping back
    MapPartitionFile dropped =
        dirs.newMapPartition(new MapPartitionId("app", 1, 1, 0), SUBPARTITIONS);
    assertThat(dropped.startRegion(0, SUBPARTITIONS, false)).isTrue();
    assertThat(memory.held()).isEqualTo(BOOKKEEPING);
    dropped.discard().get(1, TimeUnit.MINUTES);
    assertThat(memory.held()).isZero();
  }

  @Test
  void aRegionWhoseBookkeepingDoesNotFitIsRefused() throws Exception {
    start("1m"); // one region of 65,536 subpartitions takes all of it
    MapPartitionFile first =
        dirs.newMapPartition(new MapPartitionId("app", 1, 0, 0), SUBPARTITIONS);
    MapPartitionFile second =
        dirs.newMapPartition(new MapPartitionId("app", 1, 1, 0), SUBPARTITIONS);
    assertThat(first.startRegion(0, SUBPARTITIONS, false)).isTrue();
    assertThat(second.startRegion(0, SUBPARTITIONS, false)).as("does not fit").isFalse();
    assertThat(memory.held()).isEqualTo(BOOKKEEPING);
    // refused without a trace: it can start once there is room
    first.discard().get(1, TimeUnit.MINUTES);
    assertThat(second.startRegion(0, SUBPARTITIONS, false)).isTrue();
    second.discard().get(1, TimeUnit.MINUTES);
    assertThat(memory.held()).isZero();
  }

  @Test
  void emptyRegionsAreBounded() throws Exception {
    start("16m");
    MapPartitionFile p = dirs.newMapPartition(new MapPartitionId("app", 1, 0, 0), 16);
    int region = 0;
    for (; region < MapPartitionFile.MAX_EMPTY_REGIONS; region++) {
      assertThat(p.startRegion(region, 16, false)).isTrue();
      p.finishRegion(region);
    }
    assertThat(p.startRegion(region, 16, false)).isTrue();
    int refused = region;
    assertThatThrownBy(() -> p.finishRegion(refused))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("MAX_EMPTY_REGIONS (" + MapPartitionFile.MAX_EMPTY_REGIONS + ")")
        .hasMessageContaining(p.key().toString());
    // a region with data is still taken
    ByteBuf frame = frame(3);
    assertThat(memory.tryReserve(frame.readableBytes())).isTrue();
    p.append(region, 0, frame);
    p.finishRegion(region);
    p.commit(region + 1).get(1, TimeUnit.MINUTES);
    assertThat(memory.held()).isZero();
  }

  /** A frame of one block of subpartition {@code sub}. */
  private static ByteBuf frame(int sub) {
    ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer();
    MapBlockFormat.writeHeader(b, sub, 0, 100, 100);
    b.writeZero(100);
    MapBlockFormat.seal(b, 0);
    return b;
  }
}
