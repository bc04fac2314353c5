package io.sluice.server.storage;

import io.netty.util.concurrent.DefaultThreadFactory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One data directory and its flusher threads. Each split is pinned to one single-threaded flusher,
 * so its flushes, commit and deletion run in submission order. The flusher queues are bounded by
 * the memory budget: every queued flush holds bytes reserved there.
 */
public final class DataDirectory implements AutoCloseable {
  private final Path root;
  private final List<ExecutorService> flushers;
  private final AtomicInteger nextFlusher = new AtomicInteger();
  private final AtomicInteger activeSplits = new AtomicInteger();

  public DataDirectory(Path root, int flusherThreads) {
    this.root = root;
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

  /** The flusher a new split is pinned to (round robin). */
  ExecutorService assignFlusher() {
    return flushers.get(Math.floorMod(nextFlusher.getAndIncrement(), flushers.size()));
  }

  /** Splits currently being written here; new splits go to the directory with the fewest. */
  int activeSplits() {
    return activeSplits.get();
  }

  void splitOpened() {
    activeSplits.incrementAndGet();
  }

  void splitClosed() {
    activeSplits.decrementAndGet();
  }

  /** Lets queued flushes finish, then stops the threads. */
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
  }

  @Override
  public String toString() {
    return root.toString();
  }
}
