package io.sluice.flink;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import org.apache.flink.core.memory.MemorySegment;

/**
 * Collects the serialized records of one region in Flink network memory and hands them out grouped
 * by subpartition, subpartitions in increasing order, each subpartition's records in the order they
 * were appended.
 *
 * <p>Layout: records are appended one after another over the segments. Each record is preceded by a
 * 12-byte header in native byte order, {@code length:int32 | next:int64}, where {@code next} is the
 * address of the next record of the same subpartition ({@code -1} at the end) and an address is
 * {@code segmentIndex << 32 | offset}. A header never straddles two segments (the rest of a segment
 * too short for one is skipped); record bytes may. So the index costs 12 bytes of network memory
 * per record and no heap beyond two longs per subpartition.
 *
 * <p>The segments are borrowed: the buffer never allocates or recycles them. Not thread safe.
 */
final class RegionSortBuffer {
  static final int HEADER_SIZE = 12;
  private static final long NONE = -1L;

  /** Receives the region's bytes, subpartition by subpartition. */
  interface Sink {
    /** Takes {@code data} (position to limit); the buffer is reused once the call returns. */
    void write(int subpartition, ByteBuffer data) throws IOException;
  }

  private final MemorySegment[] segments;
  private final int segmentSize;
  private final long[] heads;
  private final long[] tails;
  private int writeSegment;
  private int writeOffset;
  private long numRecords;
  private long numBytes;

  /**
   * @param segments the memory to sort in (borrowed; all of the same size)
   * @param numSubpartitions the subpartitions records may go to
   */
  RegionSortBuffer(List<MemorySegment> segments, int numSubpartitions) {
    if (segments.isEmpty()) {
      throw new IllegalArgumentException("a sort buffer needs at least one segment");
    }
    if (numSubpartitions < 1) {
      throw new IllegalArgumentException("numSubpartitions must be positive: " + numSubpartitions);
    }
    this.segments = segments.toArray(new MemorySegment[0]);
    this.segmentSize = this.segments[0].size();
    if (segmentSize < HEADER_SIZE) {
      throw new IllegalArgumentException("segments of " + segmentSize + " bytes are too small");
    }
    for (MemorySegment s : this.segments) {
      if (s.size() != segmentSize) {
        throw new IllegalArgumentException("segments differ in size");
      }
    }
    this.heads = new long[numSubpartitions];
    this.tails = new long[numSubpartitions];
    reset();
  }

  /** Whether a record of {@code length} bytes fits into this buffer when it is empty. */
  boolean fitsWhenEmpty(int length) {
    return (long) HEADER_SIZE + length <= (long) segments.length * segmentSize;
  }

  /**
   * Appends a record (its bytes from position to limit) to {@code subpartition}.
   *
   * @return false, with the record and the buffer untouched, when the record does not fit
   */
  boolean append(ByteBuffer record, int subpartition) {
    int length = record.remaining();
    int segment = writeSegment;
    int offset = writeOffset;
    if (segmentSize - offset < HEADER_SIZE) {
      segment++;
      offset = 0;
    }
    long capacity = (long) (segments.length - segment) * segmentSize - offset;
    if (segment >= segments.length || HEADER_SIZE + (long) length > capacity) {
      return false;
    }
    long address = ((long) segment << 32) | offset;
    segments[segment].putInt(offset, length);
    segments[segment].putLong(offset + 4, NONE);
    if (tails[subpartition] == NONE) {
      heads[subpartition] = address;
    } else {
      long tail = tails[subpartition];
      segments[(int) (tail >>> 32)].putLong((int) tail + 4, address);
    }
    tails[subpartition] = address;
    offset += HEADER_SIZE;
    int left = length;
    while (left > 0) {
      if (offset == segmentSize) {
        segment++;
        offset = 0;
      }
      int n = Math.min(left, segmentSize - offset);
      segments[segment].put(offset, record, n); // moves the record's position by n
      offset += n;
      left -= n;
    }
    writeSegment = segment;
    writeOffset = offset;
    numRecords++;
    numBytes += length;
    return true;
  }

  boolean isEmpty() {
    return numRecords == 0;
  }

  long numRecords() {
    return numRecords;
  }

  /** Record bytes held (headers not counted). */
  long numBytes() {
    return numBytes;
  }

  /**
   * Hands every record to {@code sink}, subpartition by subpartition, copying them through {@code
   * staging} so the sink sees up to a whole segment at a time; then empties the buffer. Records of
   * one subpartition are concatenated and may be cut anywhere between two calls.
   *
   * @return the number of calls made to the sink
   */
  int drainTo(Sink sink, MemorySegment staging) throws IOException {
    int calls = 0;
    int stagingSize = staging.size();
    for (int sub = 0; sub < heads.length; sub++) {
      int filled = 0;
      long address = heads[sub];
      while (address != NONE) {
        int segment = (int) (address >>> 32);
        int offset = (int) address;
        int left = segments[segment].getInt(offset);
        long next = segments[segment].getLong(offset + 4);
        offset += HEADER_SIZE;
        while (left > 0) {
          if (offset == segmentSize) {
            segment++;
            offset = 0;
          }
          if (filled == stagingSize) {
            sink.write(sub, staging.wrap(0, filled));
            calls++;
            filled = 0;
          }
          int n = Math.min(left, Math.min(segmentSize - offset, stagingSize - filled));
          segments[segment].copyTo(offset, staging, filled, n);
          offset += n;
          filled += n;
          left -= n;
        }
        address = next;
      }
      if (filled > 0) {
        sink.write(sub, staging.wrap(0, filled));
        calls++;
      }
    }
    reset();
    return calls;
  }

  /** Forgets every record. */
  void reset() {
    Arrays.fill(heads, NONE);
    Arrays.fill(tails, NONE);
    writeSegment = 0;
    writeOffset = 0;
    numRecords = 0;
    numBytes = 0;
  }
}
