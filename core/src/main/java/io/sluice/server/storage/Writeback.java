package io.sluice.server.storage;

import com.codahale.metrics.Meter;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The writeback of one data directory: once a file being written there holds {@code
 * sluice.flush.writebackBytes} written but not yet synced bytes, a {@code force(false)} of it runs
 * on this directory's writeback thread, so the kernel writes the data to disk while the stage goes
 * on and the commit's fsync finds little left to do. Java has no {@code sync_file_range}; an fsync
 * off the flusher threads is the nearest it has. Pushes and flushes never wait for it; only closing
 * a file (commit, move, discard) waits for a writeback of that file that is running.
 */
final class Writeback implements AutoCloseable {
  /** Runs just before a writeback's {@code force}; tests inject a pause or a disk failure. */
  interface BeforeForce {
    void run(Path file) throws IOException;
  }

  private final long thresholdBytes;
  private final Meter writebacks;
  private final Meter writebackBytes;
  private final ExecutorService thread;
  private volatile BeforeForce beforeForce = file -> {};

  /**
   * @param thresholdBytes written, unsynced bytes of one file that start its writeback; 0 turns it
   *     off
   */
  Writeback(Path root, long thresholdBytes, Meter writebacks, Meter writebackBytes) {
    this.thresholdBytes = thresholdBytes;
    this.writebacks = writebacks;
    this.writebackBytes = writebackBytes;
    this.thread =
        Executors.newSingleThreadExecutor(
            new DefaultThreadFactory("sluice-writeback-" + root.getFileName(), true));
  }

  /**
   * Starts tracking a file just opened for writing.
   *
   * @param onFailure called on the writeback thread when a writeback of the file fails: a disk
   *     failure like a failed write
   */
  FileWriteback track(FileChannel channel, Path file, Consumer<IOException> onFailure) {
    return new FileWriteback(this, channel, file, onFailure);
  }

  long thresholdBytes() {
    return thresholdBytes;
  }

  /** Tests only. */
  void beforeForce(BeforeForce hook) {
    this.beforeForce = hook;
  }

  /** Forces {@code channel}'s data (not its metadata) to disk, counting it. */
  void force(FileChannel channel, Path file, long bytes) throws IOException {
    beforeForce.run(file);
    channel.force(false);
    writebacks.mark();
    writebackBytes.mark(bytes);
  }

  /**
   * Queues a writeback.
   *
   * @return false when the directory is closing (the writeback is not needed then)
   */
  boolean submit(Runnable task) {
    try {
      thread.execute(task);
      return true;
    } catch (RejectedExecutionException e) {
      return false;
    }
  }

  /**
   * After the flushers stopped: lets queued writebacks run (they skip closed files), then stops.
   */
  @Override
  public void close() {
    thread.shutdown();
    try {
      thread.awaitTermination(60, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
