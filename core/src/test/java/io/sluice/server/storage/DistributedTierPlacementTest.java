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
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Which committed splits the distributed tier takes, and what it holds then: the split's file byte
 * for byte (batches and map-run trailer), with no local file left. Splits below the size threshold
 * stay local unless their directory is past sluice.disk.maxUsage or their application asked for
 * every split; memory-tier splits stay in memory.
 */
class DistributedTierPlacementTest {
  @TempDir Path tmp;
  private DataDirectories dirs;
  private MemoryBudget memory;
  private ServerMetrics metrics;

  private DataDirectories dirs(String policy, String minSplit) throws Exception {
    Map<String, String> conf = new HashMap<>();
    conf.put("sluice.server.dirs", tmp.resolve("disk").toString());
    conf.put("sluice.flush.size", "64k");
    conf.put("sluice.read.chunkSize", "4k");
    conf.put("sluice.memory.max", "4m");
    conf.put("sluice.storage.policy", policy);
    conf.put("sluice.storage.hdfs.dir", tmp.resolve("dfs").toUri().toString());
    conf.put("sluice.storage.hdfs.minSplitSize", minSplit);
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

  private CommittedSplitFile commitAndPlace(int partition, boolean everySplit) throws Exception {
    ReducePartitionSplit split = dirs.newSplit(new SplitKey("app", 1, partition, 0));
    Random random = new Random(partition);
    for (int i = 0; i < 40; i++) {
      int payload = 50 + random.nextInt(400);
      ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer();
      BatchFormat.writeHeader(b, 3 - i % 4, 0, i, payload);
      byte[] bytes = new byte[payload];
      random.nextBytes(bytes);
      b.writeBytes(bytes);
      assertThat(memory.tryReserve(b.readableBytes())).isTrue();
      assertThat(split.append(b)).isEqualTo(Status.OK);
    }
    CommittedSplitFile local = split.commit().get(1, TimeUnit.MINUTES);
    byte[] bytes = local.inMemory() == null ? Files.readAllBytes(local.path()) : null;
    CommittedSplitFile placed = dirs.place(local, everySplit).get(1, TimeUnit.MINUTES);
    if (placed.remotePath() != null) {
      assertThat(Files.exists(local.path())).as("the local file after the move").isFalse();
      Path remote = Paths.get(URI.create(placed.remotePath()));
      assertThat(Files.readAllBytes(remote)).as("the file in the tier").isEqualTo(bytes);
      assertThat(placed.chunkOffsets()).isEqualTo(local.chunkOffsets());
      assertThat(placed.length()).isEqualTo(local.length());
    }
    return placed;
  }

  @Test
  void splitsAtOrAboveTheThresholdMoveAndSmallerOnesStay() throws Exception {
    dirs("local,hdfs", "8k");
    CommittedSplitFile large = commitAndPlace(0, false);
    assertThat(large.length()).isGreaterThanOrEqualTo(8 << 10);
    assertThat(large.remotePath()).contains("/dfs/").endsWith("/app/1/0-0.data");
    assertThat(metrics.hdfsTierSplits().getCount()).isEqualTo(1);

    dirs.close();
    dirs("local,hdfs", "1g");
    CommittedSplitFile small = commitAndPlace(1, false);
    assertThat(small.remotePath()).isNull();
    assertThat(Files.exists(small.path())).isTrue();
  }

  @Test
  void aFullDirectoryOrAnApplicationThatAsksSendsSplitsOfAnySize() throws Exception {
    dirs("local,hdfs", "1g");
    assertThat(commitAndPlace(0, true).remotePath()).as("every split asked for").isNotNull();

    CommittedSplitFile beforeFull = commitAndPlace(1, false);
    assertThat(beforeFull.remotePath()).isNull();
    ReducePartitionSplit open = dirs.newSplit(new SplitKey("app", 1, 2, 0));
    DataDirectory dir = dirs.all().get(0);
    assertThat(dir.check(0.0)).isEqualTo(DataDirectory.Health.FULL);
    open.discard().get(1, TimeUnit.MINUTES);
    CommittedSplitFile whenFull =
        dirs.place(beforeFull, false).get(1, TimeUnit.MINUTES); // committed in a full directory
    assertThat(whenFull.remotePath()).as("a split of a full directory").isNotNull();
  }

  @Test
  void memoryTierSplitsStayInMemoryAndWithoutTheTierEverythingStaysLocal() throws Exception {
    dirs("memory,local,hdfs", "0");
    CommittedSplitFile inMemory = commitAndPlace(0, true);
    assertThat(inMemory.inMemory()).isNotNull();
    assertThat(inMemory.remotePath()).isNull();
    inMemory.inMemory().drop();

    dirs.close();
    dirs("local", "0");
    assertThat(commitAndPlace(1, true).remotePath()).isNull();
    assertThat(metrics.hdfsTierSplits().getCount()).isZero();
  }
}
