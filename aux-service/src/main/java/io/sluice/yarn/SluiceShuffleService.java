package io.sluice.yarn;

import com.codahale.metrics.MetricRegistry;
import io.sluice.common.Clock;
import io.sluice.common.SluiceConf;
import io.sluice.common.UnknownKeys;
import io.sluice.network.NetworkConf;
import io.sluice.server.ServerConf;
import io.sluice.server.ShuffleServer;
import io.sluice.server.admin.AdminApi;
import io.sluice.server.admin.AdminConf;
import io.sluice.server.admin.AdminHttpServer;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.function.Consumer;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.metrics2.MetricsException;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.yarn.server.api.ApplicationInitializationContext;
import org.apache.hadoop.yarn.server.api.ApplicationTerminationContext;
import org.apache.hadoop.yarn.server.api.AuxiliaryService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Sluice shuffle server inside a YARN NodeManager: the same {@link ShuffleServer} the daemon
 * runs, started with the NodeManager and stopped with it. This class only adapts: configuration
 * ({@link YarnServerConf}), lifecycle, and metrics ({@link HadoopMetricsBridge}).
 *
 * <ul>
 *   <li>{@code serviceInit} reads the {@code sluice.*} keys and checks them; {@code serviceStart}
 *       starts the server (it restores what its state store recorded before it serves). A server
 *       that cannot start leaves the NodeManager running without it, unless {@code
 *       sluice.yarn.stopOnFailure} asks for the NodeManager to fail too; {@code serviceStop} stops
 *       it gracefully (open splits are committed and recorded) and leaves no thread, port or open
 *       file behind.
 *   <li>Applications register through Sluice's own protocol: the NodeManager calls {@link
 *       #initializeApplication} only for services named in a container's service data, which Spark
 *       and Flink do not send. {@link #stopApplication}, which reaches every aux service when an
 *       application finishes on this node, deletes that application's shuffle data here.
 *   <li>{@link #getMetaData} is the server's port, 4 bytes big-endian; never null, since the
 *       NodeManager refuses containers that name a service whose metadata is null.
 * </ul>
 *
 * <p>Configure it in yarn-site.xml as {@code yarn.nodemanager.aux-services = ...,sluice_shuffle}
 * with {@code yarn.nodemanager.aux-services.sluice_shuffle.class} naming this class (see {@code
 * conf/yarn-site.xml.example}).
 */
public final class SluiceShuffleService extends AuxiliaryService {
  /** The name operators put in {@code yarn.nodemanager.aux-services}. */
  public static final String NAME = "sluice_shuffle";

  private static final Logger LOG = LoggerFactory.getLogger(SluiceShuffleService.class);

  private ServerConf serverConf;
  private NetworkConf networkConf;
  private volatile ShuffleServer server;
  private boolean metricsRegistered;
  private AdminConf adminConf;
  private volatile AdminHttpServer http;
  private boolean stopOnFailure;
  private volatile Exception startFailure;

  /** Where warnings about the configuration go: the NodeManager's log. */
  private final Consumer<String> configWarnings;

  public SluiceShuffleService() {
    this(LOG::warn);
  }

  /** With the configuration's warnings sent to {@code configWarnings} (tests). */
  SluiceShuffleService(Consumer<String> configWarnings) {
    super(NAME);
    this.configWarnings = configWarnings;
  }

  @Override
  protected void serviceInit(Configuration conf) throws Exception {
    SluiceConf sluice = YarnServerConf.from(conf, getRecoveryPath());
    // before the settings are checked: a misspelled key may be why one of them is wrong
    for (String warning : UnknownKeys.core().warnings(sluice)) {
      configWarnings.accept("NodeManager configuration: " + warning);
    }
    try {
      stopOnFailure = sluice.get(AdminConf.YARN_STOP_ON_FAILURE);
      serverConf = new ServerConf(sluice);
      networkConf = new NetworkConf(sluice);
      adminConf = new AdminConf(sluice);
    } catch (RuntimeException e) {
      cannotStart(e);
    }
    super.serviceInit(conf);
  }

  @Override
  protected void serviceStart() throws Exception {
    if (startFailure == null) {
      try {
        startServer();
      } catch (IOException | RuntimeException e) {
        cannotStart(e);
      }
    }
    super.serviceStart();
  }

  /**
   * The server cannot start: with {@code sluice.yarn.stopOnFailure} the NodeManager fails with
   * {@code e}; otherwise it runs on without Sluice, and the error says why and what to set.
   */
  private void cannotStart(Exception e) throws Exception {
    if (stopOnFailure) {
      throw e;
    }
    startFailure = e;
    LOG.error(
        "The Sluice shuffle server cannot start; this NodeManager runs on without it (its"
            + " applications use the other servers, or fall back to their engine's shuffle). Set"
            + " sluice.yarn.stopOnFailure=true to fail the NodeManager instead: {}",
        e.getMessage(),
        e);
  }

  /** Why the server did not start, or null. */
  public Exception startFailure() {
    return startFailure;
  }

  private void startServer() throws IOException {
    MetricRegistry metrics = new MetricRegistry();
    server = new ShuffleServer(serverConf, networkConf, metrics, Clock.SYSTEM);
    registerMetrics(metrics);
    http = startAdminHttp(metrics, server);
    if (http != null) {
      server.setAdminPort(http.port()); // named to HTTP requests sent to the shuffle port
    }
    LOG.info(
        "{} serves on port {} with data directories {} and its state in {}",
        NAME,
        server.port(),
        serverConf.dirs(),
        serverConf.stateDir());
  }

  /**
   * The admin API and Prometheus metrics on {@code sluice.metrics.port} (off with -1); a port that
   * cannot be bound is worth a warning, not the NodeManager.
   */
  private AdminHttpServer startAdminHttp(MetricRegistry metrics, ShuffleServer s) {
    if (serverConf.metricsPort() < 0) {
      return null;
    }
    try {
      return new AdminHttpServer(
          metrics,
          new AdminApi(s, adminConf),
          serverConf.metricsHost(),
          serverConf.metricsPort(),
          networkConf.tls());
    } catch (IOException | RuntimeException e) {
      LOG.warn(
          "Cannot serve the admin API and metrics on port {} (sluice.metrics.port): {}",
          serverConf.metricsPort(),
          e.toString());
      return null;
    }
  }

  /** The port of the admin API and metrics, or -1 when they are not served. */
  public int adminPort() {
    AdminHttpServer h = http;
    return h == null ? -1 : h.port();
  }

  /** Metrics are worth a warning, not the NodeManager: a failure here does not stop the service. */
  private void registerMetrics(MetricRegistry metrics) {
    try {
      DefaultMetricsSystem.instance()
          .register(
              HadoopMetricsBridge.SOURCE,
              HadoopMetricsBridge.DESCRIPTION,
              new HadoopMetricsBridge(metrics));
      metricsRegistered = true;
    } catch (MetricsException e) {
      LOG.warn(
          "Cannot show Sluice's metrics in the NodeManager's metrics system: {}", e.toString());
    }
  }

  @Override
  protected void serviceStop() throws Exception {
    if (metricsRegistered) {
      DefaultMetricsSystem.instance().unregisterSource(HadoopMetricsBridge.SOURCE);
      metricsRegistered = false;
    }
    ShuffleServer s = server;
    server = null;
    if (s != null) {
      // with sluice.shutdown.drainTimeout, reads go on until the applications end (a rolling
      // restart of the NodeManager); the open splits are committed either way
      s.drainThenClose(adminConf.drainTimeoutMillis());
    }
    AdminHttpServer h = http;
    http = null;
    if (h != null) {
      h.close();
    }
    super.serviceStop();
  }

  @Override
  public void initializeApplication(ApplicationInitializationContext context) {
    LOG.debug("Application {} starts on this node", context.getApplicationId());
  }

  /**
   * Deletes the shuffle data on this node of every Sluice application that ends with YARN's
   * application (on the server's threads): the one of the same id, its attempts ({@code
   * ID-attempt-N}, a Spark driver in cluster mode) and those whose coordinators ran in it (a Flink
   * job, {@code flink-JOB}).
   */
  @Override
  public void stopApplication(ApplicationTerminationContext context) {
    ShuffleServer s = server;
    if (s == null) {
      return;
    }
    String yarnAppId = context.getApplicationId().toString();
    for (String appId : s.registry().applicationsOf(yarnAppId)) {
      s.registry()
          .unregisterApplication(appId)
          .whenComplete(
              (v, e) -> {
                if (e != null) {
                  LOG.warn("Deleting the shuffle data of application {} failed: {}", appId, e);
                } else {
                  LOG.info(
                      "YARN application {} finished; the shuffle data of application {} on this"
                          + " node is deleted",
                      yarnAppId,
                      appId);
                }
              });
    }
  }

  /** The server's port as 4 big-endian bytes; empty (never null) while it is not running. */
  @Override
  public ByteBuffer getMetaData() {
    ShuffleServer s = server;
    if (s == null) {
      return ByteBuffer.allocate(0);
    }
    return ByteBuffer.allocate(Integer.BYTES).putInt(0, s.port());
  }

  /** The running server, or null; for tests that drive the service as a NodeManager does. */
  public ShuffleServer server() {
    return server;
  }
}
