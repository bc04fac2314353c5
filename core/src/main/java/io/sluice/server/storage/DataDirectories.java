package io.sluice.server.storage;

import io.sluice.server.ServerConf;
import io.sluice.server.ServerMetrics;
import io.sluice.server.memory.MemoryBudget;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The server's data directories; new splits go to the one with the fewest splits being written. */
public final class DataDirectories implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(DataDirectories.class);

  private final List<DataDirectory> dirs;
  private final MemoryBudget memory;
  private final ServerMetrics metrics;
  private final ServerConf conf;
  private final AtomicInteger roundRobin = new AtomicInteger();

  /**
   * Creates the directories if needed.
   *
   * @throws IOException naming the directory that cannot be created or written
   */
  public DataDirectories(ServerConf conf, MemoryBudget memory, ServerMetrics metrics)
      throws IOException {
    List<DataDirectory> list = new ArrayList<>();
    for (Path root : conf.dirs()) {
      try {
        Files.createDirectories(root);
      } catch (IOException e) {
        throw new IOException("Cannot create data directory " + root + ": " + e, e);
      }
      if (!Files.isWritable(root)) {
        throw new IOException("Data directory " + root + " is not writable");
      }
      list.add(new DataDirectory(root, conf.flusherThreads()));
    }
    this.dirs = List.copyOf(list);
    this.memory = memory;
    this.metrics = metrics;
    this.conf = conf;
  }

  public List<DataDirectory> all() {
    return dirs;
  }

  /** A new split on the least busy directory (ties broken round robin). */
  public ReducePartitionSplit newSplit(SplitKey key) {
    int start = Math.floorMod(roundRobin.getAndIncrement(), dirs.size());
    DataDirectory best = null;
    for (int i = 0; i < dirs.size(); i++) {
      DataDirectory d = dirs.get((start + i) % dirs.size());
      if (best == null || d.activeSplits() < best.activeSplits()) {
        best = d;
      }
    }
    return new ReducePartitionSplit(
        key, best, memory, metrics, conf.flushSize(), conf.chunkSize(), conf.commitFsync());
  }

  /** Deletes {@code <dir>/<appId>/<shuffleId>} in every directory. */
  public void deleteShuffleDirs(String appId, int shuffleId) {
    for (DataDirectory d : dirs) {
      deleteTree(d.root().resolve(appId).resolve(Integer.toString(shuffleId)));
    }
  }

  /** Deletes {@code <dir>/<appId>} in every directory. */
  public void deleteApplicationDirs(String appId) {
    for (DataDirectory d : dirs) {
      deleteTree(d.root().resolve(appId));
    }
  }

  static void deleteTree(Path root) {
    if (!Files.exists(root)) {
      return;
    }
    try (Stream<Path> walk = Files.walk(root)) {
      walk.sorted(Comparator.reverseOrder())
          .forEach(
              p -> {
                try {
                  Files.deleteIfExists(p);
                } catch (IOException e) {
                  LOG.warn("Could not delete {}: {}", p, e.toString());
                }
              });
    } catch (IOException e) {
      LOG.warn("Could not delete {}: {}", root, e.toString());
    }
  }

  @Override
  public void close() {
    for (DataDirectory d : dirs) {
      d.close();
    }
  }
}
