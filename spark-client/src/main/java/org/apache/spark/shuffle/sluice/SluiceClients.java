package org.apache.spark.shuffle.sluice;

import io.sluice.client.ClientContext;
import io.sluice.client.coordinator.CoordinatorClient;
import io.sluice.common.SluiceConf;
import io.sluice.protocol.proto.ServerAddress;
import java.io.Closeable;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.spark.SparkEnv;

/**
 * The one {@link ClientContext} of a Spark JVM (executor or driver), created on first use, and a
 * coordinator client per coordinator address. All tasks of the JVM share its connections and its
 * in-flight bound and the coordinators' answers on where committed data is ({@link
 * CommittedSplitsCache}); its client metrics are the Spark metrics source {@code sluice}. Thread
 * safe.
 */
final class SluiceClients implements Closeable {
  private final SluiceConf conf;
  private final Map<String, CoordinatorClient> coordinators = new ConcurrentHashMap<>();
  private final CommittedSplitsCache commits = new CommittedSplitsCache();
  private volatile ClientContext context;
  private SluiceMetricsSource metricsSource; // guarded by this
  private boolean closed; // guarded by this

  SluiceClients(SluiceConf conf) {
    this.conf = conf;
  }

  ClientContext context() {
    ClientContext c = context;
    if (c != null) {
      return c;
    }
    synchronized (this) {
      if (closed) {
        throw new IllegalStateException("the Sluice shuffle manager is stopped");
      }
      if (context == null) {
        // created on first use, when Spark's environment (and its secret) exists
        context = new ClientContext(SparkSluiceConf.withSparkSecret(conf));
        SparkEnv env = SparkEnv.get();
        if (env != null) {
          metricsSource = new SluiceMetricsSource(context.metrics());
          env.metricsSystem().registerSource(metricsSource);
        }
      }
      return context;
    }
  }

  /** A client of application {@code appId}'s coordinator at {@code address}. */
  CoordinatorClient coordinator(String appId, ServerAddress address) {
    return coordinators.computeIfAbsent(
        appId + "@" + ClientContext.format(address),
        k -> new CoordinatorClient(context(), appId, address));
  }

  /** Where committed shuffles' data is, as the coordinators answered this JVM's readers. */
  CommittedSplitsCache commits() {
    return commits;
  }

  @Override
  public synchronized void close() {
    closed = true;
    SparkEnv env = SparkEnv.get();
    if (metricsSource != null && env != null) {
      env.metricsSystem().removeSource(metricsSource);
    }
    metricsSource = null;
    if (context != null) {
      context.close();
      context = null;
    }
    coordinators.clear();
  }
}
