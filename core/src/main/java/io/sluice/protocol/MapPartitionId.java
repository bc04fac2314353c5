package io.sluice.protocol;

import io.sluice.common.Ids;
import io.sluice.protocol.proto.MapPartitionRef;
import java.io.Serializable;
import java.util.Objects;

/**
 * Names one map partition: the whole output of one producer attempt (a Flink producer subtask),
 * kept in one file on one server. Serializable so engines can ship it inside their descriptors.
 */
public final class MapPartitionId implements Serializable {
  private static final long serialVersionUID = 1L;

  private final String appId;
  private final int shuffleId;
  private final int mapIndex;
  private final int attempt;

  public MapPartitionId(String appId, int shuffleId, int mapIndex, int attempt) {
    this.appId = Ids.checkAppId(appId);
    if (shuffleId < 0 || mapIndex < 0 || attempt < 0) {
      throw new IllegalArgumentException(
          "negative shuffle, map index or attempt ("
              + shuffleId
              + ", "
              + mapIndex
              + ", "
              + attempt
              + ")");
    }
    this.shuffleId = shuffleId;
    this.mapIndex = mapIndex;
    this.attempt = attempt;
  }

  public String appId() {
    return appId;
  }

  public int shuffleId() {
    return shuffleId;
  }

  public int mapIndex() {
    return mapIndex;
  }

  public int attempt() {
    return attempt;
  }

  /**
   * The partition a request names.
   *
   * @throws IllegalArgumentException naming what is wrong with the reference
   */
  public static MapPartitionId of(MapPartitionRef ref) {
    return new MapPartitionId(
        ref.getAppId(), ref.getShuffleId(), ref.getMapIndex(), ref.getAttempt());
  }

  /** The partition as requests name it. */
  public MapPartitionRef ref() {
    return MapPartitionRef.newBuilder()
        .setAppId(appId)
        .setShuffleId(shuffleId)
        .setMapIndex(mapIndex)
        .setAttempt(attempt)
        .build();
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof MapPartitionId)) {
      return false;
    }
    MapPartitionId other = (MapPartitionId) o;
    return appId.equals(other.appId)
        && shuffleId == other.shuffleId
        && mapIndex == other.mapIndex
        && attempt == other.attempt;
  }

  @Override
  public int hashCode() {
    return Objects.hash(appId, shuffleId, mapIndex, attempt);
  }

  /** "app A shuffle S map M attempt T", as logs and errors name it. */
  @Override
  public String toString() {
    return Ids.shuffle(appId, shuffleId) + " map " + mapIndex + " attempt " + attempt;
  }
}
