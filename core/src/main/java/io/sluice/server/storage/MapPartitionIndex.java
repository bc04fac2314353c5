package io.sluice.server.storage;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;

/**
 * The index file of a map partition.
 *
 * <p><b>Format (version 1)</b>, big-endian: a 16-byte header {@code magic:int32 ("SLMI") |
 * version:int32 | numSubpartitions:int32 | reserved:int32}, then one record per region in region
 * order, each {@code numSubpartitions} entries of {@code offset:int64 | length:int64}: where
 * subpartition i's data of that region lies in the data file. Within a region the data is in
 * subpartition order, so the entries of a subpartition range are contiguous. Every entry of a
 * broadcast region points at the whole region (stored once). A subpartition without data in a
 * region has length 0. The number of regions follows from the file's length.
 */
public final class MapPartitionIndex {
  static final int MAGIC = 0x534c4d49;
  static final int VERSION = 1;
  static final int HEADER_SIZE = 16;
  static final int ENTRY_SIZE = 16;

  private MapPartitionIndex() {}

  static ByteBuffer header(int numSubpartitions) {
    ByteBuffer b = ByteBuffer.allocate(HEADER_SIZE);
    b.putInt(MAGIC).putInt(VERSION).putInt(numSubpartitions).putInt(0).flip();
    return b;
  }

  /** The length of a complete index file. */
  public static long fileLength(int numRegions, int numSubpartitions) {
    return HEADER_SIZE + numRegions * recordSize(numSubpartitions);
  }

  static long recordSize(int numSubpartitions) {
    return (long) numSubpartitions * ENTRY_SIZE;
  }

  /**
   * Checks the header of an index file and returns its number of regions.
   *
   * @throws IOException naming what does not match
   */
  public static int check(FileChannel index, int numSubpartitions, Object name) throws IOException {
    ByteBuffer h = ByteBuffer.allocate(HEADER_SIZE);
    readFully(index, h, 0);
    h.flip();
    int magic = h.getInt();
    int version = h.getInt();
    int subs = h.getInt();
    if (magic != MAGIC || version != VERSION || subs != numSubpartitions) {
      throw new IOException(
          "index of "
              + name
              + " is not a version "
              + VERSION
              + " map partition index of "
              + numSubpartitions
              + " subpartitions (magic "
              + Integer.toHexString(magic)
              + ", version "
              + version
              + ", "
              + subs
              + " subpartitions)");
    }
    long body = index.size() - HEADER_SIZE;
    long record = recordSize(numSubpartitions);
    if (body % record != 0) {
      throw new IOException("index of " + name + " ends inside a region record");
    }
    return (int) (body / record);
  }

  /**
   * Reads the entries of subpartitions {@code [start, end]} of {@code region} into {@code offsets}
   * and {@code lengths} from position {@code at}.
   */
  public static void read(
      FileChannel index,
      int numSubpartitions,
      int region,
      int start,
      int end,
      long[] offsets,
      long[] lengths,
      int at)
      throws IOException {
    int n = end - start + 1;
    ByteBuffer b = ByteBuffer.allocate(n * ENTRY_SIZE);
    long pos = HEADER_SIZE + region * recordSize(numSubpartitions) + (long) start * ENTRY_SIZE;
    readFully(index, b, pos);
    b.flip();
    for (int i = 0; i < n; i++) {
      offsets[at + i] = b.getLong();
      lengths[at + i] = b.getLong();
    }
  }

  public static void readFully(FileChannel ch, ByteBuffer b, long pos) throws IOException {
    while (b.hasRemaining()) {
      int n = ch.read(b, pos);
      if (n < 0) {
        throw new IOException("unexpected end of file at " + pos);
      }
      pos += n;
    }
  }
}
