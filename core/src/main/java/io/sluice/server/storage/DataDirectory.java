package io.sluice.server.storage;

import com.codahale.metrics.Meter;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One data directory: its flusher threads, its health and the splits being written in it.
 *
 * <p>Each split is pinned to one single-threaded flusher, so its writes, commit and deletion run in
 * submission order. The flusher queues are bounded by the memory budget: every queued flush holds
 * bytes reserved there.
 *
 * <p>Files written here are written back ahead of their commit by the directory's {@link Writeback}
 * thread.
 *
 * <p>Health: {@link #check} probes the directory (create, write, fsync, delete a small file) and
 * reads its file system's usage. A directory that fails the probe or a write is {@code FAILED}; one
 * past {@code sluice.disk.maxUsage} is {@code FULL}. Only {@code HEALTHY} directories take new
 * splits.
 */
public final class DataDirectory implements AutoCloseable {
  /** Whether the directory takes new splits. */
  public enum Health {
    HEALTHY,
    FULL,
    FAILED
  }

  static final String PROBE_FILE = ".sluice-probe";

  private final Path root;
  private final List<ExecutorService> flushers;
  private final AtomicInteger nextFlusher = new AtomicInteger();
  private final Set<ReducePartitionSplit> activeSplits = ConcurrentHashMap.newKeySet();
  private volatile Health health = Health.HEALTHY;
  private volatile String healthReason = "";
  private volatile double usage;
  private final AtomicLong checksumFailures = new AtomicLong();
  private volatile boolean suspect;

  private final Meter bytesFlushed;
  private final Writeback writeback;

  /**
   * @param writebackBytes unsynced bytes of a file that start its writeback; 0 turns it off
   */
  public DataDirectory(
      Path root,
      int flusherThreads,
      Meter bytesFlushed,
      long writebackBytes,
      Meter writebacks,
      Meter writebackBytesMeter) {
    this.root = root;
    this.bytesFlushed = bytesFlushed;
    this.writeback = new Writeback(root, writebackBytes, writebacks, writebackBytesMeter);
    List<ExecutorService> list = new ArrayList<>(flusherThreads);
    for (int i = 0; i < flusherThreads; i++) {
      list.add(
          Executors.newSingleThreadExecutor(
              new DefaultThreadFactory("sluice-flusher-" + root.getFileName() + "-" + i, true)));
    }
    this.flushers = List.copyOf(list);
  }

  public Path root() {
    return root;
  }

  /** Bytes written to split files in this directory. */
  public Meter bytesFlushed() {
    return bytesFlushed;
  }

  /**
   * The flusher a new split or map partition is pinned to (round robin). Once the server closes its
   * flushers, tasks run inline on the caller.
   */
  Executor assignFlusher() {
    ExecutorService flusher =
        flushers.get(Math.floorMod(nextFlusher.getAndIncrement(), flushers.size()));
    return task -> {
      try {
        flusher.execute(task);
      } catch (RejectedExecutionException e) {
        task.run();
      }
    };
  }

  /** Writes back the files being written here ahead of their commit. */
  Writeback writeback() {
    return writeback;
  }

  /** Splits currently being written here; new splits go to the directory with the fewest. */
  int activeSplits() {
    return activeSplits.size();
  }

  Set<ReducePartitionSplit> activeSplitSet() {
    return activeSplits;
  }

  public Health health() {
    return health;
  }

  /** Why the directory is not healthy; empty when it is. */
  public String healthReason() {
    return healthReason;
  }

  /** Fraction of the file system in use at the last check. */
  public double usage() {
    return usage;
  }

  /** Checksum failures readers reported against files in this directory. */
  public long checksumFailures() {
    return checksumFailures.get();
  }

  /**
   * True once {@code sluice.integrity.suspectAfter} checksum failures were reported against files
   * here: the disk may return bad data. Only a mark (logged, a metric): the directory keeps its
   * health, serving and taking data, since one bad file is as likely a bug or a bad client.
   */
  public boolean isSuspect() {
    return suspect;
  }

  /**
   * Counts a checksum failure of one of its files.
   *
   * @return true when this failure made the directory suspect
   */
  boolean checksumFailure(int suspectAfter) {
    long n = checksumFailures.incrementAndGet();
    if (n >= suspectAfter && !suspect) {
      synchronized (this) {
        if (!suspect) {
          suspect = true;
          return true;
        }
      }
    }
    return false;
  }

  /** Takes the directory out of rotation after a failed write. */
  void markFailed(String reason) {
    healthReason = reason;
    health = Health.FAILED;
  }

  /**
   * Probes the directory and updates its health.
   *
   * @return the health after the check
   */
  Health check(double maxUsage) {
    try {
      Files.createDirectories(root);
      Path probe = root.resolve(PROBE_FILE);
      try (FileChannel ch =
          FileChannel.open(
              probe,
              StandardOpenOption.CREATE,
              StandardOpenOption.TRUNCATE_EXISTING,
              StandardOpenOption.WRITE)) {
        ch.write(ByteBuffer.wrap(new byte[] {'s', 'l', 'u', 'i', 'c', 'e'}));
        ch.force(false);
      }
      Files.delete(probe);
      FileStore store = Files.getFileStore(root);
      long total = store.getTotalSpace();
      usage = total <= 0 ? 0 : 1.0 - (double) store.getUsableSpace() / total;
    } catch (IOException | RuntimeException e) {
      if (FileDescriptors.exhausted(e)) {
        // the process's limit, not the disk: the directory keeps the health it had
        healthReason = FileDescriptors.advice() + ": " + e;
        return health;
      }
      healthReason = "not writable: " + e;
      health = Health.FAILED;
      return health;
    }
    if (usage > maxUsage) {
      healthReason =
          String.format(
              "%.1f%% used, above sluice.disk.maxUsage (%.1f%%)", usage * 100, maxUsage * 100);
      health = Health.FULL;
    } else {
      healthReason = "";
      health = Health.HEALTHY;
    }
    return health;
  }

  /** Lets queued flushes finish, then stops the threads (the writeback's last). */
  @Override
  public void close() {
    for (ExecutorService flusher : flushers) {
      flusher.shutdown();
    }
    try {
      for (ExecutorService flusher : flushers) {
        flusher.awaitTermination(60, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    writeback.close();
  }

  @Override
  public String toString() {
    return root.toString();
  }
}
