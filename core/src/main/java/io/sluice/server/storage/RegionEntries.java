package io.sluice.server.storage;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.Arrays;

/**
 * Where the data of each subpartition of a map partition's open region lies, kept for the
 * subpartitions that have data in the region so far (blocks come in subpartition order, so one
 * entry per run of blocks of a subpartition). Its memory grows with the blocks the region took,
 * never with the number of subpartitions the writer claims: a region of 65,536 subpartitions and no
 * data holds nothing. At the region's finish {@link #writeRecord} writes the region's full index
 * record ({@link MapPartitionIndex}), an entry for every subpartition, a piece at a time.
 *
 * <p>The growth of its arrays is charged to the memory budget by the caller ({@link #add} says how
 * much), and the blocks of a refused frame are taken back ({@link #mark}, {@link #rollBack}). Not
 * thread safe: the partition's lock guards it.
 */
final class RegionEntries {
  /** Bytes one entry takes in its arrays: its subpartition, offset and length. */
  static final int ENTRY_BYTES = Integer.BYTES + 2 * Long.BYTES;

  private static final int FIRST_CAPACITY = 16;

  /** Bytes of index record {@link #writeRecord} builds at once. */
  private static final int WRITE_PIECE = 64 * 1024;

  private int[] subpartitions = new int[0];
  private long[] offsets = new long[0];
  private long[] lengths = new long[0];
  private int count;

  // what rollBack restores
  private int markCount;
  private long markLastLength;

  /** Bytes its arrays take, which the budget holds for it. */
  long heldBytes() {
    return (long) subpartitions.length * ENTRY_BYTES;
  }

  /**
   * The growth {@link #add}ing a block of a new run would cost now, in bytes: 0 while there is
   * room.
   */
  long growthForNewEntry() {
    if (count < subpartitions.length) {
      return 0;
    }
    return (long) (newCapacity() - subpartitions.length) * ENTRY_BYTES;
  }

  private int newCapacity() {
    return subpartitions.length == 0 ? FIRST_CAPACITY : subpartitions.length * 2;
  }

  /** Whether a block of {@code subpartition} continues the last entry (costs no room). */
  boolean continuesLast(int subpartition) {
    return count > 0 && subpartitions[count - 1] == subpartition;
  }

  /**
   * Records a block of {@code bytes} (header included) of {@code subpartition} at {@code offset} of
   * the data file; blocks come in non-decreasing subpartition order. A new run needs the room
   * {@link #growthForNewEntry} priced, which the caller reserved.
   */
  void add(int subpartition, long offset, long bytes) {
    if (continuesLast(subpartition)) {
      lengths[count - 1] += bytes;
      return;
    }
    if (count == subpartitions.length) {
      int capacity = newCapacity();
      subpartitions = Arrays.copyOf(subpartitions, capacity);
      offsets = Arrays.copyOf(offsets, capacity);
      lengths = Arrays.copyOf(lengths, capacity);
    }
    subpartitions[count] = subpartition;
    offsets[count] = offset;
    lengths[count] = bytes;
    count++;
  }

  /** Remembers the entries as they are, for {@link #rollBack}. */
  void mark() {
    markCount = count;
    markLastLength = count > 0 ? lengths[count - 1] : 0;
  }

  /** Forgets the blocks added since {@link #mark} (the arrays keep their size). */
  void rollBack() {
    count = markCount;
    if (count > 0) {
      lengths[count - 1] = markLastLength;
    }
  }

  /**
   * Appends the region's index record to {@code index}: for each of {@code numSubpartitions} its
   * offset and length; a subpartition without data gets length 0 at the end of the one before (the
   * region's start for the first); in a {@code broadcast} region every entry is the whole region,
   * {@code [start, end)}.
   */
  void writeRecord(FileChannel index, int numSubpartitions, long start, long end, boolean broadcast)
      throws IOException {
    ByteBuffer piece =
        ByteBuffer.allocate(
            (int) Math.min(WRITE_PIECE, MapPartitionIndex.recordSize(numSubpartitions)));
    long next = start;
    int e = 0;
    for (int s = 0; s < numSubpartitions; s++) {
      long offset;
      long length;
      if (broadcast) {
        offset = start;
        length = end - start;
      } else if (e < count && subpartitions[e] == s) {
        offset = offsets[e];
        length = lengths[e];
        e++;
      } else {
        offset = next;
        length = 0;
      }
      next = offset + length;
      if (!piece.hasRemaining()) {
        write(index, piece);
      }
      piece.putLong(offset).putLong(length);
    }
    write(index, piece);
  }

  private static void write(FileChannel index, ByteBuffer piece) throws IOException {
    piece.flip();
    while (piece.hasRemaining()) {
      index.write(piece);
    }
    piece.clear();
  }
}
