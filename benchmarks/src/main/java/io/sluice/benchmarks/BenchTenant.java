package io.sluice.benchmarks;

import io.sluice.client.ClientContext;
import io.sluice.client.coordinator.CoordinatorClient;
import io.sluice.client.coordinator.ShuffleCoordinator;
import io.sluice.common.SluiceConf;
import io.sluice.server.ShuffleServer;
import java.io.IOException;
import java.util.List;

/**
 * One application of {@code shuffle-bench tenants}: its own client, coordinator and shuffles, as a
 * job on a cluster has.
 */
final class BenchTenant implements AutoCloseable {
  private final ClientContext context;
  private final ShuffleCoordinator coordinator;
  private final ShuffleRound round;
  private int nextShuffle;

  BenchTenant(String appId, SluiceConf conf, ShuffleServer server, int partitions, int readers)
      throws IOException {
    context = new ClientContext(conf);
    coordinator =
        new ShuffleCoordinator(
            appId,
            List.of(ClientContext.address("127.0.0.1", server.port())),
            context,
            "127.0.0.1");
    round =
        new ShuffleRound(
            context,
            coordinator,
            new CoordinatorClient(
                context, appId, ClientContext.address("127.0.0.1", coordinator.port())),
            new Records(appId.hashCode()),
            new CpuMeter(),
            List.of(server.metrics()),
            partitions,
            readers,
            1,
            1);
  }

  /** One shuffle: pushed, committed, read back and verified; a failed result when it failed. */
  RoundResult shuffle(int pushers, long bytes) {
    try {
      return round.run(nextShuffle++, pushers, bytes);
    } catch (IOException | RuntimeException e) {
      return RoundResult.failed(pushers, e.toString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return RoundResult.failed(pushers, "interrupted");
    }
  }

  @Override
  public void close() throws IOException {
    try {
      coordinator.close();
    } finally {
      context.close();
    }
  }
}
