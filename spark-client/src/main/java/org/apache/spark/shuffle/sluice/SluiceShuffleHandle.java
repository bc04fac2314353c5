package org.apache.spark.shuffle.sluice;

import io.sluice.client.ClientContext;
import io.sluice.protocol.proto.ServerAddress;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.shuffle.BaseShuffleHandle;

/**
 * What tasks need to write and read a shuffle through Sluice: the application, where its
 * coordinator listens, and the map count. Shipped to executors inside the dependency.
 */
public final class SluiceShuffleHandle<K, V, C> extends BaseShuffleHandle<K, V, C> {
  private static final long serialVersionUID = 1L;

  private final String appId;
  private final String coordinatorHost;
  private final int coordinatorPort;
  private final int numMaps;

  SluiceShuffleHandle(
      int shuffleId,
      ShuffleDependency<K, V, C> dependency,
      String appId,
      String coordinatorHost,
      int coordinatorPort,
      int numMaps) {
    super(shuffleId, dependency);
    this.appId = appId;
    this.coordinatorHost = coordinatorHost;
    this.coordinatorPort = coordinatorPort;
    this.numMaps = numMaps;
  }

  public String appId() {
    return appId;
  }

  public ServerAddress coordinator() {
    return ClientContext.address(coordinatorHost, coordinatorPort);
  }

  public int numMaps() {
    return numMaps;
  }

  /** "app X shuffle N" for errors and logs. */
  String describe() {
    return "app " + appId + " shuffle " + shuffleId();
  }
}
