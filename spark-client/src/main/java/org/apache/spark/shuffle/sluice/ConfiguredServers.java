package org.apache.spark.shuffle.sluice;

import io.sluice.client.ServerList;
import io.sluice.protocol.proto.ServerAddress;
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
    return ServerList.parse(SparkSluiceConf.SERVERS, list);
  }
}
