package io.sluice.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.sluice.client.ClientContext;
import io.sluice.client.ClientMetrics;
import io.sluice.client.PartitionLocations;
import io.sluice.client.coordinator.CoordinatorClient;
import io.sluice.client.coordinator.ShuffleCoordinator;
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
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * With {@code sluice.replication.factor} 2, losing one server at any moment loses no data: three
 * servers, each behind a proxy whose close cuts it off as a crash would (connections closed, new
 * ones refused). A server lost while maps push moves every partition it held in one round and the
 * commit is whole; a server lost after the commit, or in the middle of a read, is read from the
 * other copy. With factor 1 the same loss before the commit loses partitions (the engine reruns).
 */
class ReplicationIT {
  private static final String APP = "app-replicated";
  private static final int SHUFFLE = 0;
  private static final int MAPS = 2;
  private static final int PARTITIONS = 6;
  private static final int RECORDS = 300;

  @TempDir Path tmp;

  private TestCluster cluster;
  private final List<BlackHoleProxy> proxies = new ArrayList<>();
  private ShuffleCoordinator coordinator;
  private CoordinatorClient client;

  private void start(int factor) throws Exception {
    start(factor, Map.of());
  }

  private void start(int factor, Map<String, String> extra) throws Exception {
    Map<String, String> conf =
        new HashMap<>(
            Map.of(
                "sluice.replication.factor", "" + factor,
                "sluice.read.chunkSize", "8k",
                "sluice.read.prefetchChunks", "1",
                "sluice.push.bufferSize", "2k",
                "sluice.network.connectTimeout", "2s"));
    conf.putAll(extra);
    cluster = TestCluster.start(tmp, 3, conf);
    List<ServerAddress> addresses = new ArrayList<>();
    for (ServerAddress s : cluster.addresses()) {
      BlackHoleProxy proxy = new BlackHoleProxy("127.0.0.1", s.getPort());
      proxies.add(proxy);
      addresses.add(ClientContext.address("127.0.0.1", proxy.port()));
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

  private ServerAddress proxied(int server) {
    return ClientContext.address("127.0.0.1", proxies.get(server).port());
  }

  /** Cuts server {@code i} off: its connections close, new ones are refused. */
  private void kill(int i) {
    proxies.get(i).close();
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

  private PartitionReader reader(int start, int end) throws Exception {
    CommittedShuffle committed = client.committedSplits(SHUFFLE, start, end, true);
    return new PartitionReader(cluster.context(), APP, SHUFFLE, committed, 0, MAPS);
  }

  private void assertComplete(Records.Checker checker) {
    for (int m = 0; m < MAPS; m++) {
      for (int p = 0; p < PARTITIONS; p++) {
        assertThat(checker.count(m, p)).as("map %d partition %d", m, p).isEqualTo(RECORDS);
      }
    }
  }

  private Records.Checker readAll() throws Exception {
    Records.Checker checker = new Records.Checker();
    try (PartitionReader reader = reader(0, PARTITIONS)) {
      for (ShuffleBatch b = reader.next(); b != null; b = reader.next()) {
        checker.accept(b.partitionId(), b.payload());
      }
    }
    return checker;
  }

  @Test
  void everySplitHasTwoCommittedCopiesOnTwoServers() throws Exception {
    start(2);
    PartitionLocations locations = client.locations(SHUFFLE);
    for (int p = 0; p < PARTITIONS; p++) {
      PartitionLocation l = locations.location(p);
      assertThat(l.hasReplica()).as("partition %d has a replica", p).isTrue();
      assertThat(l.getReplica()).as("partition %d", p).isNotEqualTo(l.getServer());
    }
    writeMap(0);
    writeMap(1);
    CommittedShuffle committed = client.committedSplits(SHUFFLE, 0, PARTITIONS, true);
    assertThat(committed.getNumLostPartitions()).isZero();
    for (int p = 0; p < PARTITIONS; p++) {
      Set<ServerAddress> holders = new HashSet<>();
      for (CommittedSplit s : committed.getSplitsList()) {
        if (s.getPartitionId() == p) {
          holders.add(s.getServer());
        }
      }
      assertThat(holders).as("servers holding partition %d", p).hasSize(2);
    }
    assertComplete(readAll());
    long replicaBytes = 0;
    for (int i = 0; i < 3; i++) {
      replicaBytes += cluster.server(i).metrics().replicaBytesPushed().getCount();
    }
    assertThat(replicaBytes).as("replica bytes the servers took").isPositive();
    ClientMetrics metrics = cluster.context().metrics();
    assertThat(metrics.replicaAcks()).as("pushes acknowledged by both copies").isPositive();
    assertThat(metrics.readFailovers()).isZero();
    assertThat(metrics.partitionsMoved()).isZero();
  }

  @Test
  void aServerLostWhileMapsPushMovesItsPartitionsInOneRoundAndTheCommitIsWhole() throws Exception {
    start(2);
    writeMap(0);
    kill(1);
    writeMap(1); // pushes to server 1 fail: every partition it held moves

    ClientMetrics metrics = cluster.context().metrics();
    assertThat(metrics.serverFailures()).as("batch revives").isEqualTo(1);
    // server 1 was the primary of 2 of the 6 partitions and the replica of 2 others
    assertThat(metrics.partitionsMoved()).as("partitions moved").isEqualTo(4);
    PartitionLocations after = client.locations(SHUFFLE);
    for (int p = 0; p < PARTITIONS; p++) {
      PartitionLocation l = after.location(p);
      assertThat(l.getServer()).as("partition %d", p).isNotEqualTo(proxied(1));
      assertThat(l.getReplica()).as("partition %d's replica", p).isNotEqualTo(proxied(1));
    }
    CommittedShuffle committed = client.committedSplits(SHUFFLE, 0, PARTITIONS, true);
    assertThat(committed.getNumLostPartitions()).as(committed.getLostReason()).isZero();
    assertComplete(readAll());
  }

  /**
   * A server goes silent in the middle of the map stage (a black-holed host: its connections stay
   * open and nothing is answered). Pushes to it would each wait sluice.network.requestTimeout
   * (120s); a ping finds it silent after sluice.network.silentAfter and its partitions move at
   * once, so the map finishes long before one request timeout and nothing is lost.
   */
  @Test
  void aServerThatGoesSilentWhileMapsPushIsLeftWithinSilentAfter() throws Exception {
    start(2, Map.of("sluice.network.silentAfter", "300ms"));
    writeMap(0);
    proxies.get(1).blackHole();
    assertTimeoutPreemptively(Duration.ofSeconds(60), () -> writeMap(1));

    ClientMetrics metrics = cluster.context().metrics();
    assertThat(metrics.serverFailures()).as("batch revives").isEqualTo(1);
    PartitionLocations after = client.locations(SHUFFLE);
    for (int p = 0; p < PARTITIONS; p++) {
      PartitionLocation l = after.location(p);
      assertThat(l.getServer()).as("partition %d", p).isNotEqualTo(proxied(1));
      assertThat(l.getReplica()).as("partition %d's replica", p).isNotEqualTo(proxied(1));
    }
    // the commit does not wait a request timeout for the silent server either
    CommittedShuffle committed =
        assertTimeoutPreemptively(
            Duration.ofSeconds(60), () -> client.committedSplits(SHUFFLE, 0, PARTITIONS, true));
    assertThat(committed.getNumLostPartitions()).as(committed.getLostReason()).isZero();
    assertComplete(readAll());
  }

  /**
   * A server stopped gracefully in the middle of the map stage (an upgrade): it commits what it
   * holds and goes; nothing is handed over, no push fails a map, and the other copies serve.
   */
  @Test
  void aServerStoppedGracefullyWhileMapsPushFailsNothing() throws Exception {
    start(2);
    writeMap(0);
    cluster.server(1).close();
    writeMap(1);
    CommittedShuffle committed = client.committedSplits(SHUFFLE, 0, PARTITIONS, true);
    assertThat(committed.getNumLostPartitions()).as(committed.getLostReason()).isZero();
    assertComplete(readAll());
  }

  @Test
  void withoutReplicasTheSameLossLosesPartitions() throws Exception {
    start(1);
    writeMap(0);
    kill(1);
    writeMap(1);
    assertThatThrownBy(this::readAll).hasMessageContaining("lost");
  }

  @Test
  void aServerLostAfterTheCommitIsReadFromTheOtherCopies() throws Exception {
    start(2);
    writeMap(0);
    writeMap(1);
    client.committedSplits(SHUFFLE, 0, PARTITIONS, true);
    kill(2);
    assertComplete(readAll());
  }

  /**
   * One reader of partition 0 reads a first batch, then one of the two servers holding the
   * partition goes: the one being read (the reader goes on from the other copy, dropping what it
   * handed out already) or the other one (nothing changes). Either way every record comes once.
   */
  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  void aServerLostInTheMiddleOfAReadIsReadFromTheOtherCopy(boolean theOneRead) throws Exception {
    start(2);
    writeMap(0);
    writeMap(1);
    PartitionLocation l = client.locations(SHUFFLE).location(0);
    Records.Checker checker = new Records.Checker();
    try (PartitionReader reader = reader(0, 1)) {
      ShuffleBatch first = reader.next();
      checker.accept(first.partitionId(), first.payload());
      ServerAddress read = reader.server();
      assertThat(read).isIn(l.getServer(), l.getReplica());
      ServerAddress victim =
          theOneRead ? read : read.equals(l.getServer()) ? l.getReplica() : l.getServer();
      for (int i = 0; i < 3; i++) {
        if (proxied(i).equals(victim)) {
          kill(i);
        }
      }
      for (ShuffleBatch b = reader.next(); b != null; b = reader.next()) {
        checker.accept(b.partitionId(), b.payload());
      }
      assertThat(reader.server()).isNull();
    }
    assertThat(cluster.context().metrics().readFailovers())
        .as("reads that moved to the other copy")
        .isEqualTo(theOneRead ? 1 : 0);
    for (int m = 0; m < MAPS; m++) {
      assertThat(checker.count(m, 0)).as("map %d", m).isEqualTo(RECORDS);
    }
  }

  /**
   * The server a reader reads from goes silent after the first batch (black-holed: connections
   * open, nothing answered). The reader goes on from the other copy after silentAfter instead of
   * waiting a request timeout (120s) for the next chunk.
   */
  @Test
  void aServerThatGoesSilentInTheMiddleOfAReadIsLeftForTheOtherCopy() throws Exception {
    start(2, Map.of("sluice.network.silentAfter", "300ms"));
    writeMap(0);
    writeMap(1);
    client.committedSplits(SHUFFLE, 0, PARTITIONS, true);
    Records.Checker checker = new Records.Checker();
    try (PartitionReader reader = reader(0, 1)) {
      ShuffleBatch first = reader.next();
      checker.accept(first.partitionId(), first.payload());
      ServerAddress read = reader.server();
      for (int i = 0; i < 3; i++) {
        if (proxied(i).equals(read)) {
          proxies.get(i).blackHole();
        }
      }
      assertTimeoutPreemptively(
          Duration.ofSeconds(60),
          () -> {
            for (ShuffleBatch b = reader.next(); b != null; b = reader.next()) {
              checker.accept(b.partitionId(), b.payload());
            }
          });
    }
    for (int m = 0; m < MAPS; m++) {
      assertThat(checker.count(m, 0)).as("map %d", m).isEqualTo(RECORDS);
    }
    assertThat(cluster.context().metrics().readFailovers()).isEqualTo(1);
  }
}
