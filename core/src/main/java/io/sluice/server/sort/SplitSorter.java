package io.sluice.server.sort;

import io.sluice.protocol.BatchFormat;
import io.sluice.server.storage.CommittedSplitFile;
import io.sluice.server.storage.OwnerOnly;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;

/**
 * Sorts one committed split by map index: reads the file once, sequentially, through a small
 * buffer, collecting the header of every batch; orders the batches by map index (stable); writes
 * the sorted copy with {@link FileChannel#transferTo} (the source is still in the page cache, and
 * batches adjacent in both orders go in one call); writes the index; then renames both into place.
 * The formats are described in {@link SortedSplitIndex}. Stateless apart from its settings; thread
 * safe.
 */
final class SplitSorter {
  /** Bytes read at a time while scanning headers; bounds the scan's memory. */
  static final int SCAN_BUFFER_SIZE = 64 << 10;

  static final String SORTED_SUFFIX = ".sorted";
  static final String INDEX_SUFFIX = ".sorted.index";
  private static final String TMP_SUFFIX = ".tmp";

  private final long chunkSize;

  SplitSorter(long chunkSize) {
    if (chunkSize < 1) {
      throw new IllegalArgumentException("chunk size must be positive, got " + chunkSize);
    }
    this.chunkSize = chunkSize;
  }

  static Path sortedPath(CommittedSplitFile split) {
    return split.path().resolveSibling(split.path().getFileName() + SORTED_SUFFIX);
  }

  static Path indexPath(CommittedSplitFile split) {
    return split.path().resolveSibling(split.path().getFileName() + INDEX_SUFFIX);
  }

  /**
   * The index of the split's sorted copy when one is on disk and matches the split, else null. An
   * index that cannot be read is ignored (and replaced by the next sort).
   */
  static SortedSplitIndex existing(CommittedSplitFile split) {
    Path index = indexPath(split);
    Path data = sortedPath(split);
    try {
      if (!Files.exists(index)) {
        return null;
      }
      SortedSplitIndex existing = SortedSplitIndex.read(index);
      if (existing.sourceLength() == split.length() && Files.size(data) == existing.dataLength()) {
        return existing;
      }
      return null;
    } catch (IOException e) {
      return null;
    }
  }

  /**
   * Sorts the split and returns the index of its sorted copy.
   *
   * @throws IOException naming the split and file when reading, parsing or writing fails
   */
  SortedSplitIndex sort(CommittedSplitFile split) throws IOException {
    Path source = split.path();
    Path sorted = sortedPath(split);
    Path index = indexPath(split);
    Path sortedTmp = sorted.resolveSibling(sorted.getFileName() + TMP_SUFFIX);
    Path indexTmp = index.resolveSibling(index.getFileName() + TMP_SUFFIX);
    try (FileChannel in = FileChannel.open(source, StandardOpenOption.READ)) {
      BatchTable batches = scan(in, split);
      SortedSplitIndex result;
      try (FileChannel out = OwnerOnly.createFile(sortedTmp, false)) {
        result = copySorted(in, out, batches, split);
      }
      Files.move(sortedTmp, sorted, StandardCopyOption.ATOMIC_MOVE);
      result.writeTo(indexTmp);
      Files.move(indexTmp, index, StandardCopyOption.ATOMIC_MOVE);
      return result;
    } catch (IOException e) {
      Files.deleteIfExists(sortedTmp);
      Files.deleteIfExists(indexTmp);
      throw new IOException("Sorting " + split.key() + " (" + source + ") failed: " + e, e);
    }
  }

  /** Reads every batch header of the file in order; checks that batches tile it exactly. */
  private static BatchTable scan(FileChannel in, CommittedSplitFile split) throws IOException {
    long length = split.length();
    if (in.size() < length) {
      throw new IOException(
          split.path() + " has " + in.size() + " bytes but the commit recorded " + length);
    }
    BatchTable table = new BatchTable();
    ByteBuffer window = ByteBuffer.allocate(SCAN_BUFFER_SIZE);
    long windowStart = 0;
    window.limit(0);
    long pos = 0;
    while (pos < length) {
      if (length - pos < BatchFormat.HEADER_SIZE) {
        throw new IOException(
            split.path() + " ends with a truncated batch header at offset " + pos);
      }
      if (pos < windowStart || pos + BatchFormat.HEADER_SIZE > windowStart + window.limit()) {
        windowStart = pos;
        fill(in, window, pos, length);
      }
      int at = (int) (pos - windowStart);
      int mapIndex = window.getInt(at + BatchFormat.MAP_INDEX_OFFSET);
      int payload = window.getInt(at + BatchFormat.LENGTH_OFFSET);
      if (mapIndex < 0 || payload < 0 || payload > length - pos - BatchFormat.HEADER_SIZE) {
        throw new IOException(
            split.path()
                + " holds a malformed batch at offset "
                + pos
                + " (map "
                + mapIndex
                + ", "
                + payload
                + " payload bytes, "
                + (length - pos - BatchFormat.HEADER_SIZE)
                + " left)");
      }
      int batchLength = BatchFormat.HEADER_SIZE + payload;
      table.add(mapIndex, pos, batchLength);
      pos += batchLength;
    }
    return table;
  }

  /** Reads as much of [pos, length) as fits into the window, starting at {@code pos}. */
  private static void fill(FileChannel in, ByteBuffer window, long pos, long length)
      throws IOException {
    window.clear();
    window.limit((int) Math.min(window.capacity(), length - pos));
    while (window.hasRemaining()) {
      int n = in.read(window, pos + window.position());
      if (n < 0) {
        throw new IOException("unexpected end of file at offset " + (pos + window.position()));
      }
    }
    window.flip();
  }

  private SortedSplitIndex copySorted(
      FileChannel in, FileChannel out, BatchTable batches, CommittedSplitFile split)
      throws IOException {
    int[] order = batches.sortedByMap();
    int[] maps = new int[16];
    long[] mapOffsets = new long[16];
    long[] mapLengths = new long[16];
    int mapCount = 0;
    long[] chunks = new long[16];
    int chunkCount = 1; // chunks[0] == 0
    long written = 0;
    long chunkStart = 0;
    long runStart = -1;
    long runLength = 0;
    for (int b : order) {
      int map = batches.mapIndex(b);
      long offset = batches.offset(b);
      int length = batches.length(b);
      if (mapCount == 0 || maps[mapCount - 1] != map) {
        if (mapCount == maps.length) {
          maps = Arrays.copyOf(maps, mapCount * 2);
          mapOffsets = Arrays.copyOf(mapOffsets, mapCount * 2);
          mapLengths = Arrays.copyOf(mapLengths, mapCount * 2);
        }
        maps[mapCount] = map;
        mapOffsets[mapCount] = written;
        mapCount++;
      }
      if (runStart >= 0 && runStart + runLength == offset) {
        runLength += length;
      } else {
        transfer(in, out, runStart, runLength, split);
        runStart = offset;
        runLength = length;
      }
      written += length;
      mapLengths[mapCount - 1] += length;
      if (written - chunkStart >= chunkSize) {
        if (chunkCount == chunks.length) {
          chunks = Arrays.copyOf(chunks, chunkCount * 2);
        }
        chunks[chunkCount++] = written;
        chunkStart = written;
      }
    }
    transfer(in, out, runStart, runLength, split);
    if (chunks[chunkCount - 1] != written) {
      if (chunkCount == chunks.length) {
        chunks = Arrays.copyOf(chunks, chunkCount + 1);
      }
      chunks[chunkCount++] = written;
    }
    if (written != split.length()) {
      throw new IOException(
          "sorted copy of "
              + split.path()
              + " has "
              + written
              + " bytes, expected "
              + split.length());
    }
    return new SortedSplitIndex(
        split.length(),
        written,
        Arrays.copyOf(maps, mapCount),
        Arrays.copyOf(mapOffsets, mapCount),
        Arrays.copyOf(mapLengths, mapCount),
        Arrays.copyOf(chunks, chunkCount));
  }

  /** Appends [start, start+length) of the source to the end of {@code out}. */
  private static void transfer(
      FileChannel in, FileChannel out, long start, long length, CommittedSplitFile split)
      throws IOException {
    long done = 0;
    while (done < length) {
      long n = in.transferTo(start + done, length - done, out);
      if (n <= 0) {
        throw new IOException(
            "copying bytes "
                + (start + done)
                + ".."
                + (start + length)
                + " of "
                + split.path()
                + " made no progress");
      }
      done += n;
    }
  }
}
