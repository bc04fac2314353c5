package io.sluice.client.coordinator;

import io.sluice.client.ClientContext;
import io.sluice.client.ServerRequests;
import io.sluice.client.ServerRestartWait;
import io.sluice.common.Ids;
import io.sluice.network.Message;
import io.sluice.protocol.StatusException;
import io.sluice.protocol.proto.ServerAddress;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where an application's shuffles are registered: registers them on the servers and remembers every
 * server that took one (to heartbeat and to unregister the application there). Thread safe.
 */
final class ServerRegistrations {
  private static final Logger LOG = LoggerFactory.getLogger(ServerRegistrations.class);

  private final String appId;
  private final List<ServerAddress> servers;
  private final ServerExclusions exclusions;
  private final ClientContext context;
  private final Set<ServerAddress> registeredServers = ConcurrentHashMap.newKeySet();

  ServerRegistrations(
      String appId,
      List<ServerAddress> servers,
      ServerExclusions exclusions,
      ClientContext context) {
    this.appId = appId;
    this.servers = List.copyOf(servers);
    this.exclusions = exclusions;
    this.context = context;
  }

  /** Every server that took a shuffle of this application (a live view). */
  Collection<ServerAddress> servers() {
    return Collections.unmodifiableSet(registeredServers);
  }

  /**
   * Registers the shuffle on every usable server at once (a silent one costs one request timeout,
   * not one per server before it) and returns those that took it. When none did and every one that
   * took shuffles of this application before is away or stopping, as servers are while they
   * restart, asks again until {@code sluice.client.serverRestartWait} has passed; servers never
   * seen to answer are not waited for (a wrong address falls back at once).
   *
   * @throws IOException when no server accepts the shuffle
   */
  List<ServerAddress> registerShuffle(int shuffleId, int numMaps, int numPartitions)
      throws IOException {
    ServerRestartWait.Wait wait = null;
    while (true) {
      List<ServerAddress> candidates = exclusions.usable(servers);
      List<CompletableFuture<Message>> answers = new ArrayList<>();
      for (ServerAddress s : candidates) {
        answers.add(
            context.callAsync(
                appId,
                s,
                ServerRequests.registerShuffle(
                    appId, shuffleId, numMaps, numPartitions, context.conf())));
      }
      long deadline =
          System.nanoTime()
              + TimeUnit.MILLISECONDS.toNanos(context.networkConf().requestTimeoutMillis() + 1000);
      List<ServerAddress> usable = new ArrayList<>();
      IOException lastError = null;
      boolean allAway = true;
      for (int i = 0; i < candidates.size(); i++) {
        ServerAddress s = candidates.get(i);
        String failure;
        try {
          answers
              .get(i)
              .get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)
              .release();
          registeredServers.add(s);
          usable.add(s);
          continue;
        } catch (ExecutionException e) {
          failure = String.valueOf(e.getCause() == null ? e : e.getCause().getMessage());
          // a server that took shuffles before and now refuses or stops is likely restarting
          allAway &=
              registeredServers.contains(s) && ServerRestartWait.awayOrStopping(e.getCause());
        } catch (TimeoutException e) {
          allAway = false;
          answers.get(i).cancel(false);
          failure = "no answer within sluice.network.requestTimeout";
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IOException("interrupted registering " + Ids.shuffle(appId, shuffleId), e);
        }
        exclusions.exclude(s, "registering " + Ids.shuffle(appId, shuffleId) + ": " + failure);
        LOG.warn(
            "Server {} refused {}; placing its partitions elsewhere: {}",
            ClientContext.format(s),
            Ids.shuffle(appId, shuffleId),
            failure);
        lastError = new IOException(ClientContext.format(s) + ": " + failure);
      }
      if (!usable.isEmpty()) {
        return usable;
      }
      if (allAway) {
        if (wait == null) {
          wait = context.restarts().start();
          LOG.warn(
              "No Sluice server takes {} now, and every one that did before is away or stopping:"
                  + " waiting up to {} ms for them to come back (sluice.client.serverRestartWait):"
                  + " {}",
              Ids.shuffle(appId, shuffleId),
              context.restarts().waitMillis(),
              lastError.getMessage());
        }
        if (wait.pause()) {
          continue;
        }
      }
      throw new IOException(
          "No Sluice server accepted " + Ids.shuffle(appId, shuffleId) + ": " + lastError,
          lastError);
    }
  }

  /** Registers the shuffle on {@code server} (it may be registered there already). */
  void registerOn(ServerAddress server, int shuffleId, int numMaps, int numPartitions)
      throws IOException, StatusException {
    context.call(
        appId,
        server,
        ServerRequests.registerShuffle(appId, shuffleId, numMaps, numPartitions, context.conf()));
    registeredServers.add(server);
  }
}
