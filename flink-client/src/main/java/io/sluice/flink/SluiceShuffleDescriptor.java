package io.sluice.flink;

import io.sluice.client.ClientContext;
import io.sluice.protocol.MapPartitionId;
import io.sluice.protocol.proto.ServerAddress;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.apache.flink.runtime.clusterframework.types.ResourceID;
import org.apache.flink.runtime.io.network.partition.ResultPartitionID;
import org.apache.flink.runtime.shuffle.ShuffleDescriptor;

/**
 * Where one Flink result partition lives in Sluice: its map partition and the server holding it,
 * plus, with {@code sluice.replication.factor} 2, the server holding its replica (the replica
 * fields are null and 0 without one, also in a descriptor serialized before they existed). Made by
 * {@link SluiceShuffleMaster} when the producer is deployed, shipped to the producer (which writes
 * every copy) and to every consumer (which reads the primary and falls back to the replica). The
 * data does not live on a TaskManager, so {@link #storesLocalResourcesOn()} is empty and Flink
 * keeps the partition when the producer's TaskManager goes away.
 */
public final class SluiceShuffleDescriptor implements ShuffleDescriptor {
  private static final long serialVersionUID = 1L;

  private final ResultPartitionID resultPartitionId;
  private final MapPartitionId mapPartitionId;
  private final String host;
  private final int port;
  private final int numSubpartitions;
  private final String replicaHost;
  private final int replicaPort;

  /** A partition with one copy. */
  public SluiceShuffleDescriptor(
      ResultPartitionID resultPartitionId,
      MapPartitionId mapPartitionId,
      String host,
      int port,
      int numSubpartitions) {
    this(resultPartitionId, mapPartitionId, host, port, null, 0, numSubpartitions);
  }

  /**
   * A partition with a primary at {@code host:port} and, unless {@code replicaHost} is null, a
   * replica at {@code replicaHost:replicaPort}.
   */
  public SluiceShuffleDescriptor(
      ResultPartitionID resultPartitionId,
      MapPartitionId mapPartitionId,
      String host,
      int port,
      String replicaHost,
      int replicaPort,
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
    if (replicaHost != null && (replicaPort <= 0 || replicaPort > 65535)) {
      throw new IllegalArgumentException("invalid replica port " + replicaPort);
    }
    this.replicaHost = replicaHost;
    this.replicaPort = replicaHost == null ? 0 : replicaPort;
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

  /** The replica's host, or null when the partition has one copy. */
  public String replicaHost() {
    return replicaHost;
  }

  /** The replica's port, or 0 when the partition has one copy. */
  public int replicaPort() {
    return replicaPort;
  }

  /** The servers of the partition's copies: the primary, then the replica if any. */
  public List<ServerAddress> servers() {
    ServerAddress primary = ClientContext.address(host, port);
    return replicaHost == null
        ? List.of(primary)
        : List.of(primary, ClientContext.address(replicaHost, replicaPort));
  }

  /** The servers, as {@code host:port} separated by commas. */
  String serverList() {
    return host + ":" + port + (replicaHost == null ? "" : "," + replicaHost + ":" + replicaPort);
  }

  @Override
  public String toString() {
    return mapPartitionId
        + " on "
        + serverList()
        + " ("
        + numSubpartitions
        + " subpartitions, Flink partition "
        + resultPartitionId
        + ")";
  }
}
