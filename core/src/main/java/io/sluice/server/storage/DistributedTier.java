package io.sluice.server.storage;

import io.netty.util.concurrent.DefaultThreadFactory;
import io.sluice.server.ServerConf;
import io.sluice.server.ServerMetrics;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.zip.CRC32;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.RemoteIterator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The distributed storage tier ({@code sluice.storage.policy} names hdfs): committed splits moved
 * to a Hadoop file system, where readers read them directly, so they outlive this server.
 *
 * <p><b>Layout.</b> {@code
 * <sluice.storage.hdfs.dir>/<server>/<appId>/<shuffleId>/<partition>-<epoch>.data}, byte for byte
 * the split's local file (batches, then the map-run trailer); {@code <server>} is this server's
 * host and a hash of its data directories, stable across restarts and different for every server
 * sharing the directory, so a server only ever deletes its own files. A copy is written as {@code
 * ...data.inprogress}, synced ({@code hsync}), closed, checked for its length and renamed: a file
 * without the suffix is complete. Only then is the local file deleted.
 *
 * <p><b>Threads.</b> Copies and deletions run on {@code sluice.storage.hdfs.threads} threads of
 * their own, never on a network thread or a split's flusher. The class is only loaded when the
 * policy names hdfs, so a server without Hadoop on its class path runs every other tier.
 */
final class DistributedTier implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(DistributedTier.class);
  static final String IN_PROGRESS_SUFFIX = ".inprogress";

  private final FileSystem fs;
  private final org.apache.hadoop.fs.Path serverRoot;
  private final long minSplit;
  private final long copyTimeoutMillis;
  private final ServerMetrics metrics;
  private final ExecutorService copiers;

  private DistributedTier(
      FileSystem fs, org.apache.hadoop.fs.Path serverRoot, ServerConf conf, ServerMetrics metrics) {
    this.fs = fs;
    this.serverRoot = serverRoot;
    this.minSplit = conf.hdfsMinSplit();
    this.copyTimeoutMillis = conf.hdfsCopyTimeoutMillis();
    this.metrics = metrics;
    this.copiers =
        Executors.newFixedThreadPool(
            conf.hdfsThreads(), new DefaultThreadFactory("sluice-hdfs-tier", true));
  }

  /**
   * The tier at {@code sluice.storage.hdfs.dir}; this server's directory there is created on a
   * copier thread, off the start.
   *
   * @throws IOException naming the setting when no file system serves its URI
   */
  static DistributedTier open(ServerConf conf, ServerMetrics metrics) throws IOException {
    Configuration hadoop = new Configuration();
    for (Map.Entry<String, String> e : conf.hadoopSettings().entrySet()) {
      hadoop.set(e.getKey(), e.getValue());
    }
    URI root = URI.create(conf.hdfsDir());
    FileSystem fs;
    try {
      fs = FileSystem.get(root, hadoop);
    } catch (IOException | RuntimeException e) {
      throw new IOException(
          "Cannot reach the distributed tier sluice.storage.hdfs.dir=" + root + ": " + e, e);
    }
    org.apache.hadoop.fs.Path serverRoot =
        fs.makeQualified(
            new org.apache.hadoop.fs.Path(new org.apache.hadoop.fs.Path(root), serverName(conf)));
    DistributedTier tier = new DistributedTier(fs, serverRoot, conf, metrics);
    // off the start: a file system that is down must not keep the server (or the NodeManager
    // that hosts it) from starting; until it answers, copies fail and splits stay local
    tier.copiers.execute(
        () -> {
          try {
            fs.mkdirs(serverRoot);
            LOG.info(
                "Distributed tier at {}: splits of at least {} bytes go there",
                serverRoot,
                conf.hdfsMinSplit());
          } catch (IOException | RuntimeException e) {
            LOG.error(
                "Cannot create {} in the distributed tier (sluice.storage.hdfs.dir); splits stay on"
                    + " local disk until it can be written: {}",
                serverRoot,
                e.toString());
          }
        });
    return tier;
  }

  /** This server's directory name: its host and a hash of its data directories. */
  static String serverName(ServerConf conf) {
    CRC32 crc = new CRC32();
    for (java.nio.file.Path d : conf.dirs()) {
      crc.update(d.toAbsolutePath().normalize().toString().getBytes(StandardCharsets.UTF_8));
      crc.update(0);
    }
    String host = conf.advertisedHost().replaceAll("[^A-Za-z0-9.-]", "_");
    return host + "-" + String.format("%08x", crc.getValue());
  }

  /** This server's directory in the distributed tier, as a URI. */
  String root() {
    return serverRoot.toString();
  }

  /**
   * Whether a split just committed to {@code dir} goes to this tier: its application asked for
   * every split ({@code everySplit}), it is at least {@code sluice.storage.hdfs.minSplitSize}, or
   * its directory is past {@code sluice.disk.maxUsage}. Splits of the memory tier stay there.
   */
  boolean wants(CommittedSplitFile file, DataDirectory dir, boolean everySplit) {
    return file.inMemory() == null
        && file.remotePath() == null
        && (everySplit
            || file.length() >= minSplit
            || (dir != null && dir.health() == DataDirectory.Health.FULL));
  }

  /**
   * Copies the committed split's local file to this tier and deletes the local file, on a copier
   * thread. Completes with the split as it is now: in this tier, or still on local disk, served by
   * this server as before, when the copy failed or took longer than {@code
   * sluice.storage.hdfs.copyTimeout} (logged, counted; a copy that ends after that is deleted), so
   * a slow or hung file system never holds a stage's commit.
   */
  CompletableFuture<CommittedSplitFile> moveThere(CommittedSplitFile file) {
    CompletableFuture<CommittedSplitFile> placed = new CompletableFuture<>();
    // whoever sets it decides: the copy (moved) or the timeout (stays local)
    AtomicBoolean decided = new AtomicBoolean();
    try {
      copiers.execute(() -> placed.complete(copy(file, decided)));
    } catch (RejectedExecutionException e) {
      return CompletableFuture.completedFuture(file); // stopping: stays local
    }
    CompletableFuture.delayedExecutor(copyTimeoutMillis, TimeUnit.MILLISECONDS)
        .execute(
            () -> {
              if (decided.compareAndSet(false, true)) {
                metrics.hdfsTierFailures().mark();
                LOG.warn(
                    "Copying {} to the distributed tier took longer than {} ms"
                        + " (sluice.storage.hdfs.copyTimeout); it stays in {}",
                    file.key(),
                    copyTimeoutMillis,
                    file.path());
                placed.complete(file);
              }
            });
    return placed;
  }

  /**
   * The copy, on a copier thread. Whatever it does to the target (replace, rename) is inside {@code
   * copyTimeout}: the decision is taken after the rename, and a copy that lost it deletes the file
   * it renamed. The local file is deleted only once the copy won it. On an error the target is
   * deleted only when this copy renamed it there: a failing copy never takes away the file of an
   * earlier placement of the split (each split is placed once, see {@code ServerShuffle}).
   */
  private CommittedSplitFile copy(CommittedSplitFile file, AtomicBoolean decided) {
    SplitKey key = file.key();
    org.apache.hadoop.fs.Path target = splitPath(key);
    org.apache.hadoop.fs.Path inProgress = target.suffix(IN_PROGRESS_SUFFIX);
    boolean renamed = false;
    try {
      long size = Files.size(file.path());
      try (InputStream in = Files.newInputStream(file.path());
          FSDataOutputStream out = fs.create(inProgress, true)) {
        in.transferTo(out);
        out.hsync();
      }
      FileStatus written = fs.getFileStatus(inProgress);
      if (written.getLen() != size) {
        throw new IOException(
            inProgress + " holds " + written.getLen() + " bytes after the copy, expected " + size);
      }
      if (decided.get()) {
        // too late: the split was committed where it is
        deleteQuietly(inProgress);
        return file;
      }
      fs.delete(target, false);
      if (!fs.rename(inProgress, target)) {
        throw new IOException("renaming " + inProgress + " to " + target + " failed");
      }
      renamed = true;
      if (!decided.compareAndSet(false, true)) {
        // the timeout came during the rename: the split was committed where it is
        deleteQuietly(target);
        return file;
      }
      Files.deleteIfExists(file.path());
      metrics.hdfsTierSplits().mark();
      metrics.hdfsTierBytes().mark(size);
      LOG.debug("Moved {} ({} bytes) to {}", key, size, target);
      return file.movedTo(target.toString());
    } catch (IOException | RuntimeException e) {
      // renamed: this copy had decided (only the local delete follows the decision)
      if (decided.compareAndSet(false, true) || renamed) {
        metrics.hdfsTierFailures().mark();
        LOG.warn(
            "Could not move {} to the distributed tier at {}; it stays in {}: {}",
            key,
            target,
            file.path(),
            e.toString());
      }
      deleteQuietly(inProgress);
      if (renamed) {
        deleteQuietly(target); // this copy's own file; an earlier placement's is never touched
      }
      return file;
    }
  }

  private org.apache.hadoop.fs.Path splitPath(SplitKey key) {
    return new org.apache.hadoop.fs.Path(shuffleDir(key.appId(), key.shuffleId()), key.fileName());
  }

  private org.apache.hadoop.fs.Path shuffleDir(String appId, int shuffleId) {
    return new org.apache.hadoop.fs.Path(
        new org.apache.hadoop.fs.Path(serverRoot, appId), Integer.toString(shuffleId));
  }

  /** Deletes a shuffle's files in this tier, on a copier thread. */
  CompletableFuture<Void> deleteShuffle(String appId, int shuffleId) {
    return delete(shuffleDir(appId, shuffleId));
  }

  /** Deletes an application's files in this tier, on a copier thread. */
  CompletableFuture<Void> deleteApplication(String appId) {
    return delete(new org.apache.hadoop.fs.Path(serverRoot, appId));
  }

  /** Deletes one file in this tier (a split moved there after its shuffle went). */
  CompletableFuture<Void> deleteFile(String uri) {
    return delete(new org.apache.hadoop.fs.Path(uri));
  }

  private CompletableFuture<Void> delete(org.apache.hadoop.fs.Path path) {
    try {
      return CompletableFuture.runAsync(() -> deleteQuietly(path), copiers);
    } catch (RejectedExecutionException e) {
      deleteQuietly(path);
      return CompletableFuture.completedFuture(null);
    }
  }

  private void deleteQuietly(org.apache.hadoop.fs.Path path) {
    try {
      fs.delete(path, true);
    } catch (IOException | RuntimeException e) {
      LOG.warn("Could not delete {} in the distributed tier: {}", path, e.toString());
    }
  }

  /**
   * At start, before the server serves: deletes every file under this server's directory that
   * {@code keep} (URIs of the splits the state store refers to) does not name, for at most {@code
   * waitMillis}. A file system that does not answer in that time keeps the rest until the next
   * start: the scan stops before the server serves, so it never meets a file of a shuffle
   * registered since.
   *
   * @return the number of files deleted
   */
  int deleteLeftovers(Set<String> keep, long waitMillis) {
    AtomicBoolean stop = new AtomicBoolean();
    Future<Integer> scan;
    try {
      scan = copiers.submit(() -> scanLeftovers(keep, stop));
    } catch (RejectedExecutionException e) {
      return 0;
    }
    try {
      return scan.get(waitMillis, TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      stop.set(true);
      LOG.warn(
          "The distributed tier ({}) did not list this server's files within {} ms; files no"
              + " state refers to stay until the next start",
          serverRoot,
          waitMillis);
    } catch (ExecutionException e) {
      LOG.warn("Could not scan {} for leftover split files: {}", serverRoot, e.getCause());
    } catch (InterruptedException e) {
      stop.set(true);
      Thread.currentThread().interrupt();
    }
    return 0;
  }

  private int scanLeftovers(Set<String> keep, AtomicBoolean stop) throws IOException {
    int deleted = 0;
    if (!fs.exists(serverRoot)) {
      return 0;
    }
    RemoteIterator<LocatedFileStatus> files = fs.listFiles(serverRoot, true);
    while (!stop.get() && files.hasNext()) {
      org.apache.hadoop.fs.Path p = files.next().getPath();
      if (!stop.get() && !keep.contains(fs.makeQualified(p).toString())) {
        fs.delete(p, false);
        deleted++;
      }
    }
    if (stop.get()) {
      return deleted; // the start went on without us: no more listing either
    }
    for (FileStatus app : fs.listStatus(serverRoot)) {
      for (FileStatus shuffle : fs.listStatus(app.getPath())) {
        if (!stop.get() && fs.listStatus(shuffle.getPath()).length == 0) {
          fs.delete(shuffle.getPath(), false);
        }
      }
      if (!stop.get() && fs.listStatus(app.getPath()).length == 0) {
        fs.delete(app.getPath(), false);
      }
    }
    if (deleted > 0) {
      LOG.info(
          "Deleted {} file(s) in the distributed tier ({}) that no state refers to",
          deleted,
          serverRoot);
    }
    return deleted;
  }

  @Override
  public void close() {
    copiers.shutdown();
    try {
      if (!copiers.awaitTermination(30, TimeUnit.SECONDS)) {
        LOG.warn("Copies to the distributed tier still running after 30 s; leaving them");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    // FileSystem instances are cached and shared in the process (the NodeManager's too): not closed
  }
}
