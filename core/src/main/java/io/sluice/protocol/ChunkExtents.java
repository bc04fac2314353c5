package io.sluice.protocol;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * How a read stream of one file is cut into chunks: chunk {@code c} is one or more byte ranges
 * (extents) of the file, sent back to back as one response body. A whole split is one extent per
 * chunk ({@link #contiguous}); a map-range read served from a split's map-run index is the in-range
 * extents of every segment, packed into chunks of about the chunk size ({@link Builder}). Immutable
 * and thread safe.
 */
public final class ChunkExtents {
  private final long[] offsets;
  private final long[] lengths;
  // chunk c covers extents [firstExtent[c], firstExtent[c + 1])
  private final int[] firstExtent;

  private ChunkExtents(long[] offsets, long[] lengths, int[] firstExtent) {
    this.offsets = offsets;
    this.lengths = lengths;
    this.firstExtent = firstExtent;
  }

  /** One extent per chunk: chunk i is [chunkOffsets[i], chunkOffsets[i+1]). */
  public static ChunkExtents contiguous(List<Long> chunkOffsets) {
    int chunks = Math.max(0, chunkOffsets.size() - 1);
    long[] offsets = new long[chunks];
    long[] lengths = new long[chunks];
    int[] first = new int[chunks + 1];
    for (int i = 0; i < chunks; i++) {
      offsets[i] = chunkOffsets.get(i);
      lengths[i] = chunkOffsets.get(i + 1) - offsets[i];
      first[i + 1] = i + 1;
    }
    return new ChunkExtents(offsets, lengths, first);
  }

  public int numChunks() {
    return firstExtent.length - 1;
  }

  /** Extents of all chunks together. */
  public int numExtents() {
    return offsets.length;
  }

  public int extentCount(int chunk) {
    return firstExtent[chunk + 1] - firstExtent[chunk];
  }

  /** File offset of extent {@code k} of chunk {@code chunk}. */
  public long extentOffset(int chunk, int k) {
    return offsets[firstExtent[chunk] + k];
  }

  public long extentLength(int chunk, int k) {
    return lengths[firstExtent[chunk] + k];
  }

  /** Bytes of chunk {@code chunk}: the sum of its extents. */
  public long chunkLength(int chunk) {
    long n = 0;
    for (int e = firstExtent[chunk]; e < firstExtent[chunk + 1]; e++) {
      n += lengths[e];
    }
    return n;
  }

  /** The file offset just past the chunk's last byte: the file must be at least this long. */
  public long chunkEnd(int chunk) {
    long end = 0;
    for (int e = firstExtent[chunk]; e < firstExtent[chunk + 1]; e++) {
      end = Math.max(end, offsets[e] + lengths[e]);
    }
    return end;
  }

  /** Bytes of every chunk. */
  public long totalLength() {
    long n = 0;
    for (long l : lengths) {
      n += l;
    }
    return n;
  }

  /**
   * The n+1 offsets a stream handle carries for n chunks: the file offset where each chunk starts,
   * then the end of the last. For a contiguous layout these are exactly the chunk boundaries; for
   * extents a reader's byte position inside a chunk maps to the file only within its first extent.
   */
  public List<Long> handleOffsets() {
    int chunks = numChunks();
    List<Long> out = new ArrayList<>(chunks + 1);
    for (int c = 0; c < chunks; c++) {
      out.add(offsets[firstExtent[c]]);
    }
    out.add(chunks == 0 ? 0L : chunkEnd(chunks - 1));
    return out;
  }

  @Override
  public String toString() {
    return "ChunkExtents{chunks="
        + numChunks()
        + ", offsets="
        + Arrays.toString(offsets)
        + ", lengths="
        + Arrays.toString(lengths)
        + "}";
  }

  /**
   * Packs extents, added in file order, into chunks: an extent that starts where the previous one
   * ends extends it; a chunk closes before the extent that would take it past the chunk size (so a
   * chunk is at most the chunk size, or one extent bigger than it).
   */
  public static final class Builder {
    private final long chunkSize;
    private long[] offsets = new long[16];
    private long[] lengths = new long[16];
    private int extents;
    private int[] firstExtent = new int[16];
    private int chunks;
    private long chunkBytes;

    public Builder(long chunkSize) {
      if (chunkSize < 1) {
        throw new IllegalArgumentException("chunk size must be positive, got " + chunkSize);
      }
      this.chunkSize = chunkSize;
    }

    /** Adds [offset, offset + length) of the file; empty extents are skipped. */
    public Builder add(long offset, long length) {
      if (length <= 0) {
        return this;
      }
      boolean open = chunks > 0;
      if (open && chunkBytes + length > chunkSize) {
        open = false;
      }
      if (open && offsets[extents - 1] + lengths[extents - 1] == offset) {
        lengths[extents - 1] += length;
        chunkBytes += length;
        return this;
      }
      if (!open) {
        if (chunks + 1 >= firstExtent.length) {
          firstExtent = Arrays.copyOf(firstExtent, firstExtent.length * 2);
        }
        firstExtent[chunks] = extents;
        chunks++;
        chunkBytes = 0;
      }
      if (extents == offsets.length) {
        offsets = Arrays.copyOf(offsets, extents * 2);
        lengths = Arrays.copyOf(lengths, extents * 2);
      }
      offsets[extents] = offset;
      lengths[extents] = length;
      extents++;
      chunkBytes += length;
      return this;
    }

    public ChunkExtents build() {
      int[] first = Arrays.copyOf(firstExtent, chunks + 1);
      first[chunks] = extents;
      return new ChunkExtents(
          Arrays.copyOf(offsets, extents), Arrays.copyOf(lengths, extents), first);
    }
  }
}
