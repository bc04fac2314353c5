package io.sluice.protocol;

import java.util.Arrays;

/**
 * Sums of {@link PartitionRecords} fields per key, as batches go by: a pusher keys by partition, a
 * reader by (partition, map). An open-addressing table of only the keys seen (a pusher of one of
 * 16,777,217 partitions holds one entry, not an array of all of them), 32 bytes a slot and at least
 * 3/8 full. Not thread safe.
 */
public final class RecordTally {
  private static final long EMPTY = Long.MIN_VALUE;
  private static final int MIN_CAPACITY = 16;

  private long[] keys = newKeys(MIN_CAPACITY);
  private int[] batches = new int[MIN_CAPACITY];
  private long[] bytes = new long[MIN_CAPACITY];
  private long[] checksums = new long[MIN_CAPACITY];
  private int size;

  private static long[] newKeys(int capacity) {
    long[] k = new long[capacity];
    Arrays.fill(k, EMPTY);
    return k;
  }

  /**
   * Counts one batch of {@code key}: one more batch, its {@code batchBytes} (header included) and
   * its checksum term ({@link PartitionRecords#mix}).
   *
   * @param key not {@link Long#MIN_VALUE}
   */
  public void add(long key, long batchBytes, int batchId, int crc32c) {
    int slot = slot(key);
    if (keys[slot] == EMPTY) {
      keys[slot] = key;
      size++;
      if (size * 4 > keys.length * 3) {
        grow();
        slot = slot(key);
      }
    }
    batches[slot]++;
    bytes[slot] += batchBytes;
    checksums[slot] += PartitionRecords.mix(batchId, crc32c);
  }

  /** Sets the sums of {@code key} (a reader's expectations); replaces what it had. */
  public void put(long key, int batchCount, long byteCount, long checksum) {
    int slot = slot(key);
    if (keys[slot] == EMPTY) {
      keys[slot] = key;
      size++;
      if (size * 4 > keys.length * 3) {
        grow();
        slot = slot(key);
      }
    }
    batches[slot] = batchCount;
    bytes[slot] = byteCount;
    checksums[slot] = checksum;
  }

  /** True when {@code key} was counted or put. */
  public boolean contains(long key) {
    return keys[slot(key)] != EMPTY;
  }

  /** The batches of {@code key}; 0 when it has none. */
  public int batches(long key) {
    return batches[slot(key)];
  }

  /** The bytes of {@code key}; 0 when it has none. */
  public long bytes(long key) {
    return bytes[slot(key)];
  }

  /** The checksum of {@code key}; 0 when it has none. */
  public long checksum(long key) {
    return checksums[slot(key)];
  }

  public int size() {
    return size;
  }

  /** Every key counted or put, in increasing order. */
  public long[] sortedKeys() {
    long[] out = new long[size];
    int n = 0;
    for (long k : keys) {
      if (k != EMPTY) {
        out[n++] = k;
      }
    }
    Arrays.sort(out);
    return out;
  }

  /**
   * The sums as records, one per key, keys taken as partitions (a pusher's tally).
   *
   * @throws IllegalArgumentException when a key is not a partition (negative or above an int)
   */
  public PartitionRecords toRecords() {
    long[] sorted = sortedKeys();
    int[] p = new int[sorted.length];
    int[] b = new int[sorted.length];
    long[] by = new long[sorted.length];
    long[] c = new long[sorted.length];
    for (int i = 0; i < sorted.length; i++) {
      if (sorted[i] < 0 || sorted[i] > Integer.MAX_VALUE) {
        throw new IllegalArgumentException("key " + sorted[i] + " is not a partition");
      }
      int slot = slot(sorted[i]);
      p[i] = (int) sorted[i];
      b[i] = batches[slot];
      by[i] = bytes[slot];
      c[i] = checksums[slot];
    }
    return PartitionRecords.of(p, b, by, c);
  }

  /** Bytes the table holds. */
  public long footprintBytes() {
    return 32L * keys.length;
  }

  private int slot(long key) {
    int mask = keys.length - 1;
    int i = (int) PartitionRecords.mix((int) (key >>> 32), (int) key) & mask;
    while (keys[i] != EMPTY && keys[i] != key) {
      i = (i + 1) & mask;
    }
    return i;
  }

  private void grow() {
    long[] oldKeys = keys;
    int[] oldBatches = batches;
    long[] oldBytes = bytes;
    long[] oldChecksums = checksums;
    int capacity = oldKeys.length * 2;
    keys = newKeys(capacity);
    batches = new int[capacity];
    bytes = new long[capacity];
    checksums = new long[capacity];
    for (int i = 0; i < oldKeys.length; i++) {
      if (oldKeys[i] != EMPTY) {
        int slot = slot(oldKeys[i]);
        keys[slot] = oldKeys[i];
        batches[slot] = oldBatches[i];
        bytes[slot] = oldBytes[i];
        checksums[slot] = oldChecksums[i];
      }
    }
  }
}
