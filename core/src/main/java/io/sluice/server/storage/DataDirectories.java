package io.sluice.server.storage;

import io.netty.util.concurrent.DefaultThreadFactory;
import io.sluice.protocol.MapPartitionId;
import io.sluice.server.ServerConf;
import io.sluice.server.ServerMetrics;
import io.sluice.server.memory.MemoryAccount;
import io.sluice.server.memory.MemoryBudget;
import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server's data directories. New splits go to the healthy directory with the fewest splits
 * being written; a directory that fails is taken out of rotation and the splits open in it are
 * moved to a healthy one (their acknowledged data with them) and answer HARD_SPLIT from then on.
 */
public final class DataDirectories implements AutoCloseable {
  private volatile ApplicationQuota quota = ApplicationQuota.NONE;
  private static final Logger LOG = LoggerFactory.getLogger(DataDirectories.class);

  /** {@code <partition>-<epoch>.data}, optionally {@code .inprogress}: files this server wrote. */
  static final Pattern SPLIT_FILE = Pattern.compile("\\d+-\\d+\\.data(\\.inprogress)?");

  /**
   * A split file or a file derived from one ({@code .inprogress}, sort-on-read's {@code .sorted}
   * and {@code .sorted.index}, their {@code .tmp}); group 1 is the split file's name.
   */
  /** Map partition files; kept across a restart when committed and recorded. */
  private static final Pattern MAP_PARTITION_FILE =
      Pattern.compile("map-\\d+-\\d+\\.(data|index)(\\..+)?");

  private static final Pattern SPLIT_OR_DERIVED = Pattern.compile("(\\d+-\\d+\\.data)(\\..+)?");

  private final List<DataDirectory> dirs;
  private final MemoryBudget memory;
  private final ServerMetrics metrics;
  private final ServerConf conf;
  private final AtomicInteger roundRobin = new AtomicInteger();

  /** Map partitions created here and not yet committed or dropped. */
  private final AtomicInteger openMapPartitions = new AtomicInteger();

  /** The distributed tier, or null when sluice.storage.policy does not name hdfs. */
  private final DistributedTier distributed;

  /** Deletes the directories of unregistered shuffles and applications: file work, off loops. */
  private final ExecutorService deleter =
      Executors.newSingleThreadExecutor(new DefaultThreadFactory("sluice-deleter", true));

  /**
   * Creates the directories if needed. A previous run's files stay until {@link
   * #deleteLeftovers(Set)}, which the server calls once it knows from its state which to keep.
   *
   * @throws IOException naming the directory that cannot be created or written
   */
  public DataDirectories(ServerConf conf, MemoryBudget memory, ServerMetrics metrics)
      throws IOException {
    List<DataDirectory> list = new ArrayList<>();
    for (Path root : conf.dirs()) {
      try {
        OwnerOnly.directory(root);
      } catch (IOException e) {
        throw new IOException("Cannot create data directory " + root + ": " + e, e);
      }
      if (!Files.isWritable(root)) {
        throw new IOException("Data directory " + root + " is not writable");
      }
      DataDirectory dir =
          new DataDirectory(
              root,
              conf.flusherThreads(),
              metrics.directoryBytesFlushed(root),
              conf.writebackBytes(),
              metrics.writebacks(),
              metrics.writebackBytes());
      metrics.registerDirectory(dir);
      list.add(dir);
    }
    this.dirs = List.copyOf(list);
    this.memory = memory;
    this.metrics = metrics;
    this.conf = conf;
    checkAll();
    this.distributed =
        conf.storagePolicy().uses(StoragePolicy.Tier.HDFS) ? openDistributed(conf, metrics) : null;
  }

  private static DistributedTier openDistributed(ServerConf conf, ServerMetrics metrics)
      throws IOException {
    try {
      return DistributedTier.open(conf, metrics);
    } catch (LinkageError e) {
      throw new IOException(
          "sluice.storage.policy names hdfs, but Hadoop's FileSystem classes are not on the"
              + " server's class path ("
              + e
              + "): run the daemon with HADOOP_CLASSPATH set (bin/shuffle-daemon adds the output"
              + " of 'hadoop classpath' when the hadoop command is found), or drop hdfs from the"
              + " policy",
          e);
    }
  }

  /**
   * Where a split just committed lives from now on: the distributed tier when the policy sends it
   * there (see {@link DistributedTier#wants}) or its application asked for it ({@code everySplit}),
   * otherwise where it is. Completes with the split as it is then; never exceptionally.
   */
  CompletableFuture<CommittedSplitFile> place(CommittedSplitFile file, boolean everySplit) {
    if (distributed == null || !distributed.wants(file, directoryOf(file.path()), everySplit)) {
      return CompletableFuture.completedFuture(file);
    }
    return distributed.moveThere(file);
  }

  /** The tiers committed splits may live in ({@code sluice.storage.policy}). */
  public StoragePolicy storagePolicy() {
    return conf.storagePolicy();
  }

  /** This server's directory in the distributed tier, or null without that tier. */
  public String distributedTierRoot() {
    return distributed == null ? null : distributed.root();
  }

  /** Deletes a split's file in the distributed tier (its shuffle went while it was moved there). */
  void deleteRemoteFile(String uri) {
    if (distributed != null) {
      distributed.deleteFile(uri);
    }
  }

  /**
   * Restart: why a recorded split of the distributed tier cannot be served, or null when it can.
   */
  public String remoteProblem(String uri) {
    if (distributed == null) {
      return "it is in the distributed tier ("
          + uri
          + ") but sluice.storage.policy no longer names hdfs";
    }
    if (!uri.startsWith(distributed.root() + "/")) {
      return "its file "
          + uri
          + " is not under this server's directory "
          + distributed.root()
          + " of the distributed tier (did sluice.storage.hdfs.dir change?)";
    }
    // the file itself is not checked: a file system that is down at the restart must neither
    // hold the start nor declare data lost; a reader that finds the file gone fails its read,
    // and the engine recomputes
    return null;
  }

  /**
   * At start: deletes the files of this server's directory in the distributed tier that {@code
   * keep} (URIs the state store refers to) does not name, waiting at most 30 s for the file system
   * (see {@link DistributedTier#deleteLeftovers}).
   *
   * @return the number of files deleted
   */
  public int deleteRemoteLeftovers(Set<String> keep) {
    return distributed == null ? 0 : distributed.deleteLeftovers(keep, 30_000);
  }

  public List<DataDirectory> all() {
    return dirs;
  }

  /**
   * Total size of the file systems the data directories are on, each counted once (what {@code
   * sluice.app.maxDiskShare} is a share of); 0 when none can be read.
   */
  public long capacityBytes() {
    Set<FileStore> stores = new HashSet<>();
    long total = 0;
    for (DataDirectory d : dirs) {
      try {
        FileStore store = Files.getFileStore(d.root());
        if (stores.add(store)) {
          total += store.getTotalSpace();
        }
      } catch (IOException e) {
        LOG.warn("Cannot read the size of the file system of {}: {}", d.root(), e.toString());
      }
    }
    return total;
  }

  /**
   * Asks {@code quota} how many writers each application may have open before opening one (set
   * once, before the server serves).
   */
  public void limitWriters(ApplicationQuota quota) {
    this.quota = quota;
  }

  /**
   * A new split on the least busy healthy directory (ties broken round robin).
   *
   * @throws StorageUnavailableException when every directory is failed or full, or when {@code
   *     sluice.server.maxOpenWriters} splits and map partitions are being written already (the push
   *     goes elsewhere, HARD_SPLIT)
   * @throws QuotaExceededException when the application writes as many as it may already
   */
  public ReducePartitionSplit newSplit(SplitKey key) {
    checkWriterRoom(key);
    MemoryAccount account = openWriter(key.appId(), key);
    try {
      return new ReducePartitionSplit(key, pickFor(key), this, account, metrics, conf);
    } catch (RuntimeException e) {
      account.writerClosed();
      throw e;
    }
  }

  private void checkWriterRoom(Object what) {
    int open = openMapPartitions.get();
    for (DataDirectory d : dirs) {
      open += d.activeSplits();
    }
    if (open >= conf.maxOpenWriters()) {
      throw new StorageUnavailableException(
          "this server is writing "
              + open
              + " splits and map partitions, its maximum (sluice.server.maxOpenWriters); "
              + what
              + " goes to another location");
    }
  }

  /** Counts a new writer, {@code what}, in its application's account, within its limit. */
  private MemoryAccount openWriter(String appId, Object what) {
    MemoryAccount account = memory.account(appId);
    int max = quota.maxOpenWriters(appId);
    if (!account.tryOpenWriter(max)) {
      throw new QuotaExceededException(quota.openWritersRefusal(appId, max, what.toString()));
    }
    return account;
  }

  /** A map partition created by {@link #newMapPartition} is committed or dropped. */
  void mapPartitionWritten(MemoryAccount account) {
    openMapPartitions.decrementAndGet();
    account.writerClosed();
  }

  /**
   * A new map partition on the least busy healthy directory.
   *
   * @throws StorageUnavailableException when every directory is failed or full
   * @throws QuotaExceededException when the application writes as many as it may already
   */
  MapPartitionFile newMapPartition(MapPartitionId key, int numSubpartitions) {
    checkWriterRoom(key);
    MemoryAccount account = openWriter(key.appId(), key);
    MapPartitionFile file;
    try {
      file =
          new MapPartitionFile(
              key, numSubpartitions, pickFor(key), this, account, metrics, conf.commitFsync());
    } catch (RuntimeException e) {
      account.writerClosed();
      throw e;
    }
    openMapPartitions.incrementAndGet();
    return file;
  }

  /**
   * Application {@code appId} is gone: its memory account is no longer listed for flow control
   * (what its splits still release goes back to the budget), and a new registration opens a new
   * one.
   */
  void closeMemoryAccount(String appId) {
    memory.closeAccount(appId);
  }

  /** Restart: serves a map partition committed before the server stopped. */
  MapPartitionFile restoredMapPartition(CommittedMapPartition committed) {
    return MapPartitionFile.restored(
        committed, committed.directory(), this, memory.account(committed.key().appId()), metrics);
  }

  /**
   * The directory {@code file} is in as this server lays out its files ({@code
   * <dir>/<appId>/<shuffleId>/<file>}), or null.
   */
  public DataDirectory directoryOf(Path file) {
    Path f = file.toAbsolutePath().normalize();
    for (DataDirectory d : dirs) {
      Path root = d.root().toAbsolutePath().normalize();
      if (f.startsWith(root) && root.relativize(f).getNameCount() == 3) {
        return d;
      }
    }
    return null;
  }

  /**
   * Counts a checksum failure that a reader found in {@code file} (see ReportChecksumFailure in
   * sluice.proto), or damage the server found itself: in the server's {@code checksumFailures} and
   * in the directory's, which becomes suspect after {@code sluice.integrity.suspectAfter} of them.
   */
  public void checksumFailure(Path file, String what) {
    metrics.checksumFailures().inc();
    DataDirectory dir = directoryOf(file);
    if (dir == null) {
      LOG.warn("{} fails its checks: {}", file, what);
      return;
    }
    boolean nowSuspect = dir.checksumFailure(conf.integrity().suspectAfter());
    LOG.warn(
        "{} fails its checks ({} failure(s) in {}): {}", file, dir.checksumFailures(), dir, what);
    if (nowSuspect) {
      LOG.error(
          "Data directory {} is suspect: readers reported {} checksum failures of its files"
              + " (sluice.integrity.suspectAfter {}); it keeps serving, check the disk",
          dir,
          dir.checksumFailures(),
          conf.integrity().suspectAfter());
    }
  }

  /** The directory for new data of {@code what}, or an exception naming why none can take it. */
  private DataDirectory pickFor(Object what) {
    DataDirectory best = pick(null);
    if (best == null) {
      throw new StorageUnavailableException(
          "no data directory can take "
              + what
              + ": "
              + dirs.stream()
                  .map(d -> d + " is " + d.health() + " (" + d.healthReason() + ")")
                  .collect(Collectors.joining(", ")));
    }
    return best;
  }

  /** The least busy healthy directory other than {@code excluded}, or null. */
  DataDirectory pick(DataDirectory excluded) {
    int start = Math.floorMod(roundRobin.getAndIncrement(), dirs.size());
    DataDirectory best = null;
    for (int i = 0; i < dirs.size(); i++) {
      DataDirectory d = dirs.get((start + i) % dirs.size());
      if (d == excluded || d.health() != DataDirectory.Health.HEALTHY) {
        continue;
      }
      if (best == null || d.activeSplits() < best.activeSplits()) {
        best = d;
      }
    }
    return best;
  }

  /**
   * Checks every directory; the splits open in a directory that failed are moved to a healthy one
   * and refuse further data (HARD_SPLIT).
   */
  public void checkAll() {
    for (DataDirectory d : dirs) {
      DataDirectory.Health before = d.health();
      DataDirectory.Health after = d.check(conf.diskMaxUsage());
      if (after != before) {
        if (after == DataDirectory.Health.HEALTHY) {
          LOG.info("Data directory {} is healthy again", d);
        } else {
          LOG.warn("Data directory {} is {}: {}", d, after, d.healthReason());
        }
      }
      if (after == DataDirectory.Health.FAILED) {
        moveSplitsOff(d);
      }
    }
  }

  /**
   * Called when a write in {@code dir} failed with {@code cause}. A file or directory that is gone
   * ({@link NoSuchFileException}) is what deleting an application's files while one of its flushes
   * runs looks like (it was unregistered or expired): the directory is probed, and only if the
   * probe fails too is it taken out of rotation. A process out of file descriptors is not the
   * directory's fault: the writer fails alone. Any other failure takes it out at once.
   *
   * @return true when the directory was taken out of rotation (the writer moves elsewhere), false
   *     when it is healthy and only the writer's own file is gone (the writer fails alone)
   */
  boolean failed(DataDirectory dir, String reason, IOException cause) {
    if (FileDescriptors.exhausted(cause)) {
      LOG.error("A write in {} failed: {}: {}", dir, FileDescriptors.advice(), reason);
      return false;
    }
    if (cause instanceof NoSuchFileException
        && dir.check(conf.diskMaxUsage()) != DataDirectory.Health.FAILED) {
      LOG.info("A file in {} was deleted while it was written (its shuffle went): {}", dir, reason);
      return false;
    }
    if (dir.health() != DataDirectory.Health.FAILED) {
      LOG.warn("Data directory {} failed: {}", dir, reason);
    }
    dir.markFailed(reason);
    moveSplitsOff(dir);
    return true;
  }

  private void moveSplitsOff(DataDirectory dir) {
    for (ReducePartitionSplit split : new ArrayList<>(dir.activeSplitSet())) {
      split.moveOff(dir);
    }
  }

  /**
   * True when {@code file} is where this server puts a split file: {@code
   * <dir>/<appId>/<shuffleId>/<split file>} in one of its directories.
   */
  public boolean holds(Path file) {
    Path f = file.toAbsolutePath().normalize();
    for (DataDirectory d : dirs) {
      Path root = d.root().toAbsolutePath().normalize();
      if (f.startsWith(root)
          && root.relativize(f).getNameCount() == 3
          && SPLIT_FILE.matcher(f.getFileName().toString()).matches()) {
        return true;
      }
    }
    return false;
  }

  /**
   * At start: deletes every split file an earlier run left that is not in {@code keep} (the
   * committed files the state store refers to, as absolute normalized paths) with the files derived
   * from it, every {@code .inprogress} and {@code .tmp} file, and the directories left empty. The
   * derived files of a kept split (its sorted copy and index) stay.
   *
   * @return the number of files deleted
   */
  public int deleteLeftovers(Set<Path> keep) {
    int deleted = 0;
    for (DataDirectory d : dirs) {
      try (Stream<Path> walk = Files.walk(d.root(), 3)) {
        for (Path p : (Iterable<Path>) walk::iterator) {
          if (Files.isRegularFile(p)
              && d.root().relativize(p).getNameCount() == 3
              && isLeftover(p, keep)) {
            Files.deleteIfExists(p);
            deleted++;
          }
        }
      } catch (IOException e) {
        LOG.warn("Could not scan {} for leftover split files: {}", d, e.toString());
      }
      deleteEmptyDirs(d.root());
    }
    if (deleted > 0) {
      LOG.info("Deleted {} split file(s) left by an earlier run that no state refers to", deleted);
    }
    return deleted;
  }

  private static boolean isLeftover(Path file, Set<Path> keep) {
    String name = file.getFileName().toString();
    if (MAP_PARTITION_FILE.matcher(name).matches()) {
      return !keep.contains(file.toAbsolutePath().normalize());
    }
    Matcher m = SPLIT_OR_DERIVED.matcher(name);
    if (!m.matches()) {
      return false;
    }
    if (name.endsWith(ReducePartitionSplit.IN_PROGRESS_SUFFIX) || name.endsWith(".tmp")) {
      return true;
    }
    return !keep.contains(file.resolveSibling(m.group(1)).toAbsolutePath().normalize());
  }

  private static void deleteEmptyDirs(Path root) {
    try (Stream<Path> walk = Files.walk(root, 2)) {
      for (Path p :
          walk.filter(p -> !p.equals(root) && Files.isDirectory(p))
              .sorted(Comparator.reverseOrder())
              .collect(Collectors.toList())) {
        try (Stream<Path> children = Files.list(p)) {
          if (children.findAny().isEmpty()) {
            Files.deleteIfExists(p);
          }
        }
      }
    } catch (IOException e) {
      LOG.debug("Could not prune empty directories under {}: {}", root, e.toString());
    }
  }

  /**
   * Deletes {@code <dir>/<appId>/<shuffleId>} in every directory, on the deleter thread (never on
   * the caller's, which may be an event loop); completes when they are gone.
   */
  CompletableFuture<Void> deleteShuffleDirs(String appId, int shuffleId) {
    CompletableFuture<Void> local =
        onDeleter(
            () -> {
              for (DataDirectory d : dirs) {
                deleteTree(d.root().resolve(appId).resolve(Integer.toString(shuffleId)));
              }
            });
    return distributed == null
        ? local
        : CompletableFuture.allOf(local, distributed.deleteShuffle(appId, shuffleId));
  }

  /** Deletes {@code <dir>/<appId>} in every directory, on the deleter thread. */
  CompletableFuture<Void> deleteApplicationDirs(String appId) {
    CompletableFuture<Void> local =
        onDeleter(
            () -> {
              for (DataDirectory d : dirs) {
                deleteTree(d.root().resolve(appId));
              }
            });
    return distributed == null
        ? local
        : CompletableFuture.allOf(local, distributed.deleteApplication(appId));
  }

  /** Runs a deletion on the deleter thread; once it is shut down (the server stops), inline. */
  private CompletableFuture<Void> onDeleter(Runnable deletion) {
    try {
      return CompletableFuture.runAsync(deletion, deleter);
    } catch (RejectedExecutionException e) {
      deletion.run();
      return CompletableFuture.completedFuture(null);
    }
  }

  /**
   * Deletes {@code root} and everything under it. Files that vanish meanwhile (a flusher deleting
   * its own file) are not an error.
   */
  static void deleteTree(Path root) {
    if (!Files.exists(root)) {
      return;
    }
    try {
      Files.walkFileTree(
          root,
          new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
              delete(file);
              return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path file, IOException e) {
              if (!(e instanceof NoSuchFileException)) {
                LOG.warn("Could not delete {}: {}", file, e.toString());
              }
              return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path dir, IOException e) {
              delete(dir);
              return FileVisitResult.CONTINUE;
            }
          });
    } catch (NoSuchFileException e) {
      // deleted meanwhile
    } catch (IOException e) {
      LOG.warn("Could not delete {}: {}", root, e.toString());
    }
  }

  private static void delete(Path p) {
    try {
      Files.deleteIfExists(p);
    } catch (IOException e) {
      LOG.warn("Could not delete {}: {}", p, e.toString());
    }
  }

  @Override
  public void close() {
    if (distributed != null) {
      distributed.close();
    }
    deleter.shutdown();
    for (DataDirectory d : dirs) {
      d.close();
    }
  }
}
