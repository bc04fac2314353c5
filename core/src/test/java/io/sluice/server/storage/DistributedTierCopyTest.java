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
import io.sluice.testutil.HangingRenameFileSystem;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a copy to the distributed tier does to files when it fails or is too late: a placement of a
 * split that was placed already fails on the moved local file and leaves the earlier copy in the
 * tier alone; a rename that outlasts sluice.storage.hdfs.copyTimeout leaves the split local, and
 * the file it renamed is deleted when it ends.
 */
class DistributedTierCopyTest {
  @TempDir Path tmp;
  private DataDirectories dirs;
  private MemoryBudget memory;
  private ServerMetrics metrics;

  private void dirs(Map<String, String> extra) throws IOException {
    Map<String, String> conf = new HashMap<>();
    conf.put("sluice.server.dirs", tmp.resolve("disk").toString());
    conf.put("sluice.flush.size", "64k");
    conf.put("sluice.memory.max", "4m");
    conf.put("sluice.storage.policy", "local,hdfs");
    conf.put("sluice.storage.hdfs.dir", tmp.resolve("dfs").toUri().toString());
    conf.put("sluice.storage.hdfs.minSplitSize", "0");
    conf.putAll(extra);
    ServerConf c = new ServerConf(SluiceConf.of(conf));
    memory = new MemoryBudget(c.memoryMax());
    metrics = new ServerMetrics(new MetricRegistry(), memory);
    dirs = new DataDirectories(c, memory, metrics);
  }

  @AfterEach
  void tearDown() {
    HangingRenameFileSystem.release();
    if (dirs != null) {
      dirs.close();
    }
  }

  private CommittedSplitFile committed(int partition) throws Exception {
    ReducePartitionSplit split = dirs.newSplit(new SplitKey("app", 1, partition, 0));
    Random random = new Random(partition);
    for (int i = 0; i < 20; i++) {
      int payload = 50 + random.nextInt(400);
      ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer();
      BatchFormat.writeHeader(b, i % 3, 0, i, payload);
      byte[] bytes = new byte[payload];
      random.nextBytes(bytes);
      b.writeBytes(bytes);
      assertThat(memory.tryReserve(b.readableBytes())).isTrue();
      assertThat(split.append(b)).isEqualTo(Status.OK);
    }
    CommittedSplitFile file = split.commit().get(1, TimeUnit.MINUTES);
    assertThat(file.inMemory()).isNull();
    return file;
  }

  private List<Path> tierFiles() throws IOException {
    try (Stream<Path> files = Files.walk(tmp.resolve("dfs"))) {
      return files.filter(Files::isRegularFile).collect(Collectors.toList());
    }
  }

  @Test
  void aSecondPlacementOfAMovedSplitLeavesTheFirstCopyInTheTier() throws Exception {
    dirs(Map.of());
    CommittedSplitFile local = committed(0);
    byte[] bytes = Files.readAllBytes(local.path());
    CommittedSplitFile moved = dirs.place(local, false).get(1, TimeUnit.MINUTES);
    assertThat(moved.remotePath()).isNotNull();
    assertThat(Files.exists(local.path())).isFalse();

    // as a stage commit did after a decommission had placed the split: the local file is gone
    CommittedSplitFile again = dirs.place(local, false).get(1, TimeUnit.MINUTES);
    assertThat(again.remotePath()).as("the second placement").isNull();
    assertThat(metrics.hdfsTierFailures().getCount()).isEqualTo(1);
    Path remote = Paths.get(URI.create(moved.remotePath()));
    assertThat(Files.readAllBytes(remote)).as("the first placement's copy").isEqualTo(bytes);
  }

  @Test
  void aRenameThatOutlastsTheCopyTimeoutLeavesTheSplitLocalAndItsFileGoes() throws Exception {
    dirs(
        Map.of(
            "sluice.storage.hdfs.dir",
            "hangrename://" + tmp.resolve("dfs"),
            "sluice.hadoop.fs.hangrename.impl",
            HangingRenameFileSystem.class.getName(),
            "sluice.hadoop.fs.hangrename.impl.disable.cache",
            "true",
            "sluice.storage.hdfs.copyTimeout",
            "300ms"));
    CommittedSplitFile local = committed(0);
    HangingRenameFileSystem.hold();
    // completes while the rename is held (before, the decision was taken before the rename, so
    // the commit waited for the rename, here for 60 s)
    CommittedSplitFile placed = dirs.place(local, false).get(30, TimeUnit.SECONDS);
    assertThat(placed.remotePath()).as("a split whose rename hangs").isNull();
    assertThat(Files.exists(local.path())).isTrue();
    assertThat(metrics.hdfsTierFailures().getCount()).isEqualTo(1);

    HangingRenameFileSystem.release();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while ((HangingRenameFileSystem.renamesPassed() < 1 || !tierFiles().isEmpty())
        && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    assertThat(tierFiles()).as("files the late copy left in the tier").isEmpty();
    assertThat(Files.exists(local.path())).as("the split's local file").isTrue();
    assertThat(metrics.hdfsTierSplits().getCount()).isZero();
  }
}
