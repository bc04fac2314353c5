package io.sluice.benchmarks;

import java.util.Arrays;

/**
 * Deterministic benchmark records. Record {@code seq} of (map, partition) has a length of {@link
 * #MIN_LENGTH} to {@link #MAX_LENGTH} bytes (or of a lower largest length, down to {@link
 * #HEADER_SIZE}, and then at most as short as it) and content that are both a pure function of
 * (seed, map, partition, seq): a 16-byte big-endian header {@code map | partition | seq | length}
 * followed by a slice of a pool of splitmix64 noise, at an offset derived from the same hash. So a
 * reader can regenerate and compare every record it gets, and the payload does not compress.
 * Writing a record is a copy, not a generation, so the map tasks cost little CPU next to the server
 * they share the machine with. Thread safe (the pool is read only after construction).
 */
final class Records {
  static final int HEADER_SIZE = 16;
  static final int MIN_LENGTH = 100;
  static final int MAX_LENGTH = 8192;
  private static final int POOL_SIZE = 32 << 20;
  private static final long GOLDEN = 0x9e3779b97f4a7c15L;

  private final long seed;
  private final int minLength;
  private final int maxLength;
  private final byte[] pool = new byte[POOL_SIZE + MAX_LENGTH];

  Records(long seed) {
    this(seed, MAX_LENGTH);
  }

  /** Records of {@code min(MIN_LENGTH, maxLength)} to {@code maxLength} bytes. */
  Records(long seed, int maxLength) {
    if (maxLength < HEADER_SIZE || maxLength > MAX_LENGTH) {
      throw new IllegalArgumentException(
          "records are " + HEADER_SIZE + " to " + MAX_LENGTH + " bytes, not " + maxLength);
    }
    this.seed = seed;
    this.maxLength = maxLength;
    this.minLength = Math.min(MIN_LENGTH, maxLength);
    long state = seed;
    for (int i = 0; i + 8 <= pool.length; i += 8) {
      state += GOLDEN;
      putLong(pool, i, mix(state));
    }
  }

  /** The splitmix64 finalizer: a fast, well-mixing bijection on 64 bits. */
  static long mix(long z) {
    long x = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
    x = (x ^ (x >>> 27)) * 0x94d049bb133111ebL;
    return x ^ (x >>> 31);
  }

  private long hash(int map, int partition, int seq) {
    return mix(mix(mix(seed + GOLDEN * map) + GOLDEN + partition) + GOLDEN + seq);
  }

  private int lengthOf(long hash) {
    return minLength + (int) Long.remainderUnsigned(hash, maxLength - minLength + 1);
  }

  /** The shortest record. */
  int minLength() {
    return minLength;
  }

  /** The longest record. */
  int maxLength() {
    return maxLength;
  }

  private static int poolOffset(long hash) {
    return (int) Long.remainderUnsigned(mix(hash), POOL_SIZE);
  }

  /** A seed for the partition choices of one map task. */
  long mapSeed(int map) {
    return mix(seed ^ mix(map + 1L));
  }

  /**
   * Writes record {@code seq} of (map, partition) to {@code out[0, length)}.
   *
   * @return its length
   */
  int write(int map, int partition, int seq, byte[] out) {
    long h = hash(map, partition, seq);
    int length = lengthOf(h);
    putInt(out, 0, map);
    putInt(out, 4, partition);
    putInt(out, 8, seq);
    putInt(out, 12, length);
    System.arraycopy(pool, poolOffset(h), out, HEADER_SIZE, length - HEADER_SIZE);
    return length;
  }

  /**
   * Whether {@code buf[off, off + length)} is exactly record {@code seq} of (map, partition), whose
   * header the caller has already read.
   */
  boolean matches(int map, int partition, int seq, int length, byte[] buf, int off) {
    long h = hash(map, partition, seq);
    if (lengthOf(h) != length || off + length > buf.length) {
      return false;
    }
    int from = poolOffset(h);
    return Arrays.equals(
        buf, off + HEADER_SIZE, off + length, pool, from, from + length - HEADER_SIZE);
  }

  static int getInt(byte[] b, int off) {
    return (b[off] & 0xff) << 24
        | (b[off + 1] & 0xff) << 16
        | (b[off + 2] & 0xff) << 8
        | (b[off + 3] & 0xff);
  }

  private static void putInt(byte[] b, int off, int v) {
    b[off] = (byte) (v >>> 24);
    b[off + 1] = (byte) (v >>> 16);
    b[off + 2] = (byte) (v >>> 8);
    b[off + 3] = (byte) v;
  }

  private static void putLong(byte[] b, int off, long v) {
    putInt(b, off, (int) (v >>> 32));
    putInt(b, off + 4, (int) v);
  }
}
