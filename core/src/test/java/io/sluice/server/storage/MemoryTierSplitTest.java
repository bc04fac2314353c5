package io.sluice.server.storage;

import static org.assertj.core.api.Assertions.assertThat;

import com.codahale.metrics.MetricRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.sluice.common.SluiceConf;
import io.sluice.protocol.BatchFormat;
import io.sluice.protocol.proto.Status;
import io.sluice.server.ServerConf;
import io.sluice.server.ServerMetrics;
import io.sluice.server.memory.MemoryBudget;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The memory tier of one split: a small split committed in memory holds, chunk for chunk, the bytes
 * its file would hold (the same batches in the same order, the same chunk boundaries and map-run
 * trailer), has no file until it is written back, stays counted in the memory budget until then,
 * and after the write-back its file is byte for byte what a split committed to disk writes.
 */
class MemoryTierSplitTest {
  @TempDir Path tmp;
  private MemoryBudget memory;
  private DataDirectories dirs;
  private ServerMetrics metrics;

  private DataDirectories dirs(Path root, String memoryTier) throws Exception {
    Map<String, String> conf = new HashMap<>();
    conf.put("sluice.server.dirs", root.toString());
    conf.put("sluice.flush.size", "64k");
    conf.put("sluice.read.chunkSize", "4k");
    conf.put("sluice.memory.max", "4m");
    if (!memoryTier.equals("0")) {
      conf.put("sluice.storage.policy", "memory,local");
      conf.put("sluice.storage.memory.maxSplitSize", memoryTier);
    }
    ServerConf c = new ServerConf(SluiceConf.of(conf));
    memory = new MemoryBudget(c.memoryMax());
    metrics = new ServerMetrics(new MetricRegistry(), memory);
    dirs = new DataDirectories(c, memory, metrics);
    return dirs;
  }

  @AfterEach
  void tearDown() {
    if (dirs != null) {
      dirs.close();
    }
  }

  /** Seeded batches of maps 0..3 in an interleaved order, the same for every call. */
  private void pushSameBatches(ReducePartitionSplit split) {
    Random random = new Random(7);
    for (int i = 0; i < 60; i++) {
      int payload = 50 + random.nextInt(400);
      ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer();
      BatchFormat.writeHeader(b, 3 - i % 4, 0, i, payload);
      byte[] bytes = new byte[payload];
      random.nextBytes(bytes);
      b.writeBytes(bytes);
      assertThat(memory.tryReserve(b.readableBytes())).isTrue();
      assertThat(split.append(b)).isEqualTo(Status.OK);
    }
  }

  private static byte[] readChunks(CommittedSplitFile file) {
    ByteBuf all = PooledByteBufAllocator.DEFAULT.heapBuffer();
    for (int c = 0; c < file.numChunks(); c++) {
      ByteBuf chunk = file.inMemory().chunk(file.chunks(), c);
      all.writeBytes(chunk);
      chunk.release();
    }
    byte[] out = new byte[all.readableBytes()];
    all.readBytes(out);
    all.release();
    return out;
  }

  @Test
  void aSmallSplitCommittedInMemoryIsItsFileByteForByteAndWrittenBackOnRequest() throws Exception {
    // the reference: the same batches committed to disk
    DataDirectories disk = dirs(tmp.resolve("disk"), "0");
    ReducePartitionSplit onDisk = disk.newSplit(new SplitKey("app", 1, 2, 0));
    pushSameBatches(onDisk);
    CommittedSplitFile reference = onDisk.commit().get(1, TimeUnit.MINUTES);
    assertThat(reference.inMemory()).isNull();
    byte[] fileBytes = Files.readAllBytes(reference.path());
    disk.close();
    dirs = null;

    dirs(tmp.resolve("mem"), "1m");
    ReducePartitionSplit split = dirs.newSplit(new SplitKey("app", 1, 2, 0));
    pushSameBatches(split);
    CommittedSplitFile committed = split.commit().get(1, TimeUnit.MINUTES);

    assertThat(committed.inMemory()).isNotNull();
    assertThat(committed.inMemory().isHeld()).isTrue();
    assertThat(Files.exists(committed.path())).as("no file until written back").isFalse();
    assertThat(Files.exists(committed.path().resolveSibling("2-0.data.inprogress"))).isFalse();
    // its bytes, no more: the spare room of the buffers that gathered small pushes is returned
    assertThat(memory.held()).as("still counted in the budget").isEqualTo(committed.length());
    assertThat(metrics.memoryTierCommits().getCount()).isEqualTo(1);
    assertThat(committed.length()).isEqualTo(reference.length());
    assertThat(committed.chunkOffsets()).isEqualTo(reference.chunkOffsets());
    assertThat(committed.numChunks()).isGreaterThan(1);
    byte[] data = readChunks(committed);
    assertThat(data).hasSize((int) reference.length());
    assertThat(data).isEqualTo(java.util.Arrays.copyOf(fileBytes, (int) reference.length()));
    assertThat(committed.mapIndexes().toRuns()).isEqualTo(reference.mapIndexes().toRuns());

    split.writeBack().get(1, TimeUnit.MINUTES);
    assertThat(committed.inMemory().isHeld()).isFalse();
    assertThat(committed.inMemory().chunk(committed.chunks(), 0)).isNull();
    assertThat(Files.readAllBytes(committed.path()))
        .as("the written-back file, trailer included")
        .isEqualTo(fileBytes);
    assertThat(memory.held()).isZero();
    assertThat(metrics.memoryTierWritebacks().getCount()).isEqualTo(1);
  }

  @Test
  void aSplitTooLargeOrAlreadyFlushedIsCommittedToItsFile() throws Exception {
    dirs(tmp.resolve("mem"), "2k");
    ReducePartitionSplit large = dirs.newSplit(new SplitKey("app", 1, 0, 0));
    pushSameBatches(large); // about 15 KiB: more than 2k
    CommittedSplitFile file = large.commit().get(1, TimeUnit.MINUTES);
    assertThat(file.inMemory()).isNull();
    assertThat(Files.exists(file.path())).isTrue();

    ReducePartitionSplit flushed = dirs.newSplit(new SplitKey("app", 1, 1, 0));
    pushSameBatches(flushed);
    flushed.flushNow(); // memory pressure sent it to the flusher: it has a file already
    CommittedSplitFile flushedFile = flushed.commit().get(1, TimeUnit.MINUTES);
    assertThat(flushedFile.inMemory()).isNull();
    assertThat(memory.held()).isZero();
  }

  @Test
  void droppingASplitHeldInMemoryReleasesItsMemoryAndLeavesNoFile() throws Exception {
    dirs(tmp.resolve("mem"), "1m");
    ReducePartitionSplit split = dirs.newSplit(new SplitKey("app", 1, 2, 0));
    pushSameBatches(split);
    CommittedSplitFile committed = split.commit().get(1, TimeUnit.MINUTES);
    ByteBuf reading = committed.inMemory().chunk(committed.chunks(), 0);

    split.discard().get(1, TimeUnit.MINUTES);

    assertThat(memory.held()).isZero();
    assertThat(committed.inMemory().isHeld()).isFalse();
    assertThat(Files.exists(committed.path())).isFalse();
    // a response being sent keeps its slice readable until it is released
    assertThat(reading.getInt(BatchFormat.MAP_INDEX_OFFSET)).isBetween(0, 3);
    reading.release();
    assertThat(split.writeBack().get(1, TimeUnit.MINUTES)).isNull();
    assertThat(Files.exists(committed.path())).as("a dropped split is not written").isFalse();
  }
}
