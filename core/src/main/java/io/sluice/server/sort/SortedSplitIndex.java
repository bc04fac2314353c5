package io.sluice.server.sort;

import io.sluice.server.storage.OwnerOnly;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.zip.CRC32;

/**
 * The sorted copy of a split and its index: what a map-index range read is served from.
 *
 * <p><b>Sorted data file (version 1)</b>, {@code <partition>-<epoch>.data.sorted} next to the
 * split's file: the split's batches ({@link io.sluice.protocol.BatchFormat}, bytes unchanged),
 * reordered so that the batches of one map index are contiguous and map indexes ascend. Batches of
 * one map keep the order they had in the split file. No header, no trailer.
 *
 * <p><b>Index file (version 1)</b>, {@code <partition>-<epoch>.data.sorted.index}, big-endian:
 *
 * <pre>
 * magic:int32 = 0x534C5849 ("SLXI") | version:int32 = 1
 * sourceLength:int64              length of the split file the copy was made from
 * dataLength:int64                length of the sorted data file (equals sourceLength)
 * mapCount:int32 | chunkCount:int32
 * mapCount x (mapIndex:int32 | offset:int64 | length:int64)   ascending mapIndex; the map's
 *                                                               batches are [offset, offset+length)
 * (chunkCount + 1) x offset:int64    chunk boundaries of the sorted data: 0 first, dataLength
 *                                     last, each at a batch boundary, about sluice.read.chunkSize apart
 * crc32:int32                        CRC32 of every byte before it
 * </pre>
 *
 * <p><b>Crash behaviour.</b> Both files are written under a {@code .tmp} name and renamed, the data
 * file first and the index last, so an index exists only next to a complete sorted copy. Neither is
 * fsynced (they can be rebuilt from the split file): an index whose CRC, source length or data
 * length does not match is ignored and the split is sorted again. Both go when the shuffle's
 * directory is deleted. Immutable and thread safe.
 */
public final class SortedSplitIndex {
  static final int MAGIC = 0x534C5849;
  static final int VERSION = 1;

  private final long sourceLength;
  private final long dataLength;
  private final int[] mapIndexes;
  private final long[] mapOffsets;
  private final long[] mapLengths;
  private final long[] chunkOffsets;

  SortedSplitIndex(
      long sourceLength,
      long dataLength,
      int[] mapIndexes,
      long[] mapOffsets,
      long[] mapLengths,
      long[] chunkOffsets) {
    if (mapIndexes.length != mapOffsets.length || mapIndexes.length != mapLengths.length) {
      throw new IllegalArgumentException("map index, offset and length arrays differ in length");
    }
    if (chunkOffsets.length < 1
        || chunkOffsets[0] != 0
        || chunkOffsets[chunkOffsets.length - 1] != dataLength) {
      throw new IllegalArgumentException(
          "chunk offsets must run from 0 to " + dataLength + ": " + Arrays.toString(chunkOffsets));
    }
    this.sourceLength = sourceLength;
    this.dataLength = dataLength;
    this.mapIndexes = mapIndexes;
    this.mapOffsets = mapOffsets;
    this.mapLengths = mapLengths;
    this.chunkOffsets = chunkOffsets;
  }

  public long sourceLength() {
    return sourceLength;
  }

  public long dataLength() {
    return dataLength;
  }

  public int mapCount() {
    return mapIndexes.length;
  }

  /**
   * The chunk offsets of a read of maps [startMapIndex, endMapIndex): one contiguous byte range of
   * the sorted file, cut at the file's chunk boundaries that fall inside it. A range without data
   * gives a single offset (no chunk).
   */
  public List<Long> rangeChunkOffsets(int startMapIndex, int endMapIndex) {
    int first = firstAtOrAfter(startMapIndex);
    int last = firstAtOrAfter(endMapIndex) - 1;
    List<Long> offsets = new ArrayList<>();
    if (first > last) {
      offsets.add(first < mapOffsets.length ? mapOffsets[first] : dataLength);
      return offsets;
    }
    long start = mapOffsets[first];
    long end = mapOffsets[last] + mapLengths[last];
    offsets.add(start);
    int c = Arrays.binarySearch(chunkOffsets, start);
    c = c >= 0 ? c + 1 : -c - 1;
    for (; c < chunkOffsets.length && chunkOffsets[c] < end; c++) {
      offsets.add(chunkOffsets[c]);
    }
    offsets.add(end);
    return offsets;
  }

  /** Position of the first map entry whose index is at least {@code mapIndex}. */
  private int firstAtOrAfter(int mapIndex) {
    int i = Arrays.binarySearch(mapIndexes, mapIndex);
    return i >= 0 ? i : -i - 1;
  }

  /** Bytes of the index file. */
  private static long encodedSize(int maps, int chunks) {
    return 4 + 4 + 8 + 8 + 4 + 4 + 20L * maps + 8L * (chunks + 1) + 4;
  }

  /** Writes the index in the format above (the caller renames it into place). */
  void writeTo(Path file) throws IOException {
    long size = encodedSize(mapIndexes.length, chunkOffsets.length - 1);
    if (size > Integer.MAX_VALUE) {
      throw new IOException("index of " + mapIndexes.length + " maps is too large for " + file);
    }
    ByteBuffer b = ByteBuffer.allocate((int) size);
    b.putInt(MAGIC).putInt(VERSION).putLong(sourceLength).putLong(dataLength);
    b.putInt(mapIndexes.length).putInt(chunkOffsets.length - 1);
    for (int i = 0; i < mapIndexes.length; i++) {
      b.putInt(mapIndexes[i]).putLong(mapOffsets[i]).putLong(mapLengths[i]);
    }
    for (long c : chunkOffsets) {
      b.putLong(c);
    }
    CRC32 crc = new CRC32();
    crc.update(b.array(), 0, b.position());
    b.putInt((int) crc.getValue());
    try (FileChannel out = OwnerOnly.createFile(file, false)) {
      ByteBuffer bytes = ByteBuffer.wrap(b.array());
      while (bytes.hasRemaining()) {
        out.write(bytes);
      }
    }
  }

  /**
   * Reads an index written by {@link #writeTo}.
   *
   * @throws IOException naming the file and what was expected and found when it is not a complete,
   *     intact version 1 index
   */
  static SortedSplitIndex read(Path file) throws IOException {
    byte[] bytes = Files.readAllBytes(file);
    ByteBuffer b = ByteBuffer.wrap(bytes);
    if (bytes.length < encodedSize(0, 0)) {
      throw new IOException(file + " has " + bytes.length + " bytes, too few for an index");
    }
    int magic = b.getInt();
    if (magic != MAGIC) {
      throw new IOException(
          file + " is not a sorted-split index: magic 0x" + Integer.toHexString(magic));
    }
    int version = b.getInt();
    if (version != VERSION) {
      throw new IOException(file + " has index version " + version + ", expected " + VERSION);
    }
    long sourceLength = b.getLong();
    long dataLength = b.getLong();
    int maps = b.getInt();
    int chunks = b.getInt();
    long expected = maps < 0 || chunks < 0 ? -1 : encodedSize(maps, chunks);
    if (expected != bytes.length) {
      throw new IOException(
          file
              + " claims "
              + maps
              + " maps and "
              + chunks
              + " chunks ("
              + expected
              + " bytes) but has "
              + bytes.length
              + " bytes");
    }
    CRC32 crc = new CRC32();
    crc.update(bytes, 0, bytes.length - 4);
    int stored = ByteBuffer.wrap(bytes, bytes.length - 4, 4).getInt();
    if ((int) crc.getValue() != stored) {
      throw new IOException(
          file
              + " is corrupt: CRC32 0x"
              + Integer.toHexString(stored)
              + " stored, 0x"
              + Integer.toHexString((int) crc.getValue())
              + " computed");
    }
    int[] mapIndexes = new int[maps];
    long[] offsets = new long[maps];
    long[] lengths = new long[maps];
    for (int i = 0; i < maps; i++) {
      mapIndexes[i] = b.getInt();
      offsets[i] = b.getLong();
      lengths[i] = b.getLong();
    }
    long[] chunkOffsets = new long[chunks + 1];
    for (int i = 0; i <= chunks; i++) {
      chunkOffsets[i] = b.getLong();
    }
    try {
      return new SortedSplitIndex(
          sourceLength, dataLength, mapIndexes, offsets, lengths, chunkOffsets);
    } catch (IllegalArgumentException e) {
      throw new IOException(file + " is inconsistent: " + e.getMessage(), e);
    }
  }
}
