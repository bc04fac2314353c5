package org.apache.spark.shuffle.sluice;

import io.sluice.client.coordinator.ShuffleCoordinator;
import io.sluice.common.SluiceConf;
import io.sluice.protocol.proto.ServerAddress;
import java.io.IOException;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.apache.spark.MapOutputTrackerMaster;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;
import org.apache.spark.SparkEnv;
import org.apache.spark.SparkException;
import org.apache.spark.TaskContext;
import org.apache.spark.shuffle.ShuffleHandle;
import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import org.apache.spark.shuffle.ShuffleReader;
import org.apache.spark.shuffle.ShuffleWriteMetricsReporter;
import org.apache.spark.shuffle.ShuffleWriter;
import org.apache.spark.shuffle.sort.SortShuffleManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Spark's shuffle through Sluice: set {@code spark.shuffle.manager} to this class and {@code
 * spark.sluice.servers} to the servers (and, for stateless executors and dynamic allocation without
 * the external shuffle service, {@code spark.shuffle.sort.io.plugin.class} to {@link
 * SluiceShuffleDataIO}). Spark 3.x creates the manager before it fetches {@code --jars}, so there
 * the client jar goes on {@code spark.driver.extraClassPath} and {@code
 * spark.executor.extraClassPath}; Spark 4 loads it from {@code --jars}.
 *
 * <p>On the driver it owns the application's {@link ShuffleCoordinator} (created with the first
 * shuffle, when the application id is known): {@link #registerShuffle} registers the shuffle with
 * it, {@link #unregisterShuffle} deletes its files on the servers, {@link #stop} unregisters the
 * application. Executors (and the driver, when it runs tasks) share one client context per JVM.
 *
 * <p>It extends {@link SortShuffleManager} for one reason: Spark SQL copies every row before a
 * shuffle unless the manager is a SortShuffleManager, to protect writers that buffer row objects.
 * This writer serializes each record before it takes the next one, so the copy would be pure cost.
 * Every shuffle method is overridden; nothing of the local-disk shuffle runs, except for shuffles
 * that fall back to it ({@link ShuffleFallback}), whose handles are Spark's own.
 */
public class SluiceShuffleManager extends SortShuffleManager {
  private static final Logger LOG = LoggerFactory.getLogger(SluiceShuffleManager.class);

  private final SparkConf conf;
  private final boolean isDriver;
  private final SluiceConf sluiceConf;
  private final SluiceClients clients;
  private final ShuffleFallback fallback;

  /** Shuffles registered on the built-in sort shuffle (driver only). */
  private final Set<Integer> builtIn = ConcurrentHashMap.newKeySet();

  private ShuffleCoordinator coordinator; // driver only; guarded by this

  public SluiceShuffleManager(SparkConf conf, boolean isDriver) {
    this(conf, isDriver, LOG::warn);
  }

  /** With the configuration's warnings sent to {@code configWarnings} (tests). */
  SluiceShuffleManager(SparkConf conf, boolean isDriver, Consumer<String> configWarnings) {
    super(conf);
    SparkLines.checkRunning(); // first: a jar of another Spark line fails later, and obscurely
    if (isDriver) { // once per application; first, as a misspelled key may be why a check fails
      for (String warning : SparkSluiceConf.unknownKeyWarnings(conf)) {
        configWarnings.accept("Spark configuration: " + warning);
      }
    }
    SparkSluiceConf.checkCompatible(conf);
    this.conf = conf;
    this.isDriver = isDriver;
    this.sluiceConf = SparkSluiceConf.toSluiceConf(conf, isDriver);
    this.clients = new SluiceClients(sluiceConf);
    this.fallback = ShuffleFallback.fromConf(conf);
  }

  @Override
  public <K, V, C> ShuffleHandle registerShuffle(int shuffleId, ShuffleDependency<K, V, C> dep) {
    int numMaps = dep.rdd().getNumPartitions();
    int numPartitions = dep.partitioner().numPartitions();
    String reason = fallback.reasonBeforeRegistering(numPartitions);
    if (reason != null) {
      return builtIn(shuffleId, dep, reason);
    }
    ShuffleCoordinator c;
    try {
      c = coordinator(dep.rdd().sparkContext());
      c.registerShuffle(shuffleId, numMaps, numPartitions);
    } catch (IOException e) {
      if (fallback.whenNoServerTakesIt()) {
        return builtIn(shuffleId, dep, e.getMessage());
      }
      throw Sneaky.raise(
          new SparkException(
              "Cannot register shuffle "
                  + shuffleId
                  + " of app "
                  + conf.getAppId()
                  + " with Sluice ("
                  + ShuffleFallback.POLICY
                  + "=never): "
                  + e.getMessage(),
              e));
    }
    return new SluiceShuffleHandle<>(
        shuffleId, dep, c.appId(), SparkSluiceConf.driverHost(conf), c.port(), numMaps);
  }

  /** Registers {@code shuffleId} with Spark's built-in sort shuffle, saying why. */
  private <K, V, C> ShuffleHandle builtIn(
      int shuffleId, ShuffleDependency<K, V, C> dep, String reason) {
    LOG.warn(
        "Shuffle {} of app {} runs on Spark's built-in sort shuffle, not Sluice: {}. Its map"
            + " output stays on the executors.",
        shuffleId,
        conf.getAppId(),
        reason);
    builtIn.add(shuffleId);
    return super.registerShuffle(shuffleId, dep);
  }

  /**
   * The application's coordinator, started with the first shuffle Sluice takes.
   *
   * @throws IOException when no server is configured or found, or the coordinator cannot start
   */
  private synchronized ShuffleCoordinator coordinator(SparkContext sc) throws IOException {
    if (!isDriver) {
      throw new IllegalStateException("shuffles are registered on the driver only");
    }
    if (coordinator == null) {
      DriverAttempt attempt = DriverAttempt.current(conf.getAppId());
      String appId = attempt.appId();
      ServerDiscovery discovery = ServerDiscovery.fromConf(conf);
      List<ServerAddress> servers = discovery.servers(conf);
      if (servers.isEmpty()) {
        throw new IOException(
            "no Sluice server is configured or found: set "
                + SparkSluiceConf.SERVERS
                + " or "
                + SparkSluiceConf.SERVER_DISCOVERY);
      }
      try {
        coordinator =
            new ShuffleCoordinator(
                appId,
                servers,
                discovery.racks(),
                clients.context(),
                SparkSluiceConf.driverBindAddress(conf));
      } catch (IOException e) {
        throw new IOException(
            "cannot start the Sluice coordinator of app " + appId + ": " + e.getMessage(), e);
      }
      // Spark's scheduler decides when a map stage is complete: its completion or else the
      // first reducer starts the commit
      coordinator.commitWhenReadersAsk();
      sc.addSparkListener(
          new MapStageCommits(
              this::runningCoordinator,
              () -> (MapOutputTrackerMaster) SparkEnv.get().mapOutputTracker(),
              shuffleId -> !builtIn.contains(shuffleId)));
      for (String earlier : attempt.earlierAppIds()) {
        coordinator.releaseApplication(earlier);
      }
      LOG.info(
          "Sluice coordinator of {} listens on {}:{}; servers {}",
          appId,
          SparkSluiceConf.driverHost(conf),
          coordinator.port(),
          servers);
    }
    return coordinator;
  }

  /** The coordinator, or null before the first shuffle and after {@link #stop}. */
  private synchronized ShuffleCoordinator runningCoordinator() {
    return coordinator;
  }

  @Override
  @SuppressWarnings("unchecked")
  public <K, V> ShuffleWriter<K, V> getWriter(
      ShuffleHandle handle, long mapId, TaskContext context, ShuffleWriteMetricsReporter metrics) {
    if (!(handle instanceof SluiceShuffleHandle)) {
      return super.getWriter(handle, mapId, context, metrics);
    }
    return new SluiceShuffleWriter<>(
        (SluiceShuffleHandle<K, V, Object>) handle, mapId, context, metrics, clients);
  }

  @Override
  @SuppressWarnings("unchecked")
  public <K, C> ShuffleReader<K, C> getReader(
      ShuffleHandle handle,
      int startMapIndex,
      int endMapIndex,
      int startPartition,
      int endPartition,
      TaskContext context,
      ShuffleReadMetricsReporter metrics) {
    if (!(handle instanceof SluiceShuffleHandle)) {
      return super.getReader(
          handle, startMapIndex, endMapIndex, startPartition, endPartition, context, metrics);
    }
    return new SluiceShuffleReader<>(
        (SluiceShuffleHandle<K, ?, C>) handle,
        startMapIndex,
        endMapIndex,
        startPartition,
        endPartition,
        context,
        metrics,
        clients,
        SparkEnv.get().mapOutputTracker());
  }

  @Override
  public boolean unregisterShuffle(int shuffleId) {
    // on executors too: the built-in shuffle's files of this shuffle, if any, are deleted
    super.unregisterShuffle(shuffleId);
    clients.commits().forget(shuffleId);
    if (builtIn.remove(shuffleId)) {
      return true;
    }
    ShuffleCoordinator c = runningCoordinator();
    if (c != null) {
      c.unregisterShuffle(shuffleId);
    }
    return true;
  }

  @Override
  public void stop() {
    ShuffleCoordinator c;
    synchronized (this) {
      c = coordinator;
      coordinator = null;
    }
    if (c != null) {
      c.close();
    }
    clients.close();
    super.stop();
  }
}
