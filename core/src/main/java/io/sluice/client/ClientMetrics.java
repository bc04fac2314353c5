package io.sluice.client;

import com.codahale.metrics.Meter;
import com.codahale.metrics.MetricRegistry;
import com.codahale.metrics.Timer;
import java.util.concurrent.TimeUnit;

/**
 * What the client library of one JVM counts about failures it hid from the engine, so an operator
 * sees them without reading logs. The engines publish {@link #registry} through their own metrics
 * systems: Spark as the source {@code sluice} of the driver and of every executor, Flink as the
 * group {@code Shuffle.Sluice} of every TaskManager.
 *
 * <ul>
 *   <li>{@code sluice.client.readFailovers}: reads of a partition that moved to its other copy
 *       after the first one failed (mid-stream included);
 *   <li>{@code sluice.client.serverWaits}: retries of a server that refused or dropped a
 *       connection, made while it may be restarting instead of taking its data for lost ({@code
 *       sluice.client.serverRestartWait}): reads opened again, commits asked again, placements that
 *       waited for it;
 *   <li>{@code sluice.client.partitionsMoved}: partitions a coordinator in this JVM moved to new
 *       servers (a full split, a refused push, a failed server);
 *   <li>{@code sluice.client.serverFailures}: servers a coordinator in this JVM found failed under
 *       a push, each moving all partitions of a shuffle it held in one round (batch revive);
 *   <li>{@code sluice.client.replicaAckLag}: for each push to two copies, how long after the first
 *       copy's acknowledgement the second one came (replica lag: what waiting for both costs).
 * </ul>
 */
public final class ClientMetrics {
  public static final String PREFIX = "sluice.client.";

  private final MetricRegistry registry = new MetricRegistry();
  private final Meter readFailovers = registry.meter(PREFIX + "readFailovers");
  private final Meter serverWaits = registry.meter(PREFIX + "serverWaits");
  private final Meter partitionsMoved = registry.meter(PREFIX + "partitionsMoved");
  private final Meter serverFailures = registry.meter(PREFIX + "serverFailures");
  private final Meter remoteSplitsRead = registry.meter(PREFIX + "remoteSplitsRead");
  private final Meter remoteBytesRead = registry.meter(PREFIX + "remoteBytesRead");
  private final Timer replicaAckLag = registry.timer(PREFIX + "replicaAckLag");

  public MetricRegistry registry() {
    return registry;
  }

  public void readFailedOver() {
    readFailovers.mark();
  }

  /** A server that refused or dropped a connection was retried while it may be restarting. */
  public void waitedForServer() {
    serverWaits.mark();
  }

  public void partitionsMoved(int count) {
    partitionsMoved.mark(count);
  }

  public void serverFailed() {
    serverFailures.mark();
  }

  /** The two copies of a push were acknowledged {@code nanos} apart. */
  public void replicaAckLag(long nanos) {
    replicaAckLag.update(Math.max(0, nanos), TimeUnit.NANOSECONDS);
  }

  /** A split of the distributed tier was opened, read from its file system, not a server. */
  public void remoteSplitRead() {
    remoteSplitsRead.mark();
  }

  public long remoteSplitsRead() {
    return remoteSplitsRead.getCount();
  }

  /** Bytes of data read from splits of the distributed tier (trailers not counted). */
  public void remoteBytesRead(long bytes) {
    remoteBytesRead.mark(bytes);
  }

  public long remoteBytesRead() {
    return remoteBytesRead.getCount();
  }

  public long readFailovers() {
    return readFailovers.getCount();
  }

  public long serverWaits() {
    return serverWaits.getCount();
  }

  public long partitionsMoved() {
    return partitionsMoved.getCount();
  }

  public long serverFailures() {
    return serverFailures.getCount();
  }

  public long replicaAcks() {
    return replicaAckLag.getCount();
  }
}
