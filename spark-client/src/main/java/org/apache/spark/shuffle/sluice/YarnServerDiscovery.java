package org.apache.spark.shuffle.sluice;

import io.sluice.client.ClientContext;
import io.sluice.protocol.proto.ServerAddress;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
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
 * spark.shuffle.manager}. Asks the ResourceManager once, when the first shuffle is registered.
 */
public final class YarnServerDiscovery implements ServerDiscovery {
  /** The port of the aux services, as the NodeManagers' {@code sluice.server.port}. */
  public static final String SERVER_PORT = "spark.sluice.server.port";

  static final int DEFAULT_PORT = 9290;

  @Override
  public List<ServerAddress> servers(SparkConf conf) throws IOException {
    int port = conf.getInt(SERVER_PORT, DEFAULT_PORT);
    Configuration hadoop = SparkHadoopUtil.get().newConfiguration(conf);
    YarnClient yarn = YarnClient.createYarnClient();
    yarn.init(hadoop);
    yarn.start();
    try {
      List<ServerAddress> servers = new ArrayList<>();
      for (NodeReport node : yarn.getNodeReports(NodeState.RUNNING)) {
        servers.add(ClientContext.address(node.getNodeId().getHost(), port));
      }
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
}
