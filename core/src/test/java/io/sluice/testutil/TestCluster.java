package io.sluice.testutil;

import com.codahale.metrics.MetricRegistry;
import io.sluice.client.ClientContext;
import io.sluice.client.coordinator.CoordinatorClient;
import io.sluice.client.coordinator.ShuffleCoordinator;
import io.sluice.client.push.MapOutputPusher;
import io.sluice.client.read.PartitionReader;
import io.sluice.common.Clock;
import io.sluice.common.SluiceConf;
import io.sluice.network.NetworkConf;
import io.sluice.protocol.proto.CommittedShuffle;
import io.sluice.protocol.proto.ServerAddress;
import io.sluice.server.ServerConf;
import io.sluice.server.ShuffleServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Real servers on ephemeral loopback ports, each with two data directories under a test's temp dir,
 * plus a coordinator and a client context, as an application would have them.
 */
public final class TestCluster implements AutoCloseable {
  public static final String APP_ID = "app-test-1";

  private final Path root;
  private final SluiceConf conf;
  private final Clock clock;
  private final List<ShuffleServer> servers = new ArrayList<>();
  private final ClientContext context;
  private final ShuffleCoordinator coordinator;
  private final CoordinatorClient coordinatorClient;

  private TestCluster(Path root, int numServers, Map<String, String> overrides, Clock clock)
      throws IOException {
    this.root = root;
    this.clock = clock;
    Map<String, String> base = new HashMap<>();
    base.put("sluice.server.host", "127.0.0.1");
    base.put("sluice.server.port", "0");
    base.put("sluice.network.ioThreads", "2");
    base.put("sluice.memory.max", "64m");
    base.put("sluice.flush.size", "256k");
    base.put("sluice.read.chunkSize", "512k");
    base.put("sluice.commit.fsync", "false");
    base.put("sluice.push.retryWait", "5ms");
    base.put("sluice.push.retryMaxWait", "50ms");
    // the suites stop servers for good to test losses: wait briefly for them to come back
    base.put("sluice.client.serverRestartWait", "2s");
    base.putAll(overrides);
    this.conf = SluiceConf.of(base);
    for (int i = 0; i < numServers; i++) {
      servers.add(startServer(i));
    }
    this.context = new ClientContext(conf);
    this.coordinator = new ShuffleCoordinator(APP_ID, addresses(), context, "127.0.0.1");
    this.coordinatorClient =
        new CoordinatorClient(
            context, APP_ID, ClientContext.address("127.0.0.1", coordinator.port()));
  }

  public static TestCluster start(Path root, int numServers) throws IOException {
    return new TestCluster(root, numServers, Map.of(), Clock.SYSTEM);
  }

  public static TestCluster start(Path root, int numServers, Map<String, String> overrides)
      throws IOException {
    return new TestCluster(root, numServers, overrides, Clock.SYSTEM);
  }

  public static TestCluster start(
      Path root, int numServers, Map<String, String> overrides, Clock clock) throws IOException {
    return new TestCluster(root, numServers, overrides, clock);
  }

  private ShuffleServer startServer(int index) throws IOException {
    Path a = Files.createDirectories(root.resolve("server" + index).resolve("disk1"));
    Path b = Files.createDirectories(root.resolve("server" + index).resolve("disk2"));
    SluiceConf serverConf = conf.with("sluice.server.dirs", a + "," + b);
    return new ShuffleServer(
        new ServerConf(serverConf), new NetworkConf(serverConf), new MetricRegistry(), clock);
  }

  /**
   * Restarts server {@code i} as an operator would: a graceful stop, then a new server on the same
   * port and data directories, which restores what the old one recorded in its state store.
   */
  public ShuffleServer restartServer(int i) throws IOException {
    return restartServer(i, stopped -> {});
  }

  /** What a test does to a stopped server's files before it restarts ({@link #restartServer}). */
  public interface WhileStopped {
    /** {@code serverRoot} holds the server's data directories {@code disk1} and {@code disk2}. */
    void apply(Path serverRoot) throws IOException;
  }

  /**
   * Like {@link #restartServer(int)}, doing {@code whileStopped} to the server's files between the
   * stop and the start (damage a restart must cope with, as a power loss leaves it).
   */
  public ShuffleServer restartServer(int i, WhileStopped whileStopped) throws IOException {
    ShuffleServer old = servers.get(i);
    int port = old.port();
    old.close();
    whileStopped.apply(root.resolve("server" + i));
    Path a = root.resolve("server" + i).resolve("disk1");
    Path b = root.resolve("server" + i).resolve("disk2");
    SluiceConf serverConf =
        conf.with(Map.of("sluice.server.dirs", a + "," + b, "sluice.server.port", "" + port));
    ShuffleServer restarted =
        new ShuffleServer(
            new ServerConf(serverConf), new NetworkConf(serverConf), new MetricRegistry(), clock);
    servers.set(i, restarted);
    return restarted;
  }

  public List<ServerAddress> addresses() {
    List<ServerAddress> list = new ArrayList<>();
    for (ShuffleServer s : servers) {
      list.add(ClientContext.address("127.0.0.1", s.port()));
    }
    return list;
  }

  public SluiceConf conf() {
    return conf;
  }

  public List<ShuffleServer> servers() {
    return servers;
  }

  public ShuffleServer server(int i) {
    return servers.get(i);
  }

  public ClientContext context() {
    return context;
  }

  public ShuffleCoordinator coordinator() {
    return coordinator;
  }

  public CoordinatorClient coordinatorClient() {
    return coordinatorClient;
  }

  public Path root() {
    return root;
  }

  /** A pusher for one map attempt, with the shuffle's current locations from the coordinator. */
  public MapOutputPusher pusher(int shuffleId, int mapIndex, int attempt) throws Exception {
    return new MapOutputPusher(
        context,
        coordinatorClient,
        APP_ID,
        shuffleId,
        mapIndex,
        attempt,
        coordinatorClient.locations(shuffleId));
  }

  /** A reader of partitions [start, end) for maps [startMap, endMap), after the commit. */
  public PartitionReader reader(int shuffleId, int start, int end, int startMap, int endMap)
      throws Exception {
    CommittedShuffle committed = coordinatorClient.committedSplits(shuffleId, start, end);
    return new PartitionReader(context, APP_ID, shuffleId, committed, startMap, endMap);
  }

  /** Total bytes every server holds in memory for pushed data. */
  public long memoryHeld() {
    long held = 0;
    for (ShuffleServer s : servers) {
      held += s.memory().held();
    }
    return held;
  }

  @Override
  public void close() {
    coordinator.close();
    context.close();
    for (ShuffleServer s : servers) {
      s.close();
    }
  }
}
