package io.sluice.protocol;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;

/**
 * The map-run index of a split file: the file as a sequence of runs, each the batches of one map
 * index, so a read of a map-index range is the runs in that range, without a sort.
 *
 * <p>Each flush of a split (a <i>segment</i>, about {@code sluice.flush.size}) is written in
 * map-index order ({@link MapOrderedSegment}), so a map range is at most one contiguous byte range
 * per segment, and ranges of adjacent segments that touch merge. No run is longer than the chunk
 * size unless it is one batch.
 *
 * <p><b>Trailer format (version 1)</b>, appended to the split file after its last batch at commit,
 * so the index is fsynced and renamed with the data; readers of the split never read past the
 * length its commit recorded, so they do not see it. Big-endian:
 *
 * <pre>
 * runCount x (mapIndex:int32 | length:int32)   runs in file order; run i starts where run i-1
 *                                              ends, run 0 at offset 0, the last ends at dataLength
 * magic:int32 = 0x534C4D52 ("SLMR") | version:int32 = 1
 * dataLength:int64 | runCount:int32
 * crc32c:int32                                 CRC32C of every trailer byte before it
 * </pre>
 *
 * A file without a trailer (written before it existed, or a split with more than {@code
 * io.sluice.server.storage.MapRunRecorder#MAX_RUNS} runs) is read with sort-on-read instead. The
 * server writes the trailer and serves map ranges from it; a reader of a split in the distributed
 * tier reads it from the file itself ({@link #parse}). Immutable and thread safe.
 */
public final class MapRunIndex {
  static final int MAGIC = 0x534C4D52;
  static final int VERSION = 1;

  /** Bytes of each run in a trailer. */
  public static final int RUN_SIZE = 8;

  /** Bytes of the footer that ends every trailer. */
  public static final int FOOTER_SIZE = 24;

  private final int[] mapIndexes;
  private final int[] lengths;

  MapRunIndex(int[] mapIndexes, int[] lengths) {
    this.mapIndexes = mapIndexes;
    this.lengths = lengths;
  }

  public int runCount() {
    return mapIndexes.length;
  }

  /**
   * The chunks of a read of maps [startMapIndex, endMapIndex): the runs of those maps in file
   * order, touching runs merged, packed into chunks of at most {@code chunkSize} (or one run).
   */
  public ChunkExtents range(int startMapIndex, int endMapIndex, long chunkSize) {
    ChunkExtents.Builder chunks = new ChunkExtents.Builder(chunkSize);
    long offset = 0;
    for (int i = 0; i < mapIndexes.length; i++) {
      int m = mapIndexes[i];
      if (m >= startMapIndex && m < endMapIndex) {
        chunks.add(offset, lengths[i]);
      }
      offset += lengths[i];
    }
    return chunks.build();
  }

  /** The trailer of these runs, as written after the data. */
  public static ByteBuffer encode(long dataLength, int[] mapIndexes, int[] lengths, int count) {
    ByteBuffer b = ByteBuffer.allocate(count * RUN_SIZE + FOOTER_SIZE);
    for (int i = 0; i < count; i++) {
      b.putInt(mapIndexes[i]).putInt(lengths[i]);
    }
    b.putInt(MAGIC).putInt(VERSION).putLong(dataLength).putInt(count);
    b.putInt(crc32c(b.array(), b.position()));
    return b.flip();
  }

  /**
   * Why the file of a split committed with {@code dataLength} bytes and now {@code size} bytes long
   * is not that split, or null when it is: its size is the data length, or the data length plus a
   * trailer whose footer names that length. Reads only the footer.
   */
  public static String sizeProblem(Path file, long dataLength, long size) {
    if (size == dataLength) {
      return null;
    }
    if (size < dataLength + FOOTER_SIZE) {
      return "its file " + file + " has " + size + " bytes, expected " + dataLength;
    }
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      ByteBuffer footer = readFully(ch, size - FOOTER_SIZE, FOOTER_SIZE, file);
      String problem = footerProblem(footer, dataLength, size);
      return problem == null ? null : "its file " + file + " has " + size + " bytes: " + problem;
    } catch (IOException e) {
      return "its file " + file + " cannot be read: " + e;
    }
  }

  /**
   * The runs in the trailer of a split file committed with {@code dataLength} bytes; null when the
   * file has no trailer.
   *
   * @throws IOException naming the file and what was wrong when the trailer is damaged
   */
  public static MapRunIndex read(Path file, long dataLength) throws IOException {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      long size = ch.size();
      if (size == dataLength) {
        return null;
      }
      if (size < dataLength + FOOTER_SIZE) {
        throw new IOException(
            file + " has " + size + " bytes, fewer than its " + dataLength + " bytes of data");
      }
      long trailerLength = size - dataLength;
      if (trailerLength > Integer.MAX_VALUE) {
        throw new IOException(file + " has a map-run trailer of " + trailerLength + " bytes");
      }
      return parse(
          readFully(ch, dataLength, (int) trailerLength, file), dataLength, size, file.toString());
    }
  }

  /**
   * The runs of the trailer {@code t} (the bytes from {@code dataLength} to the end) of a split
   * file of {@code size} bytes committed with {@code dataLength} bytes of data.
   *
   * @param file names the file in errors
   * @throws IOException naming the file and what was wrong when the trailer is damaged
   */
  public static MapRunIndex parse(ByteBuffer t, long dataLength, long size, String file)
      throws IOException {
    if (t.remaining() != size - dataLength || t.remaining() < FOOTER_SIZE) {
      throw new IOException(
          file
              + ": a map-run trailer of "
              + t.remaining()
              + " bytes after "
              + dataLength
              + " bytes of data does not end a file of "
              + size
              + " bytes");
    }
    ByteBuffer footer = t.duplicate().position(t.limit() - FOOTER_SIZE);
    String problem = footerProblem(footer.slice(), dataLength, size);
    if (problem != null) {
      throw new IOException(file + ": " + problem);
    }
    byte[] bytes = new byte[t.remaining()];
    t.duplicate().get(bytes);
    int stored = t.getInt(t.limit() - 4);
    int computed = crc32c(bytes, bytes.length - 4);
    if (stored != computed) {
      throw new IOException(
          file
              + ": the map-run trailer is corrupt: CRC32C 0x"
              + Integer.toHexString(stored)
              + " stored, 0x"
              + Integer.toHexString(computed)
              + " computed");
    }
    ByteBuffer runs = ByteBuffer.wrap(bytes);
    int count = (int) ((bytes.length - FOOTER_SIZE) / RUN_SIZE);
    int[] maps = new int[count];
    int[] lengths = new int[count];
    long total = 0;
    for (int i = 0; i < count; i++) {
      maps[i] = runs.getInt();
      lengths[i] = runs.getInt();
      if (maps[i] < 0 || lengths[i] <= 0) {
        throw new IOException(
            file + ": run " + i + " has map " + maps[i] + " and length " + lengths[i]);
      }
      total += lengths[i];
    }
    if (total != dataLength) {
      throw new IOException(
          file + ": the map runs cover " + total + " bytes, the data is " + dataLength);
    }
    return new MapRunIndex(maps, lengths);
  }

  /** Null when the 24-byte footer is a version 1 footer of a trailer ending a file this size. */
  private static String footerProblem(ByteBuffer footer, long dataLength, long size) {
    int magic = footer.getInt(0);
    if (magic != MAGIC) {
      return "no map-run trailer after the data (magic 0x" + Integer.toHexString(magic) + ")";
    }
    int version = footer.getInt(4);
    if (version != VERSION) {
      return "map-run trailer version " + version + ", expected " + VERSION;
    }
    long recorded = footer.getLong(8);
    int count = footer.getInt(16);
    long expected = dataLength + (long) count * RUN_SIZE + FOOTER_SIZE;
    if (recorded != dataLength || count < 0 || expected != size) {
      return "its map-run trailer is for "
          + recorded
          + " bytes of data and "
          + count
          + " runs, but the data is "
          + dataLength
          + " bytes";
    }
    return null;
  }

  private static ByteBuffer readFully(FileChannel ch, long position, int length, Path file)
      throws IOException {
    ByteBuffer b = ByteBuffer.allocate(length);
    while (b.hasRemaining()) {
      if (ch.read(b, position + b.position()) < 0) {
        throw new IOException(file + " ends before byte " + (position + length));
      }
    }
    return b.flip();
  }

  private static int crc32c(byte[] bytes, int length) {
    CRC32C crc = new CRC32C();
    crc.update(bytes, 0, length);
    return (int) crc.getValue();
  }
}
