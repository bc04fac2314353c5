package io.sluice.client.read;

/** One decompressed batch handed to a reader: the records of one map's push, in order. */
public final class ShuffleBatch {
  private final int partitionId;
  private final int mapIndex;
  private final byte[] payload;

  ShuffleBatch(int partitionId, int mapIndex, byte[] payload) {
    this.partitionId = partitionId;
    this.mapIndex = mapIndex;
    this.payload = payload;
  }

  public int partitionId() {
    return partitionId;
  }

  public int mapIndex() {
    return mapIndex;
  }

  /** The decompressed, serialized records. */
  public byte[] payload() {
    return payload;
  }
}
