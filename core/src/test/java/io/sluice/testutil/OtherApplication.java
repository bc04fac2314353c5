package io.sluice.testutil;

import io.sluice.client.ClientContext;
import io.sluice.client.coordinator.CoordinatorClient;
import io.sluice.client.coordinator.ShuffleCoordinator;
import io.sluice.client.push.MapOutputPusher;
import java.io.IOException;
import java.util.Map;

/**
 * An application of its own on a {@link TestCluster}'s servers, beside the cluster's: its own
 * client context (with its own client settings), coordinator and coordinator client. Closing it
 * closes its coordinator and its context, as an application that stops.
 */
public final class OtherApplication implements AutoCloseable {
  private final String appId;
  private final ClientContext context;
  private final ShuffleCoordinator coordinator;
  private final CoordinatorClient client;

  public OtherApplication(TestCluster cluster, String appId, Map<String, String> settings)
      throws IOException {
    this.appId = appId;
    this.context = new ClientContext(cluster.conf().with(settings));
    this.coordinator = new ShuffleCoordinator(appId, cluster.addresses(), context, "127.0.0.1");
    this.client =
        new CoordinatorClient(
            context, appId, ClientContext.address("127.0.0.1", coordinator.port()));
  }

  public String appId() {
    return appId;
  }

  public ClientContext context() {
    return context;
  }

  public ShuffleCoordinator coordinator() {
    return coordinator;
  }

  public CoordinatorClient client() {
    return client;
  }

  /** A pusher for map 0, attempt 0 of {@code shuffleId}, which must be registered. */
  public MapOutputPusher pusher(int shuffleId) throws Exception {
    return new MapOutputPusher(
        context, client, appId, shuffleId, 0, 0, client.locations(shuffleId));
  }

  @Override
  public void close() {
    coordinator.close();
    context.close();
  }
}
