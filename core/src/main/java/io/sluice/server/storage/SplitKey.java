package io.sluice.server.storage;

import io.sluice.common.Ids;

/** Identifies a split: (application, shuffle, partition, epoch). Immutable value. */
public final class SplitKey {
  private final String appId;
  private final int shuffleId;
  private final int partitionId;
  private final int epoch;

  public SplitKey(String appId, int shuffleId, int partitionId, int epoch) {
    this.appId = appId;
    this.shuffleId = shuffleId;
    this.partitionId = partitionId;
    this.epoch = epoch;
  }

  public String appId() {
    return appId;
  }

  public int shuffleId() {
    return shuffleId;
  }

  public int partitionId() {
    return partitionId;
  }

  public int epoch() {
    return epoch;
  }

  /** The split's file name without suffix, e.g. {@code 7-0.data}. */
  String fileName() {
    return partitionId + "-" + epoch + ".data";
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof SplitKey)) {
      return false;
    }
    SplitKey k = (SplitKey) o;
    return shuffleId == k.shuffleId
        && partitionId == k.partitionId
        && epoch == k.epoch
        && appId.equals(k.appId);
  }

  @Override
  public int hashCode() {
    return ((appId.hashCode() * 31 + shuffleId) * 31 + partitionId) * 31 + epoch;
  }

  @Override
  public String toString() {
    return Ids.split(appId, shuffleId, partitionId, epoch);
  }
}
