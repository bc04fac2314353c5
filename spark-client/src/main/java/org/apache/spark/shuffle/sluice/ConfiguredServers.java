package org.apache.spark.shuffle.sluice;

import io.sluice.client.ClientContext;
import io.sluice.protocol.proto.ServerAddress;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.SparkConf;

/** The servers listed in {@code spark.sluice.servers} as {@code host:port,host:port,...}. */
public final class ConfiguredServers implements ServerDiscovery {
  @Override
  public List<ServerAddress> servers(SparkConf conf) {
    return parse(conf.get(SparkSluiceConf.SERVERS, ""));
  }

  /**
   * Parses a server list.
   *
   * @throws IllegalArgumentException naming the entry when one is not {@code host:port}
   */
  static List<ServerAddress> parse(String list) {
    List<ServerAddress> servers = new ArrayList<>();
    for (String entry : list.split(",")) {
      String e = entry.trim();
      if (e.isEmpty()) {
        continue;
      }
      int colon = e.lastIndexOf(':');
      int port = -1;
      if (colon > 0) {
        try {
          port = Integer.parseInt(e.substring(colon + 1));
        } catch (NumberFormatException ignored) {
          port = -1;
        }
      }
      if (port <= 0 || port > 65535) {
        throw new IllegalArgumentException(
            "Invalid entry '" + e + "' in " + SparkSluiceConf.SERVERS + ": expected host:port");
      }
      servers.add(ClientContext.address(e.substring(0, colon), port));
    }
    if (servers.isEmpty()) {
      throw new IllegalArgumentException(
          SparkSluiceConf.SERVERS + " lists no server: '" + list + "'");
    }
    return servers;
  }
}
