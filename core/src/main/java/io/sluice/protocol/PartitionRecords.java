package io.sluice.protocol;

import io.sluice.protocol.proto.MapRecords;
import io.sluice.protocol.proto.PartitionRecordList;
import java.io.IOException;
import java.util.Arrays;
import java.util.List;

/**
 * What one map attempt wrote to each partition it touched, as the servers acknowledged it: the
 * integrity record a reader compares what it read with. One record per (map attempt, partition)
 * with at least one batch, never one for an empty partition, so a map that writes to few of
 * 16,777,217 partitions reports few records.
 *
 * <p>A record is {@code (partition, batches, bytes, checksum)}:
 *
 * <ul>
 *   <li>{@code batches}: the number of batches. Batch ids count densely from 0 per (map attempt,
 *       partition) ({@link BatchFormat}), so they are exactly {@code [0, batches)}: a reader that
 *       sees an id at or above it has a batch that was never acknowledged.
 *   <li>{@code bytes}: the batches' bytes as stored, headers included ({@link
 *       BatchFormat#HEADER_SIZE} plus the compressed payload length, each).
 *   <li>{@code checksum}: the sum (mod 2^64) over the batches of {@link #mix}{@code (batchId,
 *       crc32c)}, where {@code crc32c} is the batch's stored checksum (which already covers the map
 *       index, the attempt and the batch id). A sum does not depend on the order the batches are
 *       read in, and unlike a XOR a batch counted twice does not cancel out; a missing batch, a
 *       duplicate under a fresh id or a batch of another attempt changes it.
 * </ul>
 *
 * <p>Room to grow: Spark 4.1's order-independent row checksum of a map output ({@code
 * MapStatus.checksumValue}) can travel as one more parallel field of {@link PartitionRecordList}
 * (an absent field is "not reported"), computed where records are serialized, without changing
 * these three.
 *
 * <p>Packed: four parallel arrays in increasing partition order, 24 bytes a record; on the wire
 * ({@link PartitionRecordList}) partitions are delta-encoded varints, typically 14 bytes a record,
 * at most 28. Immutable.
 */
public final class PartitionRecords {
  /** No records: a map attempt that wrote nothing (or nothing in a range). */
  public static final PartitionRecords EMPTY =
      new PartitionRecords(new int[0], new int[0], new long[0], new long[0]);

  /** The most bytes one record takes on the wire (5 + 5 + 10 + 8 bytes). */
  public static final int MAX_WIRE_BYTES = 28;

  private final int[] partitions;
  private final int[] batches;
  private final long[] bytes;
  private final long[] checksums;

  private PartitionRecords(int[] partitions, int[] batches, long[] bytes, long[] checksums) {
    this.partitions = partitions;
    this.batches = batches;
    this.bytes = bytes;
    this.checksums = checksums;
  }

  /**
   * Records from parallel arrays (taken, not copied).
   *
   * @throws IllegalArgumentException when the arrays differ in length, partitions are not strictly
   *     increasing and non-negative, or a record has no batch or negative bytes
   */
  public static PartitionRecords of(
      int[] partitions, int[] batches, long[] bytes, long[] checksums) {
    int n = partitions.length;
    if (batches.length != n || bytes.length != n || checksums.length != n) {
      throw new IllegalArgumentException("partition records of different lengths");
    }
    for (int i = 0; i < n; i++) {
      if (partitions[i] < 0 || (i > 0 && partitions[i] <= partitions[i - 1])) {
        throw new IllegalArgumentException(
            "partition records out of order at partition " + partitions[i]);
      }
      if (batches[i] <= 0 || bytes[i] < 0) {
        throw new IllegalArgumentException(
            "partition record of partition "
                + partitions[i]
                + " has "
                + batches[i]
                + " batches and "
                + bytes[i]
                + " bytes");
      }
    }
    return new PartitionRecords(partitions, batches, bytes, checksums);
  }

  /**
   * The checksum term of one batch: a 64-bit finalizer (the one of SplitMix64) of {@code batchId <<
   * 32 | crc32c}, so that two batches differing in either give unrelated terms.
   */
  public static long mix(int batchId, int crc32c) {
    long z = ((long) batchId << 32) | (crc32c & 0xFFFFFFFFL);
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }

  public int size() {
    return partitions.length;
  }

  public int partition(int i) {
    return partitions[i];
  }

  public int batches(int i) {
    return batches[i];
  }

  public long bytes(int i) {
    return bytes[i];
  }

  public long checksum(int i) {
    return checksums[i];
  }

  /** The index of the first record of a partition at or above {@code partition}. */
  public int firstAtOrAfter(int partition) {
    int i = Arrays.binarySearch(partitions, partition);
    return i >= 0 ? i : -1 - i;
  }

  /** Records [from, to) in wire form. */
  public PartitionRecordList encode(int from, int to) {
    PartitionRecordList.Builder b = PartitionRecordList.newBuilder();
    int previous = 0;
    for (int i = from; i < to; i++) {
      b.addPartitionDeltas(partitions[i] - previous);
      previous = partitions[i];
      b.addBatches(batches[i]);
      b.addBytes(bytes[i]);
      b.addChecksums(checksums[i]);
    }
    return b.build();
  }

  /** Every record in wire form. */
  public PartitionRecordList encode() {
    return encode(0, size());
  }

  /**
   * One map's records as the coordinator answered them for {@code shuffle} (as {@link
   * io.sluice.common.Ids#shuffle} names it).
   *
   * @throws IOException naming the shuffle, the map and its attempt when they are malformed
   */
  public static PartitionRecords fromCoordinator(MapRecords m, String shuffle) throws IOException {
    try {
      return decode(m.getRecords(), "map " + m.getMapIndex() + " attempt " + m.getAttempt());
    } catch (IllegalArgumentException e) {
      throw new IOException(
          "the integrity records of "
              + shuffle
              + " from the coordinator are malformed: "
              + e.getMessage(),
          e);
    }
  }

  /**
   * Records from their wire form.
   *
   * @throws IllegalArgumentException naming {@code what} when the lists differ in length or a
   *     record is malformed
   */
  public static PartitionRecords decode(PartitionRecordList list, String what) {
    int n = list.getPartitionDeltasCount();
    if (list.getBatchesCount() != n || list.getBytesCount() != n || list.getChecksumsCount() != n) {
      throw new IllegalArgumentException("the partition records of " + what + " differ in length");
    }
    int[] partitions = new int[n];
    long p = 0;
    for (int i = 0; i < n; i++) {
      int delta = list.getPartitionDeltas(i);
      if (delta < 0 || (i > 0 && delta == 0)) {
        throw new IllegalArgumentException(
            "the partition records of " + what + " are out of order at record " + i);
      }
      p += delta;
      if (p > Integer.MAX_VALUE) {
        throw new IllegalArgumentException(
            "the partition records of " + what + " name a partition past " + Integer.MAX_VALUE);
      }
      partitions[i] = (int) p;
    }
    int[] batches = new int[n];
    long[] bytes = new long[n];
    long[] checksums = new long[n];
    for (int i = 0; i < n; i++) {
      batches[i] = list.getBatches(i);
      bytes[i] = list.getBytes(i);
      checksums[i] = list.getChecksums(i);
    }
    try {
      return of(partitions, batches, bytes, checksums);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "the partition records of " + what + " are malformed: " + e.getMessage(), e);
    }
  }

  /**
   * The records of pages in order, as one.
   *
   * @throws IllegalArgumentException when a page does not start past the one before
   */
  public static PartitionRecords concat(List<PartitionRecords> pages) {
    if (pages.size() == 1) {
      return pages.get(0);
    }
    int n = 0;
    for (PartitionRecords page : pages) {
      n += page.size();
    }
    int[] partitions = new int[n];
    int[] batches = new int[n];
    long[] bytes = new long[n];
    long[] checksums = new long[n];
    int at = 0;
    for (PartitionRecords page : pages) {
      System.arraycopy(page.partitions, 0, partitions, at, page.size());
      System.arraycopy(page.batches, 0, batches, at, page.size());
      System.arraycopy(page.bytes, 0, bytes, at, page.size());
      System.arraycopy(page.checksums, 0, checksums, at, page.size());
      at += page.size();
    }
    return of(partitions, batches, bytes, checksums);
  }

  /** Bytes the arrays hold. */
  public long footprintBytes() {
    return 24L * size();
  }
}
