package io.sluice.e2e;

import io.sluice.client.ClientContext;
import io.sluice.client.coordinator.CoordinatorClient;
import io.sluice.client.coordinator.ShuffleCoordinator;
import io.sluice.client.push.MapOutputPusher;
import io.sluice.client.read.PartitionReader;
import io.sluice.client.read.ShuffleBatch;
import io.sluice.common.SluiceConf;
import io.sluice.protocol.proto.CommittedShuffle;
import io.sluice.protocol.proto.ServerAddress;
import io.sluice.testutil.Records;
import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The client side of one application against servers running elsewhere (a daemon process, a
 * NodeManager): a coordinator, a client context, and helpers that push and read self-checking
 * records ({@link Records}).
 */
public final class ApplicationClient implements AutoCloseable {
  private final String appId;
  private final ClientContext context;
  private final ShuffleCoordinator coordinator;
  private final CoordinatorClient coordinatorClient;

  public ApplicationClient(String appId, List<ServerAddress> servers) throws IOException {
    this(appId, servers, Map.of());
  }

  /** A client with {@code extra} settings (authentication, say) over the suites' own. */
  public ApplicationClient(String appId, List<ServerAddress> servers, Map<String, String> extra)
      throws IOException {
    this.appId = appId;
    Map<String, String> conf = new HashMap<>();
    conf.put("sluice.network.ioThreads", "2");
    conf.put("sluice.network.connectTimeout", "5s");
    conf.put("sluice.push.retryWait", "10ms");
    conf.put("sluice.push.retryMaxWait", "200ms");
    // these suites kill servers and restart them only once the loss showed: wait briefly
    conf.put("sluice.client.serverRestartWait", "2s");
    conf.putAll(extra);
    this.context = new ClientContext(SluiceConf.of(conf));
    this.coordinator = new ShuffleCoordinator(appId, servers, context, "127.0.0.1");
    this.coordinatorClient =
        new CoordinatorClient(
            context, appId, ClientContext.address("127.0.0.1", coordinator.port()));
  }

  public ShuffleCoordinator coordinator() {
    return coordinator;
  }

  /**
   * Runs one map attempt to the end: {@code records} records of {@code payload} bytes for each
   * partition, pushed, acknowledged and reported to the coordinator.
   */
  public void runMap(int shuffleId, int map, int partitions, int records, int payload)
      throws Exception {
    try (MapOutputPusher pusher =
        new MapOutputPusher(
            context,
            coordinatorClient,
            appId,
            shuffleId,
            map,
            0,
            coordinatorClient.locations(shuffleId))) {
      for (int seq = 0; seq < records; seq++) {
        for (int p = 0; p < partitions; p++) {
          byte[] r = Records.record(map, p, seq, payload + (seq * 31 + p) % 200);
          pusher.write(p, r, 0, r.length);
        }
      }
      pusher.finish();
    }
  }

  /** Reads every partition of a committed shuffle, checking each record arrives once, intact. */
  public Records.Checker readAll(int shuffleId, int partitions, int maps) throws Exception {
    CommittedShuffle committed = coordinatorClient.committedSplits(shuffleId, 0, partitions);
    Records.Checker checker = new Records.Checker();
    try (PartitionReader reader =
        new PartitionReader(context, appId, shuffleId, committed, 0, maps)) {
      ShuffleBatch batch;
      while ((batch = reader.next()) != null) {
        checker.accept(batch.partitionId(), batch.payload());
      }
    }
    return checker;
  }

  /** Unregisters the application on its servers (deleting its files) and stops the client. */
  @Override
  public void close() {
    coordinator.close();
    context.close();
  }
}
