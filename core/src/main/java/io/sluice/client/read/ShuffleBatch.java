package io.sluice.client.read;

import java.util.Arrays;

/**
 * One decompressed batch handed to a reader: the records of one map's push, in order. Its bytes
 * live in the reader's decompression buffer, reused for the next batch: {@link #bytes} is valid
 * until the reader's next call to {@code next()}; {@link #payload} copies them for keeping.
 */
public final class ShuffleBatch {
  private final int partitionId;
  private final int mapIndex;
  private final byte[] bytes;
  private final int length;

  ShuffleBatch(int partitionId, int mapIndex, byte[] bytes, int length) {
    this.partitionId = partitionId;
    this.mapIndex = mapIndex;
    this.bytes = bytes;
    this.length = length;
  }

  public int partitionId() {
    return partitionId;
  }

  public int mapIndex() {
    return mapIndex;
  }

  /**
   * The reader's buffer: the decompressed, serialized records are its first {@link #length} bytes,
   * until the reader's next call to {@code next()}.
   */
  public byte[] bytes() {
    return bytes;
  }

  /** Bytes of decompressed, serialized records. */
  public int length() {
    return length;
  }

  /** A copy of the decompressed, serialized records, to keep past the next batch. */
  public byte[] payload() {
    return Arrays.copyOf(bytes, length);
  }
}
