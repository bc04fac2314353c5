package io.sluice.server.storage;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/** What a committed split is: its file, length, chunk boundaries and the maps it holds. */
public final class CommittedSplitFile {
  private final SplitKey key;
  private final Path path;
  private final long length;
  private final List<Long> chunkOffsets;
  private final MapIndexSet mapIndexes;
  private final AtomicBoolean damageCounted = new AtomicBoolean();

  CommittedSplitFile(
      SplitKey key, Path path, long length, List<Long> chunkOffsets, MapIndexSet mapIndexes) {
    this.key = key;
    this.path = path;
    this.length = length;
    this.chunkOffsets = List.copyOf(chunkOffsets);
    this.mapIndexes = mapIndexes.copy();
  }

  /**
   * The same split served from another file with other chunk boundaries (a map-range read of its
   * sorted copy, see {@code io.sluice.server.sort}); the map set is the split's.
   */
  public static CommittedSplitFile view(
      CommittedSplitFile split, Path path, List<Long> chunkOffsets) {
    return new CommittedSplitFile(split.key, path, split.length, chunkOffsets, split.mapIndexes);
  }

  public SplitKey key() {
    return key;
  }

  public Path path() {
    return path;
  }

  public long length() {
    return length;
  }

  /**
   * True only the first time it is called: damage the server finds in this file (every chunk of a
   * truncated file fails) counts once against its directory.
   */
  public boolean firstDamageReport() {
    return damageCounted.compareAndSet(false, true);
  }

  /** n+1 offsets for n chunks; chunk i is [offsets[i], offsets[i+1]). */
  public List<Long> chunkOffsets() {
    return chunkOffsets;
  }

  public int numChunks() {
    return chunkOffsets.size() - 1;
  }

  /**
   * A copy of the set of map indexes that have batches in this split (it may claim more, never
   * fewer; its first and last are exact: see {@link MapIndexSet}).
   */
  public MapIndexSet mapIndexes() {
    return mapIndexes.copy();
  }
}
