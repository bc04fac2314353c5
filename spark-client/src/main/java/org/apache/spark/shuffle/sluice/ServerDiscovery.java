package org.apache.spark.shuffle.sluice;

import io.sluice.client.ServerRacks;
import io.sluice.protocol.proto.ServerAddress;
import java.io.IOException;
import java.util.List;
import org.apache.spark.SparkConf;

/**
 * Finds the Sluice servers an application places its shuffles on; called on the driver when the
 * first shuffle is registered. Implementations have a public no-argument constructor.
 *
 * <p>{@link #fromConf} picks one: the configured list ({@code spark.sluice.servers}) when it is
 * set, else the class named by {@code spark.sluice.serverDiscovery}, else, when the application
 * runs on YARN, the NodeManagers of the cluster ({@link YarnServerDiscovery}).
 */
public interface ServerDiscovery {
  /**
   * The servers, at least one.
   *
   * @throws IOException naming what was looked at when no server can be found
   */
  List<ServerAddress> servers(SparkConf conf) throws IOException;

  /**
   * The racks of the servers the last {@link #servers} call found, as far as the discovery knows
   * them (YARN's node reports do); by default none. Hosts without a rack here are resolved by
   * {@code sluice.topology.script} when one is configured.
   */
  default ServerRacks racks() {
    return ServerRacks.UNKNOWN;
  }

  /** The discovery the configuration asks for. */
  static ServerDiscovery fromConf(SparkConf conf) {
    if (conf.contains(SparkSluiceConf.SERVERS)) {
      return new ConfiguredServers();
    }
    String className = conf.get(SparkSluiceConf.SERVER_DISCOVERY, "");
    if (className.isEmpty() && conf.get("spark.master", "").startsWith("yarn")) {
      return new YarnServerDiscovery();
    }
    if (className.isEmpty()) {
      throw new IllegalArgumentException(
          "No Sluice servers: set "
              + SparkSluiceConf.SERVERS
              + " to host:port,host:port,..., run on YARN, or set "
              + SparkSluiceConf.SERVER_DISCOVERY
              + " to a "
              + ServerDiscovery.class.getName()
              + " class");
    }
    try {
      return (ServerDiscovery)
          Class.forName(className, true, Thread.currentThread().getContextClassLoader())
              .getDeclaredConstructor()
              .newInstance();
    } catch (ReflectiveOperationException | ClassCastException e) {
      throw new IllegalArgumentException(
          "Cannot create the server discovery "
              + className
              + " named by "
              + SparkSluiceConf.SERVER_DISCOVERY
              + ": "
              + e,
          e);
    }
  }
}
