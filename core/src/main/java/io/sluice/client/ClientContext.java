package io.sluice.client;

import io.netty.util.concurrent.DefaultThreadFactory;
import io.sluice.auth.AuthConf;
import io.sluice.auth.ClientAuthenticator;
import io.sluice.client.push.InFlightLimiter;
import io.sluice.common.SluiceConf;
import io.sluice.network.Message;
import io.sluice.network.NetworkConf;
import io.sluice.network.TransportClient;
import io.sluice.network.TransportClientPool;
import io.sluice.protocol.Messages;
import io.sluice.protocol.SluiceProtocol;
import io.sluice.protocol.StatusException;
import io.sluice.protocol.proto.Response;
import io.sluice.protocol.proto.ServerAddress;
import java.io.Closeable;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongFunction;

/**
 * What the client library shares within one JVM (an executor, a TaskManager, the driver): the
 * connection pool, the settings, and a scheduler for retries. Create one per JVM and close it when
 * the JVM's work ends; it is never a static singleton. Thread safe.
 */
public final class ClientContext implements Closeable {
  private final ClientConf conf;
  private final NetworkConf networkConf;
  private final TransportClientPool pool;
  private final TransportClientPool pushPool;
  private final TransportClientPool replicaPool;
  private final ScheduledExecutorService scheduler;

  /** Retries scheduled and not run yet; given up when this client closes. */
  private final Set<Retry> waitingRetries = ConcurrentHashMap.newKeySet();

  private final InFlightLimiter inFlight;
  private final AuthConf auth;
  private final ClientMetrics metrics = new ClientMetrics();
  private final SilentServerWatch silentServers;
  private final ServerRestartWait restarts;
  // null without sluice.topology.script
  private final TopologyScript topology;
  private final Map<String, String> hadoopSettings;

  /**
   * @throws IllegalArgumentException naming the setting when one is invalid (authentication on
   *     without an application secret, for one)
   */
  public ClientContext(SluiceConf conf) {
    this.conf = new ClientConf(conf);
    this.networkConf = new NetworkConf(conf);
    this.auth = new AuthConf(conf);
    this.hadoopSettings = Map.copyOf(conf.hadoopSettings());
    this.topology =
        this.conf.topologyScript().isEmpty()
            ? null
            : new TopologyScript(this.conf.topologyScript(), this.conf.topologyTimeoutMillis());
    ClientAuthenticator authenticator =
        auth.enabled()
            ? new ClientAuthenticator(auth.requireAppSecret(), auth.clusterSecret())
            : null;
    this.pool =
        new TransportClientPool("sluice", networkConf, SluiceProtocol.INSTANCE, authenticator);
    this.pushPool =
        new TransportClientPool("sluice-push", networkConf, SluiceProtocol.INSTANCE, authenticator);
    this.replicaPool =
        new TransportClientPool(
            "sluice-replica", networkConf, SluiceProtocol.INSTANCE, authenticator);
    this.scheduler =
        Executors.newScheduledThreadPool(1, new DefaultThreadFactory("sluice-client-retry", true));
    this.inFlight =
        new InFlightLimiter(
            this.conf.maxInFlightPerServer(),
            this.conf.maxInFlight(),
            this.conf.pushTimeoutMillis());
    this.silentServers = new SilentServerWatch(this);
    this.restarts = new ServerRestartWait(this.conf.serverRestartWaitMillis(), scheduler, metrics);
  }

  /**
   * Hadoop settings for reading splits of the distributed tier ({@code sluice.hadoop.*} without the
   * prefix; the Spark client passes {@code spark.hadoop.*} here), on top of the Hadoop
   * configuration files on the class path.
   */
  public Map<String, String> hadoopSettings() {
    return hadoopSettings;
  }

  public ClientConf conf() {
    return conf;
  }

  public NetworkConf networkConf() {
    return networkConf;
  }

  /** The authentication settings; connections are made per application when enabled. */
  public AuthConf auth() {
    return auth;
  }

  /**
   * The racks of {@code hosts} from {@code sluice.topology.script} (each host resolved once per
   * context), or {@link ServerRacks#UNKNOWN} without a script. Never throws: see {@link
   * TopologyScript}.
   */
  public ServerRacks racks(Collection<String> hosts) {
    return topology == null ? ServerRacks.UNKNOWN : topology.racks(hosts);
  }

  public TransportClientPool pool() {
    return pool;
  }

  /**
   * Fails requests to servers that answer neither them nor a ping ({@link SilentServerWatch}):
   * pushes, commits and reads watch their answers here.
   */
  public SilentServerWatch silentServers() {
    return silentServers;
  }

  /**
   * How long and how this client retries a server that refuses or drops its connections, as a
   * restarting one does ({@link ServerRestartWait}).
   */
  public ServerRestartWait restarts() {
    return restarts;
  }

  /** What this JVM's client counts about failures it hid (failovers, moves, replica lag). */
  public ClientMetrics metrics() {
    return metrics;
  }

  /** The JVM's bounds on unacknowledged pushed bytes, per server and over all servers. */
  public InFlightLimiter inFlight() {
    return inFlight;
  }

  /** Runs retries and heartbeats; tasks must be short. */
  public ScheduledExecutorService scheduler() {
    return scheduler;
  }

  /**
   * Runs {@code retry} on {@link #scheduler()} after {@code delayMillis}, or {@code giveUp} instead
   * when this client is closed before then (or already is): a retry holds what only one of the two
   * gives back (a push's body). {@code giveUp} then runs on the closing thread, or on this one.
   */
  public void scheduleRetry(Runnable retry, Runnable giveUp, long delayMillis) {
    Retry r = new Retry(retry, giveUp);
    waitingRetries.add(r);
    try {
      scheduler.schedule(r, delayMillis, TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      r.abandon();
    }
    if (scheduler.isShutdown()) {
      r.abandon(); // closed while it was scheduled: close() may have looked before it was added
    }
  }

  /** A retry that either runs or is given up, once. */
  private final class Retry implements Runnable {
    private final Runnable retry;
    private final Runnable giveUp;

    Retry(Runnable retry, Runnable giveUp) {
      this.retry = retry;
      this.giveUp = giveUp;
    }

    @Override
    public void run() {
      if (waitingRetries.remove(this)) {
        retry.run();
      }
    }

    void abandon() {
      if (waitingRetries.remove(this)) {
        giveUp.run();
      }
    }
  }

  /**
   * Sends a request and waits for an OK (or SOFT_SPLIT) response.
   *
   * @return the response header; a body, if any, is released
   * @throws StatusException when the server answers another status
   * @throws IOException naming the server when it cannot be reached or does not answer in time
   */
  public Response call(String appId, ServerAddress server, LongFunction<Message> request)
      throws IOException, StatusException {
    return call(appId, server, request, networkConf.requestTimeoutMillis());
  }

  /**
   * Like {@link #call(String, ServerAddress, LongFunction)}, waiting up to {@code timeoutMillis}.
   */
  public Response call(
      String appId, ServerAddress server, LongFunction<Message> request, long timeoutMillis)
      throws IOException, StatusException {
    Message response;
    try {
      response =
          callAsync(connection(appId, server), request, timeoutMillis)
              .get(timeoutMillis + 1000, TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof StatusException) {
        throw (StatusException) cause;
      }
      if (cause instanceof IOException) {
        throw (IOException) cause;
      }
      throw new IOException(
          "Request to Sluice server " + format(server) + " failed: " + cause, cause);
    } catch (TimeoutException e) {
      throw new IOException("No response from Sluice server " + format(server), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("Interrupted while waiting for Sluice server " + format(server), e);
    }
    response.release();
    return response.header(Response.class);
  }

  /**
   * Sends a request without waiting. The future completes with the response (owned by the caller)
   * when its status is OK or SOFT_SPLIT, with a {@link StatusException} for other statuses, and
   * with an {@link IOException} naming the server when it cannot be reached or does not answer.
   */
  public CompletableFuture<Message> callAsync(
      String appId, ServerAddress server, LongFunction<Message> request) {
    // Never blocks, not even to connect: callers chain this from response callbacks on event loops.
    return pool.getAsync(server.getHost(), server.getPort(), appId)
        .thenCompose(client -> callAsync(client, request));
  }

  /**
   * Asks {@code server} whether it is alive (a heartbeat of {@code appId}) on a control connection,
   * which flow control never pauses; completes when it answers, exceptionally when it cannot be
   * reached or does not answer within {@code timeoutMillis}. Never blocks.
   */
  public CompletableFuture<Void> pingAsync(String appId, ServerAddress server, long timeoutMillis) {
    return pool.getAsync(server.getHost(), server.getPort(), appId)
        .thenCompose(client -> callAsync(client, ServerRequests.heartbeat(appId), timeoutMillis))
        .thenAccept(Message::release);
  }

  /**
   * A pooled connection for pushing data to {@code server}. Pushes have connections of their own: a
   * server under memory pressure stops reading the connections that push, and reads and control
   * requests must not wait behind them.
   */
  public TransportClient pushConnection(String appId, ServerAddress server) throws IOException {
    return pushPool.get(server.getHost(), server.getPort(), appId);
  }

  /** Like {@link #pushConnection} without waiting for a connect. */
  public CompletableFuture<TransportClient> pushConnectionAsync(
      String appId, ServerAddress server) {
    return pushPool.getAsync(server.getHost(), server.getPort(), appId);
  }

  /** Like {@link #replicaPushConnectionAsync}, waiting for the connect. */
  public TransportClient replicaPushConnection(String appId, ServerAddress server)
      throws IOException {
    return replicaPool.get(server.getHost(), server.getPort(), appId);
  }

  /**
   * Like {@link #pushConnectionAsync} for replica pushes, which travel on connections of their own:
   * a server pauses reading replica connections later than first-copy ones (its replica watermark).
   */
  public CompletableFuture<TransportClient> replicaPushConnectionAsync(
      String appId, ServerAddress server) {
    return replicaPool.getAsync(server.getHost(), server.getPort(), appId);
  }

  /**
   * A pooled connection to {@code server} acting for {@code appId}, for requests that must share
   * one (read streams). With authentication, each application has connections of its own.
   */
  public TransportClient connection(String appId, ServerAddress server) throws IOException {
    return pool.get(server.getHost(), server.getPort(), appId);
  }

  /** Like {@link #callAsync(String, ServerAddress, LongFunction)} on a given connection. */
  public CompletableFuture<Message> callAsync(
      TransportClient client, LongFunction<Message> request) {
    return callAsync(client, request, networkConf.requestTimeoutMillis());
  }

  private CompletableFuture<Message> callAsync(
      TransportClient client, LongFunction<Message> request, long timeoutMillis) {
    return client
        .send(request, timeoutMillis)
        .handle(
            (response, error) -> {
              if (error != null) {
                Throwable cause = error instanceof CompletionException ? error.getCause() : error;
                if (cause instanceof TimeoutException) {
                  cause = new IOException(cause.getMessage(), cause);
                }
                throw new CompletionException(cause);
              }
              try {
                Messages.expectOk(response);
              } catch (StatusException e) {
                throw new CompletionException(e);
              }
              return response;
            });
  }

  public static ServerAddress address(String host, int port) {
    return ServerAddress.newBuilder().setHost(host).setPort(port).build();
  }

  public static String format(ServerAddress server) {
    return server.getHost() + ":" + server.getPort();
  }

  @Override
  public void close() {
    silentServers.close();
    scheduler.shutdownNow();
    for (Retry r : new ArrayList<>(waitingRetries)) {
      r.abandon();
    }
    pushPool.close();
    replicaPool.close();
    pool.close();
  }
}
