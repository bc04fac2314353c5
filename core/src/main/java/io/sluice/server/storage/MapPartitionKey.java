package io.sluice.server.storage;

import io.sluice.common.Ids;
import io.sluice.protocol.proto.MapPartitionRef;
import java.util.Objects;

/** Names a map partition on the server: application, shuffle, map index and attempt. */
public final class MapPartitionKey {
  private final String appId;
  private final int shuffleId;
  private final int mapIndex;
  private final int attempt;

  public MapPartitionKey(String appId, int shuffleId, int mapIndex, int attempt) {
    this.appId = appId;
    this.shuffleId = shuffleId;
    this.mapIndex = mapIndex;
    this.attempt = attempt;
  }

  /**
   * @throws IllegalArgumentException naming what is wrong with the reference
   */
  public static MapPartitionKey of(MapPartitionRef ref) {
    Ids.checkAppId(ref.getAppId());
    if (ref.getShuffleId() < 0 || ref.getMapIndex() < 0 || ref.getAttempt() < 0) {
      throw new IllegalArgumentException(
          "negative shuffle, map index or attempt in map partition reference "
              + ref.getShuffleId()
              + "/"
              + ref.getMapIndex()
              + "/"
              + ref.getAttempt());
    }
    return new MapPartitionKey(
        ref.getAppId(), ref.getShuffleId(), ref.getMapIndex(), ref.getAttempt());
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
   * {@code map-<mapIndex>-<attempt>}: the data file adds {@code .data}, the index {@code .index}.
   */
  public String fileBaseName() {
    return "map-" + mapIndex + "-" + attempt;
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof MapPartitionKey)) {
      return false;
    }
    MapPartitionKey k = (MapPartitionKey) o;
    return appId.equals(k.appId)
        && shuffleId == k.shuffleId
        && mapIndex == k.mapIndex
        && attempt == k.attempt;
  }

  @Override
  public int hashCode() {
    return Objects.hash(appId, shuffleId, mapIndex, attempt);
  }

  @Override
  public String toString() {
    return Ids.shuffle(appId, shuffleId) + " map " + mapIndex + " attempt " + attempt;
  }
}
