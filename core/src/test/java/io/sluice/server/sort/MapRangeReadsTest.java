package io.sluice.server.sort;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.codahale.metrics.MetricRegistry;
import io.sluice.protocol.BatchFormat;
import io.sluice.server.storage.CommittedSplitFile;
import io.sluice.server.storage.CommittedSplitFiles;
import io.sluice.server.storage.CommittedSplitFiles.Batch;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MapRangeReadsTest {
  @TempDir Path tmp;

  /** Runs submitted tasks only when told to, so a test decides when a sort happens. */
  private static final class ManualExecutor implements Executor {
    final Queue<Runnable> tasks = new ArrayDeque<>();

    @Override
    public synchronized void execute(Runnable task) {
      tasks.add(task);
    }

    synchronized int runAll() {
      int n = 0;
      Runnable r;
      while ((r = tasks.poll()) != null) {
        r.run();
        n++;
      }
      return n;
    }
  }

  private CommittedSplitFile split(String name) throws IOException {
    List<Batch> batches = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      batches.add(new Batch(i % 5, i / 5, new byte[100 + i]));
    }
    return CommittedSplitFiles.write(tmp.resolve(name), 0, batches);
  }

  @Test
  void concurrentRangeReadsWaitForOneSort() throws Exception {
    ManualExecutor executor = new ManualExecutor();
    MetricRegistry registry = new MetricRegistry();
    SortMetrics metrics = new SortMetrics(registry);
    MapRangeReads reads = new MapRangeReads(512, false, executor, Runnable::run, metrics);
    CommittedSplitFile split = split("0-0.data");

    List<CompletableFuture<CommittedSplitFile>> opens = new ArrayList<>();
    for (int start = 0; start < 4; start++) {
      opens.add(reads.open(split, start, start + 1));
    }
    assertThat(opens).allMatch(f -> !f.isDone());
    assertThat(metrics.waiting().getCount()).isEqualTo(4);
    assertThat(executor.runAll()).isEqualTo(1); // one sort task for four readers

    assertThat(metrics.sorts().getCount()).isEqualTo(1);
    assertThat(metrics.waiting().getCount()).isZero();
    byte[] sorted = Files.readAllBytes(SplitSorter.sortedPath(split));
    for (int start = 0; start < 4; start++) {
      CommittedSplitFile view = opens.get(start).get();
      assertThat(view.path()).isEqualTo(SplitSorter.sortedPath(split));
      List<Long> chunks = view.chunkOffsets();
      // eight batches of map `start`, each header + (100 + i) bytes, contiguous
      long expected = 0;
      for (int i = start; i < 40; i += 5) {
        expected += BatchFormat.HEADER_SIZE + 100 + i;
      }
      assertThat(chunks.get(chunks.size() - 1) - chunks.get(0)).isEqualTo(expected);
      assertThat(
              java.nio.ByteBuffer.wrap(
                      sorted, (int) (long) chunks.get(0) + BatchFormat.MAP_INDEX_OFFSET, 4)
                  .getInt())
          .isEqualTo(start);
    }

    // a later range read uses the sorted copy at once
    CompletableFuture<CommittedSplitFile> later = reads.open(split, 4, 5);
    assertThat(later).isDone();
    assertThat(executor.runAll()).isZero();
    assertThat(metrics.sorts().getCount()).isEqualTo(1);
  }

  @Test
  void plainReadsNeverSort() throws Exception {
    ManualExecutor executor = new ManualExecutor();
    SortMetrics metrics = new SortMetrics(new MetricRegistry());
    MapRangeReads reads = new MapRangeReads(512, false, executor, Runnable::run, metrics);
    CommittedSplitFile split = split("0-0.data");
    assertThat(reads.open(split, 0, Integer.MAX_VALUE).get()).isSameAs(split);
    assertThat(reads.open(split, 0, 5).get()).isSameAs(split);
    assertThat(executor.tasks).isEmpty();
    assertThat(Files.exists(SplitSorter.sortedPath(split))).isFalse();
    assertThat(metrics.rangeReads().getCount()).isZero();
  }

  @Test
  void failedSortIsRetriedByTheNextRangeRead() throws Exception {
    ManualExecutor executor = new ManualExecutor();
    SortMetrics metrics = new SortMetrics(new MetricRegistry());
    MapRangeReads reads = new MapRangeReads(512, false, executor, Runnable::run, metrics);
    CommittedSplitFile split = split("0-0.data");
    byte[] good = Files.readAllBytes(split.path());
    byte[] bad = good.clone();
    bad[BatchFormat.LENGTH_OFFSET] = 0x7f; // first batch claims far more payload than the file has
    Files.write(split.path(), bad);

    CompletableFuture<CommittedSplitFile> first = reads.open(split, 1, 2);
    executor.runAll();
    assertThatThrownBy(first::get)
        .isInstanceOf(ExecutionException.class)
        .hasMessageContaining("malformed batch");
    assertThat(metrics.failures().getCount()).isEqualTo(1);

    Files.write(split.path(), good);
    CompletableFuture<CommittedSplitFile> second = reads.open(split, 1, 2);
    executor.runAll();
    assertThat(second.get().path()).isEqualTo(SplitSorter.sortedPath(split));
    assertThat(metrics.sorts().getCount()).isEqualTo(1);
  }

  @Test
  void invalidRangeIsRefused() throws IOException {
    MapRangeReads reads =
        new MapRangeReads(
            512, false, Runnable::run, Runnable::run, new SortMetrics(new MetricRegistry()));
    CommittedSplitFile split = split("0-0.data");
    assertThatThrownBy(() -> reads.open(split, 3, 3))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("[3, 3)");
  }

  /** Batches of maps 0..4, five per map, interleaved in segments of five written in map order. */
  private CommittedSplitFile indexedSplit(String name) throws IOException {
    List<Batch> batches = new ArrayList<>();
    for (int segment = 0; segment < 5; segment++) {
      for (int m = 0; m < 5; m++) {
        batches.add(new Batch(m, segment, new byte[100 + m]));
      }
    }
    return CommittedSplitFiles.writeIndexed(tmp.resolve(name), 0, batches);
  }

  @Test
  void rangeReadsOfAnIndexedSplitReadItInPlaceWithoutSorting() throws Exception {
    ManualExecutor sorts = new ManualExecutor();
    SortMetrics metrics = new SortMetrics(new MetricRegistry());
    MapRangeReads reads = new MapRangeReads(512, false, sorts, Runnable::run, metrics);
    CommittedSplitFile split = indexedSplit("0-0.data");
    byte[] file = Files.readAllBytes(split.path());

    CommittedSplitFile view = reads.open(split, 1, 3).get();
    assertThat(sorts.tasks).isEmpty();
    assertThat(view.path()).isEqualTo(split.path());
    assertThat(Files.exists(SplitSorter.sortedPath(split))).isFalse();
    assertThat(metrics.indexedRangeReads().getCount()).isEqualTo(1);
    assertThat(metrics.sorts().getCount()).isZero();
    // five pieces (maps 1 and 2 of each segment), in file order, each holding maps 1 and 2 only
    var chunks = view.chunks();
    assertThat(chunks.numExtents()).isEqualTo(5);
    List<Integer> maps = new ArrayList<>();
    for (int c = 0; c < chunks.numChunks(); c++) {
      assertThat(chunks.chunkLength(c)).isLessThanOrEqualTo(512);
      for (int e = 0; e < chunks.extentCount(c); e++) {
        long pos = chunks.extentOffset(c, e);
        long end = pos + chunks.extentLength(c, e);
        while (pos < end) {
          java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(file);
          maps.add(b.getInt((int) pos + BatchFormat.MAP_INDEX_OFFSET));
          pos += BatchFormat.HEADER_SIZE + b.getInt((int) pos + BatchFormat.LENGTH_OFFSET);
        }
      }
    }
    assertThat(maps).containsExactly(1, 2, 1, 2, 1, 2, 1, 2, 1, 2);
  }

  @Test
  void scatteredRangesAndDamagedIndexesFallBackToSortOnRead() throws Exception {
    ManualExecutor sorts = new ManualExecutor();
    SortMetrics metrics = new SortMetrics(new MetricRegistry());
    MapRangeReads reads = new MapRangeReads(1 << 20, false, sorts, Runnable::run, metrics);

    // 200 tiny batches alternating between two maps: map 0 alone is 100 pieces of 124 bytes
    List<Batch> batches = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      batches.add(new Batch(i % 2, i, new byte[100]));
    }
    CommittedSplitFile scattered =
        CommittedSplitFiles.writeIndexed(tmp.resolve("1-0.data"), 1, batches);
    CompletableFuture<CommittedSplitFile> read = reads.open(scattered, 0, 1);
    assertThat(sorts.runAll()).isEqualTo(1);
    assertThat(read.get().path()).isEqualTo(SplitSorter.sortedPath(scattered));
    assertThat(read.get().chunks().numExtents()).isEqualTo(1);
    assertThat(read.get().chunks().totalLength()).isEqualTo(100L * (BatchFormat.HEADER_SIZE + 100));

    // a trailer whose CRC fails is not trusted: the split is sorted
    CommittedSplitFile damaged = indexedSplit("2-0.data");
    byte[] bytes = Files.readAllBytes(damaged.path());
    bytes[(int) damaged.length() + 1] ^= 0x40;
    Files.write(damaged.path(), bytes);
    CompletableFuture<CommittedSplitFile> fallback = reads.open(damaged, 4, 5);
    assertThat(sorts.runAll()).isEqualTo(1);
    assertThat(fallback.get().path()).isEqualTo(SplitSorter.sortedPath(damaged));
    assertThat(metrics.sorts().getCount()).isEqualTo(2);
    assertThat(metrics.indexedRangeReads().getCount()).isZero();

    // under sluice.read.sortMapRanges an indexed split is sorted too
    MapRangeReads alwaysSort = new MapRangeReads(512, true, sorts, Runnable::run, metrics);
    CommittedSplitFile indexed = indexedSplit("3-0.data");
    CompletableFuture<CommittedSplitFile> sortedRead = alwaysSort.open(indexed, 0, 1);
    assertThat(sorts.runAll()).isEqualTo(1);
    assertThat(sortedRead.get().path()).isEqualTo(SplitSorter.sortedPath(indexed));
  }
}
