package io.sluice.server.storage;

import io.sluice.protocol.ChunkExtents;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What a committed split is: its file, length, chunk boundaries and the maps it holds; or a view of
 * it that a map-range read streams: other chunks, possibly of another file (see {@link #view}).
 */
public final class CommittedSplitFile {
  private final SplitKey key;
  private final Path path;
  private final long length;
  private final ChunkExtents chunks;
  private final MapIndexSet mapIndexes;
  private final AtomicBoolean damageCounted = new AtomicBoolean();
  private final InMemorySplit inMemory;
  private final String remotePath;

  CommittedSplitFile(
      SplitKey key, Path path, long length, List<Long> chunkOffsets, MapIndexSet mapIndexes) {
    this(key, path, length, ChunkExtents.contiguous(chunkOffsets), mapIndexes, null, null);
  }

  /**
   * A split in the distributed tier: its file is {@code remotePath} (a Hadoop file system URI);
   * {@code path}, where it was committed locally, is gone.
   */
  CommittedSplitFile(
      SplitKey key,
      Path path,
      long length,
      List<Long> chunkOffsets,
      MapIndexSet mapIndexes,
      String remotePath) {
    this(key, path, length, ChunkExtents.contiguous(chunkOffsets), mapIndexes, null, remotePath);
  }

  /** A split committed in the memory tier: served from {@code inMemory} until written back. */
  CommittedSplitFile(
      SplitKey key,
      Path path,
      long length,
      List<Long> chunkOffsets,
      MapIndexSet mapIndexes,
      InMemorySplit inMemory) {
    this(key, path, length, ChunkExtents.contiguous(chunkOffsets), mapIndexes, inMemory, null);
  }

  private CommittedSplitFile(
      SplitKey key,
      Path path,
      long length,
      ChunkExtents chunks,
      MapIndexSet mapIndexes,
      InMemorySplit inMemory,
      String remotePath) {
    this.key = key;
    this.path = path;
    this.length = length;
    this.chunks = chunks;
    this.mapIndexes = mapIndexes.copy();
    this.inMemory = inMemory;
    this.remotePath = remotePath;
  }

  /** This split, now in the distributed tier at {@code uri}. */
  CommittedSplitFile movedTo(String uri) {
    return new CommittedSplitFile(key, path, length, chunks, mapIndexes, null, uri);
  }

  /**
   * The URI of the split's file in the distributed tier, or null for a split on this server (its
   * local file or the memory tier). Readers read such a split from there; the server does not.
   */
  public String remotePath() {
    return remotePath;
  }

  /**
   * The same split read as other chunks of {@code path} (the split's own file, or its sorted copy):
   * a map-range read, see {@code io.sluice.server.sort}; the map set is the split's.
   */
  public static CommittedSplitFile view(CommittedSplitFile split, Path path, ChunkExtents chunks) {
    return new CommittedSplitFile(
        split.key, path, split.length, chunks, split.mapIndexes, split.inMemory, split.remotePath);
  }

  /**
   * The split's bytes in the memory tier, or null for a split committed to its file; once {@link
   * InMemorySplit#isHeld()} is false they are in the file ({@link #path()}).
   */
  public InMemorySplit inMemory() {
    return inMemory;
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

  /**
   * n+1 offsets for n chunks; chunk i is [offsets[i], offsets[i+1]) of a split; of a view, where
   * each chunk starts (see {@link ChunkExtents#handleOffsets}).
   */
  public List<Long> chunkOffsets() {
    return chunks.handleOffsets();
  }

  /** The byte ranges of the file each chunk is read from. */
  public ChunkExtents chunks() {
    return chunks;
  }

  public int numChunks() {
    return chunks.numChunks();
  }

  /**
   * A copy of the set of map indexes that have batches in this split (it may claim more, never
   * fewer; its first and last are exact: see {@link MapIndexSet}).
   */
  public MapIndexSet mapIndexes() {
    return mapIndexes.copy();
  }
}
