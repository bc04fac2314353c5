package io.sluice.server.sort;

import com.codahale.metrics.MetricRegistry;
import com.codahale.metrics.Timer;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.sluice.protocol.ChunkExtents;
import io.sluice.protocol.MapRunIndex;
import io.sluice.server.storage.CommittedSplitFile;
import io.sluice.server.storage.InMemorySplit;
import io.sluice.server.storage.MapIndexSet;
import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.LinkedHashMap;
import java.util.List;
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
 * specs). A read whose range covers every map of a split is a plain read. Otherwise the split's
 * {@linkplain MapRunIndex map-run index} (the trailer its commit wrote; each flushed segment is in
 * map order) gives the range's byte ranges, at most one per segment, read in place: no sort, no
 * copy.
 *
 * <p>Sort-on-read is the fallback: for splits without a trailer (written before it existed, or with
 * too many runs), for ranges scattered over more than {@value #SCATTERED_EXTENTS} pieces averaging
 * under {@value #SCATTERED_AVERAGE_EXTENT} bytes (where one sequential copy beats many small
 * reads), and always under {@code sluice.read.sortMapRanges}. The first sorted read of a split
 * sorts it ({@link SplitSorter}) on the sort executor, never on a network thread; concurrent range
 * reads of the same split wait for that one sort; later range reads use the sorted copy at once,
 * each reading one contiguous byte range of it. A failed sort is forgotten, so the next range read
 * tries again.
 *
 * <p>Bounds: at most {@value #MAX_CACHED_INDEXES} indexes of finished sorts and {@value
 * #MAX_CACHED_RUNS} map runs (8 bytes each) are kept in memory, least recently used going first (an
 * evicted index is read back from its file); sorts in progress are never evicted, and there is at
 * most one per split. The sort executor bounds how many sorts run at once; trailers are read on the
 * index executor, so they never wait behind a sort. Thread safe.
 */
public final class MapRangeReads implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(MapRangeReads.class);
  static final int MAX_CACHED_INDEXES = 4096;
  static final int MAX_CACHED_RUNS = 1 << 21;
  static final int MAX_SORT_THREADS = 4;
  static final int SCATTERED_EXTENTS = 64;
  static final long SCATTERED_AVERAGE_EXTENT = 64 << 10;

  private final long chunkSize;
  private final boolean alwaysSort;
  private final SplitSorter sorter;
  private final Executor sortExecutor;
  private final Executor indexExecutor;
  private final SortMetrics metrics;
  private final List<ExecutorService> ownExecutors;
  // guarded by itself; access order for LRU eviction of completed entries
  private final Map<SplitVersion, CompletableFuture<SortedSplitIndex>> indexes =
      new LinkedHashMap<>(64, 0.75f, true);
  // guarded by itself; access order for LRU eviction of completed entries
  private final Map<SplitVersion, CachedRuns> runs = new LinkedHashMap<>(64, 0.75f, true);
  private long cachedRuns; // guarded by runs

  /**
   * @param chunkSize bytes per chunk of a range read ({@code sluice.read.chunkSize})
   * @param alwaysSort serve every range read from a sorted copy ({@code sluice.read.sortMapRanges})
   * @param sortExecutor runs sorts; its thread count bounds concurrent sorts
   * @param indexExecutor reads map-run trailers
   */
  public MapRangeReads(
      long chunkSize,
      boolean alwaysSort,
      Executor sortExecutor,
      Executor indexExecutor,
      SortMetrics metrics) {
    this(chunkSize, alwaysSort, sortExecutor, indexExecutor, metrics, List.of());
  }

  private MapRangeReads(
      long chunkSize,
      boolean alwaysSort,
      Executor sortExecutor,
      Executor indexExecutor,
      SortMetrics metrics,
      List<ExecutorService> ownExecutors) {
    this.chunkSize = chunkSize;
    this.alwaysSort = alwaysSort;
    this.sorter = new SplitSorter(chunkSize);
    this.sortExecutor = Objects.requireNonNull(sortExecutor, "sortExecutor");
    this.indexExecutor = Objects.requireNonNull(indexExecutor, "indexExecutor");
    this.metrics = Objects.requireNonNull(metrics, "metrics");
    this.ownExecutors = ownExecutors;
  }

  /**
   * A server's range reads with their own threads: sort threads, half the cores, at least 1 and at
   * most {@value #MAX_SORT_THREADS} (sorting is disk bound; more threads only make it seek), and
   * one thread reading map-run trailers; stopped by {@link #close}.
   */
  public static MapRangeReads start(long chunkSize, boolean alwaysSort, MetricRegistry registry) {
    int threads =
        Math.max(1, Math.min(MAX_SORT_THREADS, Runtime.getRuntime().availableProcessors() / 2));
    ExecutorService sorts =
        Executors.newFixedThreadPool(threads, new DefaultThreadFactory("sluice-sorter", true));
    ExecutorService index =
        Executors.newSingleThreadExecutor(new DefaultThreadFactory("sluice-range-index", true));
    return new MapRangeReads(
        chunkSize, alwaysSort, sorts, index, new SortMetrics(registry), List.of(sorts, index));
  }

  /** Stops the threads this instance started; sorts in progress are abandoned. */
  @Override
  public void close() {
    for (ExecutorService e : ownExecutors) {
      e.shutdownNow();
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
   * plain read, else a view whose chunks cover exactly the batches of those maps, in the split's
   * file (from its map-run index) or in its sorted copy. Completes on another thread when the
   * trailer had to be read or a sort was needed; fails with an {@link IOException} naming the split
   * when the sort fails.
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
    InMemorySplit inMemory = split.inMemory();
    if (inMemory != null && inMemory.isHeld()) {
      // a range read works on the split's file (its index, or a sorted copy): write it first
      return inMemory.writeBack().thenCompose(v -> open(split, startMapIndex, endMapIndex));
    }
    metrics.rangeReads().mark();
    SplitVersion version;
    try {
      version = SplitVersion.of(split);
    } catch (IOException e) {
      return CompletableFuture.failedFuture(e);
    }
    if (alwaysSort) {
      return sorted(split, version, startMapIndex, endMapIndex);
    }
    return runsOf(split, version)
        .thenCompose(
            mapRuns -> {
              if (mapRuns != null) {
                ChunkExtents extents = mapRuns.range(startMapIndex, endMapIndex, chunkSize);
                if (!scattered(extents)) {
                  metrics.indexedRangeReads().mark();
                  return CompletableFuture.completedFuture(
                      CommittedSplitFile.view(split, split.path(), extents));
                }
                LOG.debug(
                    "Maps [{}, {}) of {} lie in {} pieces of {} bytes in all: sorting it",
                    startMapIndex,
                    endMapIndex,
                    split.key(),
                    extents.numExtents(),
                    extents.totalLength());
              }
              return sorted(split, version, startMapIndex, endMapIndex);
            });
  }

  /** True when reading the range in place would be many small reads: a sorted copy serves it. */
  static boolean scattered(ChunkExtents extents) {
    int n = extents.numExtents();
    return n > SCATTERED_EXTENTS && extents.totalLength() / n < SCATTERED_AVERAGE_EXTENT;
  }

  private CompletableFuture<CommittedSplitFile> sorted(
      CommittedSplitFile split, SplitVersion version, int startMapIndex, int endMapIndex) {
    CompletableFuture<SortedSplitIndex> index = indexOf(split, version);
    if (!index.isDone()) {
      metrics.waiting().inc();
      index.whenComplete((i, e) -> metrics.waiting().dec());
    }
    return index.thenApply(
        i ->
            CommittedSplitFile.view(
                split,
                SplitSorter.sortedPath(split),
                ChunkExtents.contiguous(i.rangeChunkOffsets(startMapIndex, endMapIndex))));
  }

  /**
   * The split's map runs, null when its file has no trailer or the trailer is damaged (then the
   * split is sorted, and the damage logged). Read once per split on the index executor.
   */
  private CompletableFuture<MapRunIndex> runsOf(CommittedSplitFile split, SplitVersion version) {
    CachedRuns cached;
    synchronized (runs) {
      cached = runs.get(version);
      if (cached != null) {
        return cached.future;
      }
      cached = new CachedRuns();
      runs.put(version, cached);
    }
    CachedRuns entry = cached;
    try {
      indexExecutor.execute(() -> loadRuns(split, version, entry));
    } catch (RuntimeException e) {
      synchronized (runs) {
        runs.remove(version, entry);
      }
      entry.future.complete(null);
    }
    return entry.future;
  }

  private void loadRuns(CommittedSplitFile split, SplitVersion version, CachedRuns entry) {
    MapRunIndex loaded = null;
    try {
      loaded = MapRunIndex.read(split.path(), split.length());
    } catch (IOException | RuntimeException e) {
      LOG.warn(
          "The map-run index of {} cannot be used, its range reads sort it instead: {}",
          split.key(),
          e.toString());
    }
    synchronized (runs) {
      if (runs.get(version) == entry) {
        entry.weight = loaded == null ? 1 : Math.max(1, loaded.runCount());
        cachedRuns += entry.weight;
        var it = runs.values().iterator();
        while (cachedRuns > MAX_CACHED_RUNS && it.hasNext()) {
          CachedRuns old = it.next();
          if (old != entry && old.future.isDone()) {
            it.remove();
            cachedRuns -= old.weight;
          }
        }
      }
    }
    entry.future.complete(loaded);
  }

  /** A split's map runs, read once; its weight counts against {@link #MAX_CACHED_RUNS}. */
  private static final class CachedRuns {
    final CompletableFuture<MapRunIndex> future = new CompletableFuture<>();
    long weight; // guarded by runs; 0 until loaded
  }

  /** The index of the split's sorted copy, sorting it first when needed (once per split). */
  private CompletableFuture<SortedSplitIndex> indexOf(
      CommittedSplitFile split, SplitVersion version) {
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
