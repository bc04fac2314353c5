package io.sluice.server.storage;

import io.sluice.protocol.MapPartitionId;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A complete map partition: its data and index files, opened once and shared by every reader
 * (positional reads). Closed when the partition is released; reads after that fail.
 */
public final class CommittedMapPartition {
  private static final AtomicLong SEQUENCE = new AtomicLong();

  private final MapPartitionId key;
  private final Path dataPath;
  private final Path indexPath;
  private final int numSubpartitions;
  private final int numRegions;
  private final long length;
  private final long sequence = SEQUENCE.incrementAndGet();
  private final DataDirectory dir;

  // guarded by this
  private FileChannel data;
  private FileChannel index;
  private boolean closed;

  public CommittedMapPartition(
      MapPartitionId key,
      Path dataPath,
      Path indexPath,
      int numSubpartitions,
      int numRegions,
      long length,
      DataDirectory dir) {
    this.key = key;
    this.dir = dir;
    this.dataPath = dataPath;
    this.indexPath = indexPath;
    this.numSubpartitions = numSubpartitions;
    this.numRegions = numRegions;
    this.length = length;
  }

  public MapPartitionId key() {
    return key;
  }

  public Path dataPath() {
    return dataPath;
  }

  public Path indexPath() {
    return indexPath;
  }

  public int numSubpartitions() {
    return numSubpartitions;
  }

  public int numRegions() {
    return numRegions;
  }

  public long length() {
    return length;
  }

  /** The directory the files are in; its IO scheduler serves their reads. */
  public DataDirectory directory() {
    return dir;
  }

  /** Orders files for the IO scheduler: reads go in (sequence, offset) order. */
  public long sequence() {
    return sequence;
  }

  public synchronized FileChannel data() throws IOException {
    if (closed) {
      throw new IOException(key + " was released");
    }
    if (data == null) {
      data = FileChannel.open(dataPath, StandardOpenOption.READ);
    }
    return data;
  }

  public synchronized FileChannel index() throws IOException {
    if (closed) {
      throw new IOException(key + " was released");
    }
    if (index == null) {
      index = FileChannel.open(indexPath, StandardOpenOption.READ);
      int regions = MapPartitionIndex.check(index, numSubpartitions, key);
      if (regions != numRegions) {
        throw new IOException(
            "index of " + key + " holds " + regions + " regions, expected " + numRegions);
      }
    }
    return index;
  }

  /** Closes the shared files; later reads fail naming the partition. Idempotent. */
  synchronized void close() {
    closed = true;
    for (FileChannel ch : new FileChannel[] {data, index}) {
      if (ch != null) {
        try {
          ch.close();
        } catch (IOException e) {
          // nothing left to do with a file being dropped
        }
      }
    }
    data = null;
    index = null;
  }

  @Override
  public String toString() {
    return key.toString();
  }
}
