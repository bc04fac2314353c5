package io.sluice.server.sort;

import com.codahale.metrics.MetricRegistry;
import com.codahale.metrics.Timer;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.sluice.server.storage.CommittedSplitFile;
import io.sluice.server.storage.MapIndexSet;
import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves map-index range reads of committed splits (AQE skew-join splits, local shuffle reader
 * specs) with sort-on-read. A read whose range covers every map of a split is a plain read and
 * never sorts. The first range read of a split sorts it ({@link SplitSorter}) on the injected sort
 * executor, never on a network thread; concurrent range reads of the same split wait for that one
 * sort; later range reads use the sorted copy at once, each reading one contiguous byte range of
 * it. A failed sort is forgotten, so the next range read tries again.
 *
 * <p>Bounds: at most {@value #MAX_CACHED_INDEXES} indexes of finished sorts are kept in memory
 * (least recently used go first; an evicted index is read back from its file); sorts in progress
 * are never evicted, and there is at most one per split. The executor bounds how many sorts run at
 * once. Thread safe.
 */
public final class MapRangeReads implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(MapRangeReads.class);
  static final int MAX_CACHED_INDEXES = 4096;
  static final int MAX_SORT_THREADS = 4;

  private final SplitSorter sorter;
  private final Executor sortExecutor;
  private final SortMetrics metrics;
  private final ExecutorService ownExecutor;
  // guarded by itself; access order for LRU eviction of completed entries
  private final Map<SplitVersion, CompletableFuture<SortedSplitIndex>> indexes =
      new LinkedHashMap<>(64, 0.75f, true);

  /**
   * @param chunkSize bytes per chunk of the sorted copy ({@code sluice.read.chunkSize})
   * @param sortExecutor runs sorts; its thread count bounds concurrent sorts
   */
  public MapRangeReads(long chunkSize, Executor sortExecutor, SortMetrics metrics) {
    this(chunkSize, sortExecutor, metrics, null);
  }

  private MapRangeReads(
      long chunkSize, Executor sortExecutor, SortMetrics metrics, ExecutorService ownExecutor) {
    this.sorter = new SplitSorter(chunkSize);
    this.sortExecutor = Objects.requireNonNull(sortExecutor, "sortExecutor");
    this.metrics = Objects.requireNonNull(metrics, "metrics");
    this.ownExecutor = ownExecutor;
  }

  /**
   * A server's range reads with their own sort threads: half the cores, at least 1 and at most
   * {@value #MAX_SORT_THREADS} (sorting is disk bound; more threads only make it seek), stopped by
   * {@link #close}.
   */
  public static MapRangeReads start(long chunkSize, MetricRegistry registry) {
    int threads =
        Math.max(1, Math.min(MAX_SORT_THREADS, Runtime.getRuntime().availableProcessors() / 2));
    ExecutorService executor =
        Executors.newFixedThreadPool(threads, new DefaultThreadFactory("sluice-sorter", true));
    return new MapRangeReads(chunkSize, executor, new SortMetrics(registry), executor);
  }

  /** Stops the sort threads this instance started; sorts in progress are abandoned. */
  @Override
  public void close() {
    if (ownExecutor != null) {
      ownExecutor.shutdownNow();
    }
  }

  /**
   * True when maps [startMapIndex, endMapIndex) include every map that has batches in the split:
   * the read is served from the split file as it is.
   */
  public static boolean isPlainRead(CommittedSplitFile split, int startMapIndex, int endMapIndex) {
    MapIndexSet maps = split.mapIndexes();
    if (maps.isEmpty()) {
      return true;
    }
    return startMapIndex <= maps.first() && endMapIndex > maps.last();
  }

  /**
   * What a read of maps [startMapIndex, endMapIndex) of the split streams: the split itself for a
   * plain read, else a view of its sorted copy whose chunks cover exactly the batches of those
   * maps. Completes on the sort executor when a sort was needed; fails with an {@link IOException}
   * naming the split when the sort fails.
   */
  public CompletableFuture<CommittedSplitFile> open(
      CommittedSplitFile split, int startMapIndex, int endMapIndex) {
    if (startMapIndex < 0 || endMapIndex <= startMapIndex) {
      throw new IllegalArgumentException(
          "invalid map range [" + startMapIndex + ", " + endMapIndex + ") for " + split.key());
    }
    if (isPlainRead(split, startMapIndex, endMapIndex)) {
      return CompletableFuture.completedFuture(split);
    }
    metrics.rangeReads().mark();
    CompletableFuture<SortedSplitIndex> index;
    try {
      index = indexOf(split);
    } catch (IOException e) {
      return CompletableFuture.failedFuture(e);
    }
    if (!index.isDone()) {
      metrics.waiting().inc();
      index.whenComplete((i, e) -> metrics.waiting().dec());
    }
    return index.thenApply(
        i ->
            CommittedSplitFile.view(
                split,
                SplitSorter.sortedPath(split),
                i.rangeChunkOffsets(startMapIndex, endMapIndex)));
  }

  /** The index of the split's sorted copy, sorting it first when needed (once per split). */
  private CompletableFuture<SortedSplitIndex> indexOf(CommittedSplitFile split) throws IOException {
    SplitVersion version = SplitVersion.of(split);
    CompletableFuture<SortedSplitIndex> future;
    synchronized (indexes) {
      future = indexes.get(version);
      if (future != null && !future.isCompletedExceptionally()) {
        return future;
      }
      future = new CompletableFuture<>();
      indexes.put(version, future);
      evictCompleted();
    }
    CompletableFuture<SortedSplitIndex> result = future;
    try {
      sortExecutor.execute(() -> loadOrSort(split, version, result));
    } catch (RuntimeException e) {
      forget(version, result);
      result.completeExceptionally(
          new IOException("cannot sort " + split.key() + ": the sort executor refused: " + e, e));
    }
    return result;
  }

  private void loadOrSort(
      CommittedSplitFile split, SplitVersion version, CompletableFuture<SortedSplitIndex> result) {
    try {
      SortedSplitIndex existing = SplitSorter.existing(split);
      if (existing != null) {
        result.complete(existing);
        return;
      }
      SortedSplitIndex index;
      try (Timer.Context ignored = metrics.latency().time()) {
        index = sorter.sort(split);
      }
      metrics.sorts().mark();
      metrics.bytesSorted().mark(split.length());
      LOG.debug(
          "Sorted {} ({} bytes, {} maps) for map-range reads",
          split.key(),
          split.length(),
          index.mapCount());
      result.complete(index);
    } catch (IOException | RuntimeException e) {
      metrics.failures().mark();
      LOG.error("Sort-on-read of {} failed: {}", split.key(), e.toString());
      forget(version, result);
      result.completeExceptionally(e);
    }
  }

  private void forget(SplitVersion version, CompletableFuture<SortedSplitIndex> future) {
    synchronized (indexes) {
      indexes.remove(version, future);
    }
  }

  /** Caller holds the lock. Drops the least recently used finished sorts beyond the bound. */
  private void evictCompleted() {
    int excess = indexes.size() - MAX_CACHED_INDEXES;
    var it = indexes.values().iterator();
    while (excess > 0 && it.hasNext()) {
      if (it.next().isDone()) {
        it.remove();
        excess--;
      }
    }
  }

  /** Indexes in memory (finished or in progress); for tests and metrics. */
  public int cachedIndexes() {
    synchronized (indexes) {
      return indexes.size();
    }
  }

  /**
   * Identifies one incarnation of a split file: path, length and the file's identity on disk, so a
   * file recreated under the same name (a shuffle id registered again) never finds a stale index.
   */
  private static final class SplitVersion {
    private final String path;
    private final long length;
    private final Object fileKey;
    private final long modifiedMillis;

    private SplitVersion(String path, long length, Object fileKey, long modifiedMillis) {
      this.path = path;
      this.length = length;
      this.fileKey = fileKey;
      this.modifiedMillis = modifiedMillis;
    }

    static SplitVersion of(CommittedSplitFile split) throws IOException {
      try {
        BasicFileAttributes a = Files.readAttributes(split.path(), BasicFileAttributes.class);
        return new SplitVersion(
            split.path().toString(), split.length(), a.fileKey(), a.lastModifiedTime().toMillis());
      } catch (IOException e) {
        throw new IOException(
            "cannot read " + split.key() + ": its file " + split.path() + " is gone: " + e, e);
      }
    }

    @Override
    public boolean equals(Object o) {
      if (!(o instanceof SplitVersion)) {
        return false;
      }
      SplitVersion v = (SplitVersion) o;
      return length == v.length
          && modifiedMillis == v.modifiedMillis
          && path.equals(v.path)
          && Objects.equals(fileKey, v.fileKey);
    }

    @Override
    public int hashCode() {
      return Objects.hash(path, length, fileKey, modifiedMillis);
    }
  }
}
