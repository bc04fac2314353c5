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
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A map partition's bookkeeping of its open region grows with the blocks it takes, not with the
 * subpartitions its writer claims; it is counted in the memory budget until the region's index
 * record is written, and balances to zero; a frame whose bookkeeping does not fit is refused and
 * taken when sent again; empty regions are bounded.
 */
class MapPartitionBookkeepingTest {
  private static final int SUBPARTITIONS = 65_536;

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

  /**
   * Regions of 65,536 subpartitions opened on 300 partitions, as a peer may ask with a few
   * kilobytes, hold nothing of the budget; blocks add their entries, and the index records written
   * from them say where each subpartition lies.
   */
  @Test
  void openRegionsHoldOnlyWhatTheirBlocksNeedAndBalanceToZero() throws Exception {
    start("16m");
    List<MapPartitionFile> opened = new ArrayList<>();
    for (int map = 0; map < 300; map++) {
      MapPartitionFile p =
          dirs.newMapPartition(new MapPartitionId("app", 1, map, 0), SUBPARTITIONS);
      p.startRegion(0, SUBPARTITIONS, false);
      opened.add(p);
    }
    assertThat(memory.held()).as("300 regions open, no data").isZero();

    MapPartitionFile p = opened.get(0);
    ByteBuf frame = frame(5, 9, 9, 60_000);
    int frameBytes = frame.readableBytes();
    assertThat(memory.tryReserve(frameBytes)).isTrue();
    assertThat(p.append(0, 0, frame)).isTrue();
    p.finishRegion(0);
    p.startRegion(1, SUBPARTITIONS, true); // broadcast: every entry is the whole region
    ByteBuf broadcast = frame(0);
    assertThat(memory.tryReserve(broadcast.readableBytes())).isTrue();
    assertThat(p.append(1, 1, broadcast)).isTrue();
    p.finishRegion(1);
    CommittedMapPartition committed = p.commit(2).get(1, TimeUnit.MINUTES);
    for (MapPartitionFile o : opened.subList(1, opened.size())) {
      o.discard().get(1, TimeUnit.MINUTES);
    }
    assertThat(memory.held()).as("committed or dropped: everything released").isZero();

    long block = MapBlockFormat.HEADER_SIZE + 100;
    try (FileChannel index = FileChannel.open(committed.indexPath())) {
      assertThat(MapPartitionIndex.check(index, SUBPARTITIONS, "test")).isEqualTo(2);
      long[] offsets = new long[SUBPARTITIONS];
      long[] lengths = new long[SUBPARTITIONS];
      MapPartitionIndex.read(index, SUBPARTITIONS, 0, 0, SUBPARTITIONS - 1, offsets, lengths, 0);
      assertThat(new long[] {offsets[0], lengths[0]}).as("before the first").containsExactly(0, 0);
      assertThat(new long[] {offsets[5], lengths[5]}).containsExactly(0, block);
      assertThat(new long[] {offsets[7], lengths[7]}).as("between").containsExactly(block, 0);
      assertThat(new long[] {offsets[9], lengths[9]}).containsExactly(block, 2 * block);
      assertThat(new long[] {offsets[60_000], lengths[60_000]}).containsExactly(3 * block, block);
      assertThat(new long[] {offsets[SUBPARTITIONS - 1], lengths[SUBPARTITIONS - 1]})
          .as("after the last")
          .containsExactly(4 * block, 0);
      MapPartitionIndex.read(index, SUBPARTITIONS, 1, 100, 100, offsets, lengths, 0);
      assertThat(new long[] {offsets[0], lengths[0]}).containsExactly(4 * block, block);
    }
  }

  @Test
  void aFrameWhoseBookkeepingDoesNotFitIsRefusedAndTakenWhenSentAgain() throws Exception {
    start("1m");
    MapPartitionFile p = dirs.newMapPartition(new MapPartitionId("app", 1, 0, 0), SUBPARTITIONS);
    p.startRegion(0, SUBPARTITIONS, false);
    int[] subs = new int[40];
    for (int i = 0; i < subs.length; i++) {
      subs[i] = i * 3;
    }
    ByteBuf frame = frame(subs);
    int frameBytes = frame.readableBytes();
    assertThat(memory.tryReserve(frameBytes)).isTrue();
    long filler = memory.max() - memory.held() - 100;
    assertThat(memory.tryReserve(filler)).isTrue();

    assertThat(p.append(0, 0, frame)).as("no room for its entries").isFalse();
    assertThat(memory.held()).isEqualTo(frameBytes + filler);
    assertThat(frame.refCnt()).as("the caller keeps the frame").isOne();

    memory.release(filler);
    assertThat(p.append(0, 0, frame)).isTrue();
    p.finishRegion(0);
    CommittedMapPartition committed = p.commit(1).get(1, TimeUnit.MINUTES);
    assertThat(memory.held()).isZero();
    try (FileChannel index = FileChannel.open(committed.indexPath())) {
      long[] offsets = new long[1];
      long[] lengths = new long[1];
      MapPartitionIndex.read(index, SUBPARTITIONS, 0, 117, 117, offsets, lengths, 0);
      assertThat(lengths[0])
          .as("each block indexed once")
          .isEqualTo(MapBlockFormat.HEADER_SIZE + 100);
    }
  }

  @Test
  void aPartitionDroppedWithARegionOpenGivesItsBookkeepingBack() throws Exception {
    start("16m");
    MapPartitionFile p = dirs.newMapPartition(new MapPartitionId("app", 1, 1, 0), SUBPARTITIONS);
    p.startRegion(0, SUBPARTITIONS, false);
    ByteBuf frame = frame(1, 2, 3);
    assertThat(memory.tryReserve(frame.readableBytes())).isTrue();
    assertThat(p.append(0, 0, frame)).isTrue();
    p.discard().get(1, TimeUnit.MINUTES);
    assertThat(memory.held()).isZero();
  }

  @Test
  void emptyRegionsAreBounded() throws Exception {
    start("16m");
    MapPartitionFile p = dirs.newMapPartition(new MapPartitionId("app", 1, 0, 0), 16);
    int region = 0;
    for (; region < MapPartitionFile.MAX_EMPTY_REGIONS; region++) {
      p.startRegion(region, 16, false);
      p.finishRegion(region);
    }
    p.startRegion(region, 16, false);
    int refused = region;
    assertThatThrownBy(() -> p.finishRegion(refused))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("MAX_EMPTY_REGIONS (" + MapPartitionFile.MAX_EMPTY_REGIONS + ")")
        .hasMessageContaining(p.key().toString());
    // a region with data is still taken
    ByteBuf frame = frame(3);
    assertThat(memory.tryReserve(frame.readableBytes())).isTrue();
    assertThat(p.append(region, 0, frame)).isTrue();
    p.finishRegion(region);
    p.commit(region + 1).get(1, TimeUnit.MINUTES);
    assertThat(memory.held()).isZero();
  }

  /** A frame of one block of 100 bytes for each of {@code subs}, in order. */
  private static ByteBuf frame(int... subs) {
    ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer();
    for (int sub : subs) {
      int at = b.writerIndex();
      MapBlockFormat.writeHeader(b, sub, 0, 100, 100);
      b.writeZero(100);
      MapBlockFormat.seal(b, at);
    }
    return b;
  }
}
