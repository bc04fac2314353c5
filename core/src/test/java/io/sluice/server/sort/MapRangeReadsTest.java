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
    MapRangeReads reads = new MapRangeReads(512, executor, metrics);
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
    MapRangeReads reads = new MapRangeReads(512, executor, metrics);
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
    MapRangeReads reads = new MapRangeReads(512, executor, metrics);
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
        new MapRangeReads(512, Runnable::run, new SortMetrics(new MetricRegistry()));
    CommittedSplitFile split = split("0-0.data");
    assertThatThrownBy(() -> reads.open(split, 3, 3))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("[3, 3)");
  }
}
