package io.sluice.server.storage;

import io.sluice.protocol.RequestLimits;

/**
 * What a shuffle registered: its number of maps and of partitions (subpartitions for map
 * partitions). Every map index and partition in a later request of the shuffle is checked against
 * it before the server allocates anything for the request. Immutable.
 */
public final class ShuffleShape {
  /** The shape of a shuffle recorded before shapes were: only the protocol's own maxima apply. */
  public static final ShuffleShape UNKNOWN = new ShuffleShape(Integer.MAX_VALUE, Integer.MAX_VALUE);

  private final int numMaps;
  private final int numPartitions;

  private ShuffleShape(int numMaps, int numPartitions) {
    this.numMaps = numMaps;
    this.numPartitions = numPartitions;
  }

  /**
   * @throws IllegalArgumentException naming the count when the shape is not valid
   */
  public static ShuffleShape of(int numMaps, int numPartitions) {
    String problem = RequestLimits.checkShape(numMaps, numPartitions);
    if (problem != null) {
      throw new IllegalArgumentException(problem);
    }
    return new ShuffleShape(numMaps, numPartitions);
  }

  /** A recorded shape; counts of 0 (records older than shapes) mean {@link #UNKNOWN}. */
  public static ShuffleShape recorded(int numMaps, int numPartitions) {
    return numMaps == 0 && numPartitions == 0 ? UNKNOWN : of(numMaps, numPartitions);
  }

  public int numMaps() {
    return numMaps;
  }

  public int numPartitions() {
    return numPartitions;
  }

  /** Null when {@code mapIndex} is one of the shuffle's maps, else what is wrong. */
  public String checkMap(int mapIndex) {
    return RequestLimits.checkIndex("map index", mapIndex, numMaps, "the shuffle's num_maps");
  }

  /** Null when {@code partition} is one of the shuffle's partitions, else what is wrong. */
  public String checkPartition(int partition) {
    return RequestLimits.checkIndex(
        "partition", partition, numPartitions, "the shuffle's num_partitions");
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ShuffleShape
        && ((ShuffleShape) o).numMaps == numMaps
        && ((ShuffleShape) o).numPartitions == numPartitions;
  }

  @Override
  public int hashCode() {
    return 31 * numMaps + numPartitions;
  }

  @Override
  public String toString() {
    return numMaps + " maps and " + numPartitions + " partitions";
  }
}
