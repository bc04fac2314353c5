package io.sluice.client.push;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.sluice.client.BatchCodec;
import io.sluice.protocol.BatchFormat;
import io.sluice.protocol.BatchLimits;

/**
 * Builds batches ({@link BatchFormat}) within {@link BatchLimits}: header and compressed payload at
 * most {@link #maxBatchSize} bytes, payload at most {@link #maxRawSize} bytes before compression;
 * each sealed with the CRC32C of its header fields and compressed payload. Thread safe.
 */
final class BatchEncoder {
  private final BatchCodec codec;
  private final ByteBufAllocator allocator;
  private final int maxBatchSize;
  private final int maxRawSize;
  private final int maxRawAlwaysFits;
  private final boolean checksums;

  /**
   * @param maxBatchSize most bytes of a batch, header included ({@link BatchLimits#maxBatchSize})
   * @param maxRawSize most bytes of a payload before compression ({@link BatchLimits#MAX_RAW_SIZE})
   */
  BatchEncoder(BatchCodec codec, ByteBufAllocator allocator, int maxBatchSize, int maxRawSize) {
    this(codec, allocator, maxBatchSize, maxRawSize, true);
  }

  /**
   * @param checksums false only in a benchmark run that measures what checksums cost ({@link
   *     io.sluice.client.ChecksumBenchmarkSwitch}): batches then carry no checksum
   */
  BatchEncoder(
      BatchCodec codec,
      ByteBufAllocator allocator,
      int maxBatchSize,
      int maxRawSize,
      boolean checksums) {
    if (maxBatchSize <= BatchFormat.HEADER_SIZE || maxRawSize < 1) {
      throw new IllegalArgumentException(
          "a batch must hold a header and a payload: max " + maxBatchSize + ", raw " + maxRawSize);
    }
    this.codec = codec;
    this.allocator = allocator;
    this.maxBatchSize = maxBatchSize;
    this.maxRawSize = maxRawSize;
    this.maxRawAlwaysFits = largestRawThatAlwaysFits();
    this.checksums = checksums;
  }

  /** The largest n whose batch fits however its payload compresses, by binary search. */
  private int largestRawThatAlwaysFits() {
    int lo = 0;
    int hi = Math.min(maxRawSize, maxBatchSize - BatchFormat.HEADER_SIZE);
    while (lo < hi) {
      int mid = (int) (((long) lo + hi + 1) / 2);
      if (BatchFormat.HEADER_SIZE + (long) codec.maxCompressedLength(mid) <= maxBatchSize) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    return lo;
  }

  /** Bytes; the largest batch built, header included. */
  int maxBatchSize() {
    return maxBatchSize;
  }

  /** Bytes; the largest payload before compression. */
  int maxRawSize() {
    return maxRawSize;
  }

  /**
   * Bytes of records that make a batch within the limits however they compress: the most a
   * partition buffers before it becomes a batch.
   */
  int maxRawAlwaysFits() {
    return maxRawAlwaysFits;
  }

  /**
   * The batch of {@code raw[off, off+len)}, owned by the caller; or null, having allocated nothing
   * that stays, when it would exceed a limit: more than {@link #maxRawSize} bytes before
   * compression, or more than {@link #maxBatchSize} bytes after.
   */
  ByteBuf encode(int mapIndex, int attempt, int batchId, byte[] raw, int off, int len) {
    if (len > maxRawSize) {
      return null;
    }
    int maxPayload =
        Math.min(codec.maxCompressedLength(len), maxBatchSize - BatchFormat.HEADER_SIZE);
    ByteBuf body = allocator.directBuffer(BatchFormat.HEADER_SIZE + maxPayload);
    BatchFormat.writeHeader(body, mapIndex, attempt, batchId, 0);
    int payload = codec.compress(raw, off, len, body, maxPayload);
    if (payload < 0) {
      body.release();
      return null;
    }
    body.setInt(BatchFormat.LENGTH_OFFSET, payload);
    if (checksums) {
      BatchFormat.seal(body, 0);
    } else {
      BatchFormat.sealWithoutChecksum(body, 0);
    }
    return body;
  }
}
