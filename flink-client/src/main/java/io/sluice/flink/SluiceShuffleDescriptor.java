package io.sluice.flink;

import io.sluice.protocol.MapPartitionId;
import java.util.Objects;
import java.util.Optional;
import org.apache.flink.runtime.clusterframework.types.ResourceID;
import org.apache.flink.runtime.io.network.partition.ResultPartitionID;
import org.apache.flink.runtime.shuffle.ShuffleDescriptor;

/**
 * Where one Flink result partition lives in Sluice: its map partition and the server holding it.
 * Made by {@link SluiceShuffleMaster} when the producer is deployed, shipped to the producer (which
 * writes there) and to every consumer (which reads there). The data does not live on a TaskManager,
 * so {@link #storesLocalResourcesOn()} is empty and Flink keeps the partition when the producer's
 * TaskManager goes away.
 */
public final class SluiceShuffleDescriptor implements ShuffleDescriptor {
  private static final long serialVersionUID = 1L;

  private final ResultPartitionID resultPartitionId;
  private final MapPartitionId mapPartitionId;
  private final String host;
  private final int port;
  private final int numSubpartitions;

  public SluiceShuffleDescriptor(
      ResultPartitionID resultPartitionId,
      MapPartitionId mapPartitionId,
      String host,
      int port,
      int numSubpartitions) {
    this.resultPartitionId = Objects.requireNonNull(resultPartitionId, "resultPartitionId");
    this.mapPartitionId = Objects.requireNonNull(mapPartitionId, "mapPartitionId");
    this.host = Objects.requireNonNull(host, "host");
    if (port <= 0 || port > 65535) {
      throw new IllegalArgumentException("invalid port " + port);
    }
    this.port = port;
    if (numSubpartitions < 1) {
      throw new IllegalArgumentException("numSubpartitions must be positive: " + numSubpartitions);
    }
    this.numSubpartitions = numSubpartitions;
  }

  @Override
  public ResultPartitionID getResultPartitionID() {
    return resultPartitionId;
  }

  @Override
  public Optional<ResourceID> storesLocalResourcesOn() {
    return Optional.empty();
  }

  public MapPartitionId mapPartitionId() {
    return mapPartitionId;
  }

  public String host() {
    return host;
  }

  public int port() {
    return port;
  }

  public int numSubpartitions() {
    return numSubpartitions;
  }

  @Override
  public String toString() {
    return mapPartitionId
        + " on "
        + host
        + ":"
        + port
        + " ("
        + numSubpartitions
        + " subpartitions, Flink partition "
        + resultPartitionId
        + ")";
  }
}
