package io.sluice.server.storage;

import static org.assertj.core.api.Assertions.assertThat;

import com.codahale.metrics.MetricRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.sluice.common.SluiceConf;
import io.sluice.protocol.BatchFormat;
import io.sluice.protocol.MapBlockFormat;
import io.sluice.protocol.MapPartitionId;
import io.sluice.protocol.proto.Status;
import io.sluice.server.ServerConf;
import io.sluice.server.ServerMetrics;
import io.sluice.server.memory.MemoryBudget;
import io.sluice.testutil.SplitFileBytes;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The writeback of files being written ({@code sluice.flush.writebackBytes}): on real data
 * directories, with a hook before each {@code force} that records it, holds it or fails it.
 */
class WritebackTest {
  private static final int THRESHOLD = 64 << 10;

  @TempDir Path tmp;
  private MemoryBudget memory;
  private ServerMetrics metrics;
  private DataDirectories dirs;
  private final List<CountDownLatch> releases = new ArrayList<>();

  private void start(int directories, String writebackBytes) throws Exception {
    List<String> roots = new ArrayList<>();
    for (int i = 0; i < directories; i++) {
      roots.add(tmp.resolve("d" + i).toString());
    }
    Map<String, String> settings = new HashMap<>();
    settings.put("sluice.server.dirs", String.join(",", roots));
    settings.put("sluice.flush.size", "4k");
    settings.put("sluice.memory.max", "16m");
    settings.put("sluice.flush.writebackBytes", writebackBytes);
    ServerConf conf = new ServerConf(SluiceConf.of(settings));
    memory = new MemoryBudget(conf.memoryMax());
    metrics = new ServerMetrics(new MetricRegistry(), memory);
    dirs = new DataDirectories(conf, memory, metrics);
  }

  @AfterEach
  void tearDown() {
    releases.forEach(CountDownLatch::countDown);
    if (dirs != null) {
      dirs.close();
    }
  }

  private DataDirectory dir(int i) {
    return dirs.all().get(i);
  }

  /** Appends {@code bytes} or a little more in batches; returns what the file must hold. */
  private byte[] push(ReducePartitionSplit split, int bytes) {
    ByteArrayOutputStream expected = new ByteArrayOutputStream();
    for (int i = 0; expected.size() < bytes; i++) {
      ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer();
      int payload = 1000 + i % 500;
      BatchFormat.writeHeader(b, 0, 0, i, payload);
      for (int j = 0; j < payload; j++) {
        b.writeByte(i + j);
      }
      byte[] copy = new byte[b.readableBytes()];
      b.getBytes(0, copy);
      assertThat(memory.tryReserve(b.readableBytes())).isTrue();
      assertThat(split.append(b)).isEqualTo(Status.OK);
      expected.writeBytes(copy);
    }
    split.flushNow();
    return expected.toByteArray();
  }

  /** A hook that waits, once entered, until the test lets it go. */
  private CountDownLatch holdWritebacks(DataDirectory d, CountDownLatch entered) {
    return hookWritebacks(d, entered, false);
  }

  /** A hook that, once entered, waits until the test lets it go, then fails the writeback. */
  private CountDownLatch failWritebacks(DataDirectory d, CountDownLatch entered) {
    return hookWritebacks(d, entered, true);
  }

  private CountDownLatch hookWritebacks(DataDirectory d, CountDownLatch entered, boolean fail) {
    CountDownLatch release = new CountDownLatch(1);
    releases.add(release);
    d.writeback()
        .beforeForce(
            file -> {
              entered.countDown();
              try {
                release.await();
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                if (!fail) {
                  throw new IOException(e);
                }
              }
              if (fail) {
                throw new IOException("injected: Input/output error");
              }
            });
    return release;
  }

  /** Descriptors this JVM holds open on files under the test directory. */
  private List<Path> openFiles() throws IOException {
    Path real = tmp.toRealPath();
    try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
      return fds.map(
              fd -> {
                try {
                  return Files.readSymbolicLink(fd);
                } catch (IOException e) {
                  return fd; // closed meanwhile
                }
              })
          .filter(p -> p.startsWith(real) || p.startsWith(tmp))
          .collect(Collectors.toList());
    }
  }

  @Test
  void aSplitPastTheThresholdIsWrittenBackBeforeItsCommitAndCommitsTheSameBytes() throws Exception {
    start(1, Integer.toString(THRESHOLD));
    List<Long> sizesAtForce = new CopyOnWriteArrayList<>();
    CountDownLatch forced = new CountDownLatch(1);
    dir(0)
        .writeback()
        .beforeForce(
            file -> {
              sizesAtForce.add(Files.size(file));
              forced.countDown();
            });
    ReducePartitionSplit split = dirs.newSplit(new SplitKey("app", 1, 7, 0));
    byte[] expected = push(split, 3 * THRESHOLD);
    assertThat(forced.await(1, TimeUnit.MINUTES)).isTrue();

    CommittedSplitFile file = split.commit().get(1, TimeUnit.MINUTES);

    assertThat(sizesAtForce.get(0)).isGreaterThanOrEqualTo(THRESHOLD);
    assertThat(metrics.writebacks().getCount()).isGreaterThanOrEqualTo(1);
    assertThat(metrics.writebackBytes().getCount()).isGreaterThanOrEqualTo(THRESHOLD);
    assertThat(batchesOf(file.path())).isEqualTo(expected);
    assertThat(file.length()).isEqualTo(expected.length);
    assertThat(memory.held()).isZero();
    assertThat(dir(0).health()).isEqualTo(DataDirectory.Health.HEALTHY);
    assertThat(openFiles()).isEmpty();
  }

  @Test
  void noWritebackWhenOffOrBelowTheThreshold() throws Exception {
    start(1, "0");
    ReducePartitionSplit off = dirs.newSplit(new SplitKey("app", 1, 1, 0));
    byte[] expected = push(off, 3 * THRESHOLD);
    assertThat(batchesOf(off.commit().get(1, TimeUnit.MINUTES).path())).isEqualTo(expected);
    assertThat(metrics.writebacks().getCount()).isZero();
    dirs.close();

    start(1, "1m");
    ReducePartitionSplit below = dirs.newSplit(new SplitKey("app", 1, 2, 0));
    push(below, 3 * THRESHOLD);
    below.commit().get(1, TimeUnit.MINUTES);
    assertThat(metrics.writebacks().getCount()).isZero();
  }

  @Test
  void commitWaitsForARunningWritebackOfItsFileThenRenames() throws Exception {
    start(1, Integer.toString(THRESHOLD));
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch release = holdWritebacks(dir(0), entered);
    ReducePartitionSplit split = dirs.newSplit(new SplitKey("app", 1, 3, 0));
    byte[] expected = push(split, 2 * THRESHOLD);
    assertThat(entered.await(1, TimeUnit.MINUTES)).isTrue();
    Path inProgress = inProgressFile();

    CompletableFuture<CommittedSplitFile> commit = split.commit();
    assertThat(commit).isNotDone(); // it cannot finish while the writeback holds the file
    assertThat(inProgress).exists();
    release.countDown();

    CommittedSplitFile file = commit.get(1, TimeUnit.MINUTES);
    assertThat(batchesOf(file.path())).isEqualTo(expected);
    assertThat(metrics.writebacks().getCount()).isEqualTo(1); // the force ran on an open file
    assertThat(dir(0).health()).isEqualTo(DataDirectory.Health.HEALTHY);
    assertThat(openFiles()).isEmpty();
  }

  @Test
  void discardWhileAWritebackRunsClosesAndDeletesTheFile() throws Exception {
    start(1, Integer.toString(THRESHOLD));
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch release = holdWritebacks(dir(0), entered);
    ReducePartitionSplit split = dirs.newSplit(new SplitKey("app", 1, 4, 0));
    push(split, 2 * THRESHOLD);
    assertThat(entered.await(1, TimeUnit.MINUTES)).isTrue();

    CompletableFuture<Void> discard = split.discard();
    release.countDown();
    discard.get(1, TimeUnit.MINUTES);

    assertThat(memory.held()).isZero();
    assertThat(dir(0).health()).isEqualTo(DataDirectory.Health.HEALTHY);
    assertThat(openFiles()).isEmpty();
    try (Stream<Path> files = Files.walk(tmp)) {
      assertThat(files.filter(Files::isRegularFile).count()).isZero();
    }
  }

  @Test
  void aCommitSkipsAQueuedWritebackOfItsFile() throws Exception {
    start(1, Integer.toString(THRESHOLD));
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch release = holdWritebacks(dir(0), entered);
    ReducePartitionSplit held = dirs.newSplit(new SplitKey("app", 1, 5, 0));
    push(held, 2 * THRESHOLD);
    assertThat(entered.await(1, TimeUnit.MINUTES)).isTrue();
    // the writeback thread is busy with the first file: the second one's writeback waits in line
    ReducePartitionSplit queued = dirs.newSplit(new SplitKey("app", 1, 6, 0));
    byte[] expected = push(queued, 2 * THRESHOLD);

    CommittedSplitFile file = queued.commit().get(1, TimeUnit.MINUTES);
    assertThat(batchesOf(file.path())).isEqualTo(expected);
    release.countDown();
    held.commit().get(1, TimeUnit.MINUTES);
    dirs.close(); // runs what is queued: the committed file's writeback is skipped
    assertThat(metrics.writebacks().getCount()).isEqualTo(1);
    assertThat(openFiles()).isEmpty();
  }

  @Test
  void aFailedWritebackFailsTheDirectoryAndTheSplitCommitsWholeOnAnother() throws Exception {
    start(2, Integer.toString(THRESHOLD));
    ReducePartitionSplit split = dirs.newSplit(new SplitKey("app", 1, 8, 0));
    DataDirectory first = dirs.all().stream().filter(d -> d.activeSplits() == 1).findFirst().get();
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch release = failWritebacks(first, entered);
    byte[] expected = push(split, 2 * THRESHOLD); // all taken: the failure is held until now
    assertThat(entered.await(1, TimeUnit.MINUTES)).isTrue();
    release.countDown();

    CommittedSplitFile file = split.commit().get(1, TimeUnit.MINUTES);

    assertThat(first.health()).isEqualTo(DataDirectory.Health.FAILED);
    assertThat(first.healthReason())
        .contains("writing back")
        .contains("8-0.data.inprogress")
        .contains("injected");
    assertThat(file.path().startsWith(first.root())).isFalse();
    assertThat(batchesOf(file.path())).isEqualTo(expected);
    assertThat(memory.held()).isZero();
    assertThat(openFiles()).isEmpty();
  }

  @Test
  void mapPartitionDataIsWrittenBackAndAFailureFailsTheDirectory() throws Exception {
    start(1, Integer.toString(THRESHOLD));
    List<Path> forcedFiles = new CopyOnWriteArrayList<>();
    CountDownLatch entered = new CountDownLatch(1);
    dir(0)
        .writeback()
        .beforeForce(
            file -> {
              forcedFiles.add(file);
              entered.countDown();
            });
    MapPartitionFile partition = dirs.newMapPartition(new MapPartitionId("app", 2, 0, 0), 2);
    byte[] expected = writeRegion(partition, 3 * THRESHOLD);
    assertThat(entered.await(1, TimeUnit.MINUTES)).isTrue();
    CommittedMapPartition committed = partition.commit(1).get(1, TimeUnit.MINUTES);
    assertThat(forcedFiles.get(0).getFileName().toString()).isEqualTo("map-0-0.data.inprogress");
    assertThat(batchesOf(committed.dataPath())).isEqualTo(expected);
    assertThat(metrics.writebacks().getCount()).isGreaterThanOrEqualTo(1);

    CountDownLatch failed = new CountDownLatch(1);
    CountDownLatch release = failWritebacks(dir(0), failed);
    MapPartitionFile broken = dirs.newMapPartition(new MapPartitionId("app", 2, 1, 0), 2);
    writeRegion(broken, 2 * THRESHOLD); // all taken: the failure is held until now
    assertThat(failed.await(1, TimeUnit.MINUTES)).isTrue();
    release.countDown();
    assertThat(broken.commit(1))
        .failsWithin(1, TimeUnit.MINUTES)
        .withThrowableOfType(Exception.class)
        .withMessageContaining("writing back")
        .withMessageContaining("injected");
    assertThat(dir(0).health()).isEqualTo(DataDirectory.Health.FAILED);
    assertThat(memory.held()).isZero();
    assertThat(openFiles()).isEmpty();
  }

  /** One region of frames of one block each, alternating subpartitions 0 and 1 in order. */
  private byte[] writeRegion(MapPartitionFile partition, int bytes) {
    ByteArrayOutputStream expected = new ByteArrayOutputStream();
    partition.startRegion(0, 2, false);
    for (int seq = 0; expected.size() < bytes; seq++) {
      ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer();
      int payload = 2000;
      MapBlockFormat.writeHeader(b, expected.size() < bytes / 2 ? 0 : 1, 0, payload, payload);
      for (int j = 0; j < payload; j++) {
        b.writeByte(seq + j);
      }
      MapBlockFormat.seal(b, 0);
      byte[] copy = new byte[b.readableBytes()];
      b.getBytes(0, copy);
      assertThat(memory.tryReserve(b.readableBytes())).isTrue();
      partition.append(0, seq, b);
      expected.writeBytes(copy);
    }
    partition.finishRegion(0);
    return expected.toByteArray();
  }

  private Path inProgressFile() throws IOException {
    try (Stream<Path> files = Files.walk(tmp)) {
      return files
          .filter(p -> p.getFileName().toString().endsWith(".inprogress"))
          .findFirst()
          .orElseThrow();
    }
  }

  /** The batches of a committed file, without the map-run trailer a split file ends with. */
  private static byte[] batchesOf(Path file) throws java.io.IOException {
    byte[] bytes = Files.readAllBytes(file);
    return java.util.Arrays.copyOf(bytes, SplitFileBytes.dataLength(bytes));
  }
}
