package io.sluice.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.client.ClientContext;
import io.sluice.client.PartitionLocations;
import io.sluice.client.coordinator.CoordinatorClient;
import io.sluice.client.coordinator.ShuffleCoordinator;
import io.sluice.client.mappartition.MapPartitionPlacement;
import io.sluice.client.push.MapOutputPusher;
import io.sluice.client.read.PartitionReader;
import io.sluice.client.read.ShuffleBatch;
import io.sluice.protocol.proto.CommittedShuffle;
import io.sluice.protocol.proto.CommittedSplit;
import io.sluice.protocol.proto.PartitionLocation;
import io.sluice.protocol.proto.ServerAddress;
import io.sluice.testutil.BlackHoleProxy;
import io.sluice.testutil.Records;
import io.sluice.testutil.TestCluster;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Rack-aware replicas end to end: four real servers on four loopback hosts (127.0.0.1 to 127.0.0.4,
 * each a proxy in front of a server, whose close cuts the server off as a crash would), given racks
 * by a real topology script ({@code sluice.topology.script}): /r1 holds the first two hosts, /r2
 * the last two. In placement order the next server on another host is most often on the same rack,
 * so the host rule alone would keep both copies of half the partitions on one rack.
 */
class RackReplicationIT {
  private static final String APP = "app-racks";
  private static final int SHUFFLE = 0;
  private static final int MAPS = 2;
  private static final int PARTITIONS = 8;
  private static final int RECORDS = 200;

  @TempDir Path tmp;

  private TestCluster cluster;
  private final List<BlackHoleProxy> proxies = new ArrayList<>();
  private final List<ServerAddress> addresses = new ArrayList<>();
  private ShuffleCoordinator coordinator;
  private CoordinatorClient client;

  private static String rack(ServerAddress s) {
    return s.getHost().equals("127.0.0.1") || s.getHost().equals("127.0.0.2") ? "/r1" : "/r2";
  }

  private void start() throws Exception {
    Path script = tmp.resolve("topology.sh");
    Files.writeString(
        script,
        "#!/bin/sh\n"
            + "for h in \"$@\"; do\n"
            + "  case \"$h\" in 127.0.0.1|127.0.0.2) echo /r1 ;; *) echo /r2 ;; esac\n"
            + "done\n",
        StandardCharsets.UTF_8);
    Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwx------"));
    cluster =
        TestCluster.start(
            tmp.resolve("cluster"),
            4,
            Map.of(
                "sluice.server.host", "0.0.0.0",
                "sluice.replication.factor", "2",
                "sluice.topology.script", script.toString(),
                "sluice.push.bufferSize", "2k",
                "sluice.network.connectTimeout", "2s"));
    for (int i = 0; i < 4; i++) {
      String host = "127.0.0." + (i + 1);
      BlackHoleProxy proxy = new BlackHoleProxy(host, cluster.server(i).port());
      proxies.add(proxy);
      addresses.add(ClientContext.address(host, proxy.port()));
    }
    coordinator = new ShuffleCoordinator(APP, addresses, cluster.context(), "127.0.0.1");
    client =
        new CoordinatorClient(
            cluster.context(), APP, ClientContext.address("127.0.0.1", coordinator.port()));
    coordinator.registerShuffle(SHUFFLE, MAPS, PARTITIONS);
  }

  @AfterEach
  void stop() {
    for (BlackHoleProxy p : proxies) {
      p.close();
    }
    if (coordinator != null) {
      coordinator.close();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  private void writeMap(int map) throws Exception {
    try (MapOutputPusher pusher =
        new MapOutputPusher(
            cluster.context(), client, APP, SHUFFLE, map, 0, client.locations(SHUFFLE))) {
      for (int seq = 0; seq < RECORDS; seq++) {
        for (int p = 0; p < PARTITIONS; p++) {
          byte[] r = Records.record(map, p, seq, 60);
          pusher.write(p, r, 0, r.length);
        }
      }
      pusher.finish();
    }
  }

  private void assertReadsBackWhole() throws Exception {
    CommittedShuffle committed = client.committedSplits(SHUFFLE, 0, PARTITIONS, true);
    assertThat(committed.getNumLostPartitions()).as(committed.getLostReason()).isZero();
    Records.Checker checker = new Records.Checker();
    try (PartitionReader reader =
        new PartitionReader(cluster.context(), APP, SHUFFLE, committed, 0, MAPS)) {
      for (ShuffleBatch b = reader.next(); b != null; b = reader.next()) {
        checker.accept(b.partitionId(), b.payload());
      }
    }
    for (int m = 0; m < MAPS; m++) {
      for (int p = 0; p < PARTITIONS; p++) {
        assertThat(checker.count(m, p)).as("map %d partition %d", m, p).isEqualTo(RECORDS);
      }
    }
  }

  private static void assertCopiesOnTwoRacks(PartitionLocations locations) {
    for (int p = 0; p < PARTITIONS; p++) {
      PartitionLocation l = locations.location(p);
      assertThat(l.hasReplica()).as("partition %d has a replica", p).isTrue();
      assertThat(rack(l.getReplica()))
          .as("rack of partition %d's replica %s (primary %s)", p, l.getReplica(), l.getServer())
          .isNotEqualTo(rack(l.getServer()));
    }
  }

  @Test
  void everyReplicaIsOnTheOtherRackAndTheDataReadsBack() throws Exception {
    start();
    PartitionLocations locations = client.locations(SHUFFLE);
    assertThat(locations.placementRacks()).containsOnly("/r1", "/r2");
    assertCopiesOnTwoRacks(locations);
    writeMap(0);
    writeMap(1);
    CommittedShuffle committed = client.committedSplits(SHUFFLE, 0, PARTITIONS, true);
    for (int p = 0; p < PARTITIONS; p++) {
      Set<String> racks = new HashSet<>();
      for (CommittedSplit s : committed.getSplitsList()) {
        if (s.getPartitionId() == p) {
          racks.add(rack(s.getServer()));
        }
      }
      assertThat(racks).as("racks holding partition %d", p).containsExactlyInAnyOrder("/r1", "/r2");
    }
    assertReadsBackWhole();
  }

  /**
   * A server of /r1 is lost while maps push: its partitions move, each new replica on the other
   * rack than the surviving copy (the one server left on /r1 for the copies that survived on /r2).
   */
  @Test
  void aLostServersPartitionsGetTheirNewReplicasOnTheOtherRack() throws Exception {
    start();
    writeMap(0);
    proxies.get(0).close();
    writeMap(1);
    PartitionLocations after = client.locations(SHUFFLE);
    assertThat(after.numMoves()).as("partitions moved off the lost server").isPositive();
    ServerAddress lost = addresses.get(0);
    for (int p = 0; p < PARTITIONS; p++) {
      PartitionLocation l = after.location(p);
      assertThat(l.getServer()).as("partition %d", p).isNotEqualTo(lost);
      assertThat(l.getReplica()).as("partition %d's replica", p).isNotEqualTo(lost);
    }
    assertCopiesOnTwoRacks(after);
    assertReadsBackWhole();
  }

  /** Flink's map partitions take the same rule: each partition's replica on the other rack. */
  @Test
  void mapPartitionReplicasGoToTheOtherRack() throws Exception {
    start();
    List<InetSocketAddress> servers = new ArrayList<>();
    for (ServerAddress a : addresses) {
      servers.add(InetSocketAddress.createUnresolved(a.getHost(), a.getPort()));
    }
    try (MapPartitionPlacement placement =
        new MapPartitionPlacement(cluster.context(), "app-racks-flink", servers, lost -> {})) {
      for (int i = 0; i < 4; i++) {
        List<InetSocketAddress> copies = placement.place(1, 4, 2, 2).get();
        assertThat(copies).hasSize(2);
        ServerAddress primary =
            ClientContext.address(copies.get(0).getHostString(), copies.get(0).getPort());
        ServerAddress replica =
            ClientContext.address(copies.get(1).getHostString(), copies.get(1).getPort());
        assertThat(rack(replica))
            .as("rack of the replica %s of a map partition on %s", replica, primary)
            .isNotEqualTo(rack(primary));
      }
    }
  }
}
