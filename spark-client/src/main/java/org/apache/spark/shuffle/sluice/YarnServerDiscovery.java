package org.apache.spark.shuffle.sluice;

import io.sluice.client.ClientContext;
import io.sluice.client.ServerRacks;
import io.sluice.protocol.proto.ServerAddress;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.NodeReport;
import org.apache.hadoop.yarn.api.records.NodeState;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.exceptions.YarnException;
import org.apache.spark.SparkConf;
import org.apache.spark.deploy.SparkHadoopUtil;

/**
 * The Sluice servers of a YARN cluster: every RUNNING NodeManager, whose {@code sluice_shuffle} aux
 * service listens on {@code spark.sluice.server.port} (the {@code sluice.server.port} the
 * NodeManagers were configured with; 9290 by default). Used when the application runs on YARN and
 * {@code spark.sluice.servers} is not set, so a job needs nothing but {@code
 * spark.shuffle.manager}. Asks the ResourceManager once, when the first shuffle is registered. Each
 * NodeManager's rack ({@link NodeReport#getRackName()}) is the rack of its server: with replicas,
 * the replica goes to another rack when there is one.
 */
public final class YarnServerDiscovery implements ServerDiscovery {
  /** The port of the aux services, as the NodeManagers' {@code sluice.server.port}. */
  public static final String SERVER_PORT = "spark.sluice.server.port";

  static final int DEFAULT_PORT = 9290;

  private volatile ServerRacks racks = ServerRacks.UNKNOWN;

  @Override
  public List<ServerAddress> servers(SparkConf conf) throws IOException {
    int port = conf.getInt(SERVER_PORT, DEFAULT_PORT);
    Configuration hadoop = SparkHadoopUtil.get().newConfiguration(conf);
    YarnClient yarn = YarnClient.createYarnClient();
    yarn.init(hadoop);
    yarn.start();
    try {
      List<NodeReport> nodes = yarn.getNodeReports(NodeState.RUNNING);
      List<ServerAddress> servers = servers(nodes, port);
      racks = racks(nodes);
      if (servers.isEmpty()) {
        throw new IOException(
            "The YARN ResourceManager at "
                + hadoop.get("yarn.resourcemanager.address", "(yarn.resourcemanager.address unset)")
                + " reports no RUNNING NodeManager to place Sluice shuffles on; set "
                + SparkSluiceConf.SERVERS
                + " to list servers instead");
      }
      return servers;
    } catch (YarnException e) {
      throw new IOException(
          "Cannot list the NodeManagers of the YARN cluster to find Sluice servers: "
              + e.getMessage(),
          e);
    } finally {
      yarn.stop();
    }
  }

  @Override
  public ServerRacks racks() {
    return racks;
  }

  /** The server of each NodeManager. */
  static List<ServerAddress> servers(List<NodeReport> nodes, int port) {
    List<ServerAddress> servers = new ArrayList<>();
    for (NodeReport node : nodes) {
      servers.add(ClientContext.address(node.getNodeId().getHost(), port));
    }
    return servers;
  }

  /** Each NodeManager's host and rack, as its node report names them (none: unknown). */
  static ServerRacks racks(List<NodeReport> nodes) {
    Map<String, String> racks = new HashMap<>();
    for (NodeReport node : nodes) {
      racks.put(node.getNodeId().getHost(), node.getRackName());
    }
    return ServerRacks.of(racks);
  }
}
