package org.apache.spark.shuffle.sluice;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.client.ClientContext;
import io.sluice.client.ServerRacks;
import java.util.List;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.NodeReport;
import org.apache.hadoop.yarn.api.records.NodeState;
import org.apache.hadoop.yarn.api.records.Resource;
import org.junit.jupiter.api.Test;

/** The servers and racks of YARN node reports, as the ResourceManager hands them out. */
class YarnServerDiscoveryTest {
  private static NodeReport node(String host, String rack) {
    Resource r = Resource.newInstance(8192, 4);
    return NodeReport.newInstance(
        NodeId.newInstance(host, 45454), NodeState.RUNNING, host + ":8042", rack, r, r, 0, "", 0L);
  }

  @Test
  void everyNodeManagerIsAServerOnItsRack() {
    List<NodeReport> nodes =
        List.of(node("nm1", "/dc1/r1"), node("nm2", "/dc1/r2"), node("nm3", null));
    assertThat(YarnServerDiscovery.servers(nodes, 9290))
        .containsExactly(
            ClientContext.address("nm1", 9290),
            ClientContext.address("nm2", 9290),
            ClientContext.address("nm3", 9290));
    ServerRacks racks = YarnServerDiscovery.racks(nodes);
    assertThat(racks.rack("nm1")).isEqualTo("/dc1/r1");
    assertThat(racks.rack("nm2")).isEqualTo("/dc1/r2");
    assertThat(racks.knows("nm3")).as("a node report without a rack").isFalse();
  }

  @Test
  void aDiscoveryThatKnowsNoRacksSaysSo() {
    assertThat(new ConfiguredServers().racks()).isSameAs(ServerRacks.UNKNOWN);
  }
}
