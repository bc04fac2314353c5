package io.sluice.server.storage;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.function.Consumer;

/**
 * The writeback of one file being written ({@link Writeback}): counts the bytes its flusher wrote
 * since the last writeback and, past the threshold, queues the next one; at most one is queued or
 * running per file. Its owner calls {@link #stop()} before it closes the channel: a queued
 * writeback is then skipped and a running one waited for, so a writeback never runs on a closed
 * channel nor races the commit's fsync and rename.
 */
final class FileWriteback {
  private final Writeback writeback;
  private final FileChannel channel;
  private final Path file;
  private final Consumer<IOException> onFailure;

  // the owner's flusher thread only
  private long unsynced;

  // guarded by this
  private boolean queued;
  private boolean running;
  private Thread runner;
  private boolean stopped;
  private IOException failure;

  FileWriteback(
      Writeback writeback, FileChannel channel, Path file, Consumer<IOException> onFailure) {
    this.writeback = writeback;
    this.channel = channel;
    this.file = file;
    this.onFailure = onFailure;
  }

  /** Flusher thread: {@code bytes} were just written to the file. Never waits. */
  void written(long bytes) {
    long threshold = writeback.thresholdBytes();
    unsynced += bytes;
    if (threshold <= 0 || unsynced < threshold) {
      return;
    }
    synchronized (this) {
      if (queued || stopped) {
        return; // the running one covers part; the next starts after it, at the next write
      }
      queued = true;
    }
    long covered = unsynced;
    unsynced = 0;
    if (!writeback.submit(() -> run(covered))) {
      synchronized (this) {
        queued = false;
      }
    }
  }

  /**
   * Writeback thread. A failure is reported to the owner before the writeback counts as finished,
   * so an owner that {@linkplain #stop() stopped} it sees the failure's consequences.
   */
  private void run(long bytes) {
    synchronized (this) {
      queued = false;
      if (stopped) {
        return;
      }
      running = true;
      runner = Thread.currentThread();
    }
    try {
      writeback.force(channel, file, bytes);
    } catch (IOException e) {
      synchronized (this) {
        failure = e;
      }
      onFailure.accept(e);
    } finally {
      synchronized (this) {
        running = false;
        runner = null;
        notifyAll();
      }
    }
  }

  /**
   * Flusher thread, before the channel is closed: no writeback of this file starts any more, and
   * one that is running has finished when this returns. Never interrupted: the channel must not
   * close under a running {@code force}.
   *
   * @return the failure of a writeback of this file, or null
   */
  IOException stop() {
    boolean interrupted = false;
    IOException failed;
    synchronized (this) {
      stopped = true;
      // the failure handler closing the file from the writeback itself (flushers already gone)
      while (running && runner != Thread.currentThread()) {
        try {
          wait();
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
      failed = failure;
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
    return failed;
  }

  /** Whether a writeback of this file is queued or running (tests). */
  synchronized boolean busy() {
    return queued || running;
  }
}
