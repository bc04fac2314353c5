package io.sluice.testutil;

import java.nio.ByteBuffer;
import java.util.BitSet;
import java.util.HashMap;
import java.util.Map;

/**
 * Self-checking test records: {@code map:int | partition:int | seq:int | length:int | payload},
 * where the payload is derived from (map, partition, seq). A {@link Checker} verifies that every
 * record arrives exactly once and intact. Batches of one map may arrive in any order (pushes run
 * concurrently and retry), so the checker does not ask for order across batches.
 */
public final class Records {
  public static final int HEADER = 16;

  private Records() {}

  public static byte[] record(int map, int partition, int seq, int payloadLength) {
    ByteBuffer b = ByteBuffer.allocate(HEADER + payloadLength);
    b.putInt(map).putInt(partition).putInt(seq).putInt(payloadLength);
    long x = seed(map, partition, seq);
    for (int i = 0; i < payloadLength; i++) {
      x ^= x << 13;
      x ^= x >>> 7;
      x ^= x << 17;
      b.put((byte) x);
    }
    return b.array();
  }

  private static long seed(int map, int partition, int seq) {
    long z = ((long) map * 0x9E3779B97F4A7C15L) ^ ((long) partition << 32) ^ seq ^ 0x5DEECE66DL;
    return z == 0 ? 1 : z;
  }

  /** Verifies streams of records; not thread safe. */
  public static final class Checker {
    private final Map<Long, BitSet> seen = new HashMap<>();
    private long records;
    private long bytes;

    /** Checks every record in a batch payload read from {@code partition}. */
    public void accept(int partition, byte[] payload) {
      ByteBuffer b = ByteBuffer.wrap(payload);
      while (b.hasRemaining()) {
        int map = b.getInt();
        int p = b.getInt();
        int seq = b.getInt();
        int len = b.getInt();
        if (p != partition) {
          throw new AssertionError(
              "record of partition " + p + " read from partition " + partition);
        }
        BitSet s = seen.computeIfAbsent(((long) map << 32) | p, k -> new BitSet());
        if (s.get(seq)) {
          throw new AssertionError(
              "map " + map + " partition " + p + ": record " + seq + " read twice");
        }
        byte[] want = record(map, p, seq, len);
        byte[] got = new byte[HEADER + len];
        b.position(b.position() - HEADER);
        b.get(got);
        if (!java.util.Arrays.equals(want, got)) {
          throw new AssertionError(
              "map " + map + " partition " + p + " record " + seq + " is corrupt");
        }
        s.set(seq);
        records++;
        bytes += got.length;
      }
    }

    /** Records of (map, partition) seen so far; each seen once, so n means records 0..n-1. */
    public int count(int map, int partition) {
      BitSet s = seen.get(((long) map << 32) | partition);
      if (s == null) {
        return 0;
      }
      if (s.nextClearBit(0) != s.cardinality()) {
        throw new AssertionError(
            "map "
                + map
                + " partition "
                + partition
                + ": record "
                + s.nextClearBit(0)
                + " missing");
      }
      return s.cardinality();
    }

    public long records() {
      return records;
    }

    public long bytes() {
      return bytes;
    }
  }
}
