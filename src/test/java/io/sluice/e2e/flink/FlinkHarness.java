package io.sluice.e2e.flink;

import io.sluice.flink.SluiceShuffleServiceFactory;
import io.sluice.server.ShuffleServer;
import io.sluice.testutil.TestCluster;
import java.io.File;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.flink.api.common.BatchShuffleMode;
import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.api.common.functions.RuntimeContext;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExecutionOptions;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.runtime.shuffle.ShuffleServiceOptions;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.operators.StreamingRuntimeContext;
import org.apache.flink.streaming.util.TestStreamEnvironment;
import org.apache.flink.util.CloseableIterator;

/**
 * What the Flink suites share: MiniClusters (two TaskManagers, unless a suite asks for more, with
 * two slots each, in this JVM) with Flink's built-in shuffle or with Sluice, batch environments on
 * them, result collection, and the servers' own counters that show Sluice carried a job's data.
 */
final class FlinkHarness {
  /** Small regions, so every job's partitions span several. */
  static final String REGION_SIZE = "128k";

  private FlinkHarness() {}

  /** A MiniCluster with Flink's built-in shuffle, for reference results. */
  static MiniCluster builtin() throws Exception {
    return builtin(new Configuration(), 2);
  }

  /**
   * A MiniCluster with Flink's built-in shuffle and {@code taskManagers} TaskManagers, with {@code
   * settings} over the suites' own.
   */
  static MiniCluster builtin(Configuration settings, int taskManagers) throws Exception {
    Configuration conf = clusterConf();
    conf.addAll(settings);
    return start(conf, taskManagers);
  }

  /** A MiniCluster whose shuffle service is Sluice, on {@code servers}. */
  static MiniCluster sluice(TestCluster servers) throws Exception {
    return sluice(servers, new Configuration());
  }

  /**
   * A MiniCluster whose shuffle service is Sluice, on {@code servers}, with {@code settings} over
   * the suites' own.
   */
  static MiniCluster sluice(TestCluster servers, Configuration settings) throws Exception {
    return sluice(servers, settings, 2);
  }

  /** As {@link #sluice(TestCluster, Configuration)}, with {@code taskManagers} TaskManagers. */
  static MiniCluster sluice(TestCluster servers, Configuration settings, int taskManagers)
      throws Exception {
    Configuration conf = sluiceConf(servers);
    conf.addAll(settings);
    return start(conf, taskManagers);
  }

  /**
   * Settings that load Sluice through {@link ObservingShuffleServiceFactory}, which records what
   * the shuffle master placed and reported lost.
   */
  static Configuration observing() {
    Configuration conf = new Configuration();
    conf.set(
        ShuffleServiceOptions.SHUFFLE_SERVICE_FACTORY_CLASS,
        ObservingShuffleServiceFactory.class.getName());
    return conf;
  }

  /** The settings of {@link #sluice(TestCluster)}: Sluice on {@code servers}, the suites' own. */
  static Configuration sluiceConf(TestCluster servers) {
    Configuration conf = clusterConf();
    conf.set(
        ShuffleServiceOptions.SHUFFLE_SERVICE_FACTORY_CLASS,
        SluiceShuffleServiceFactory.class.getName());
    conf.setString("sluice.servers", serverList(servers));
    conf.setString("sluice.flink.regionSize", REGION_SIZE);
    conf.setString("sluice.flink.inputGateMemory", "128k");
    conf.setString("sluice.flink.readConcurrency", "2");
    // the test servers' client settings: quick retries
    conf.setString("sluice.push.retryWait", "5ms");
    conf.setString("sluice.push.retryMaxWait", "50ms");
    // a server these suites stop stays stopped: its loss shows after 2s, not the 60s a restart
    // may take (FlinkRestartIT waits as long as the default)
    conf.setString("sluice.client.serverRestartWait", "2s");
    return conf;
  }

  static String serverList(TestCluster servers) {
    return servers.servers().stream()
        .map(s -> "127.0.0.1:" + s.port())
        .collect(Collectors.joining(","));
  }

  private static Configuration clusterConf() {
    Configuration conf = new Configuration();
    conf.set(RestOptions.BIND_PORT, "0");
    conf.set(TaskManagerOptions.NETWORK_MEMORY_MIN, MemorySize.parse("64m"));
    conf.set(TaskManagerOptions.NETWORK_MEMORY_MAX, MemorySize.parse("64m"));
    conf.set(TaskManagerOptions.MANAGED_MEMORY_SIZE, MemorySize.parse("64m"));
    conf.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
    conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 5);
    conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(100));
    // operators left without a parallelism get one from the bytes their inputs carry
    conf.setString("execution.batch.adaptive.auto-parallelism.avg-data-volume-per-task", "64k");
    conf.setString("execution.batch.adaptive.auto-parallelism.max-parallelism", "4");
    return conf;
  }

  private static MiniCluster start(Configuration conf, int taskManagers) throws Exception {
    MiniCluster cluster =
        new MiniCluster(
            new MiniClusterConfiguration.Builder()
                .setConfiguration(conf)
                .setNumTaskManagers(taskManagers)
                .setNumSlotsPerTaskManager(2)
                .build());
    cluster.start();
    return cluster;
  }

  /**
   * A batch environment on {@code cluster} with every exchange blocking.
   *
   * @param parallelism default parallelism, or -1 to let Flink choose from the data volume
   */
  static StreamExecutionEnvironment batch(MiniCluster cluster, int parallelism) {
    return environment(cluster, parallelism, BatchShuffleMode.ALL_EXCHANGES_BLOCKING);
  }

  /** A batch environment on {@code cluster} whose exchanges follow {@code shuffleMode}. */
  static StreamExecutionEnvironment environment(
      MiniCluster cluster, int parallelism, BatchShuffleMode shuffleMode) {
    Configuration job = new Configuration();
    job.set(ExecutionOptions.RUNTIME_MODE, RuntimeExecutionMode.BATCH);
    job.set(ExecutionOptions.BATCH_SHUFFLE_MODE, shuffleMode);
    return new TestStreamEnvironment(
        cluster, job, parallelism, Collections.emptyList(), Collections.emptyList());
  }

  /** A streaming environment on {@code cluster}: its exchanges are pipelined. */
  static StreamExecutionEnvironment streaming(MiniCluster cluster, int parallelism) {
    Configuration job = new Configuration();
    job.set(ExecutionOptions.RUNTIME_MODE, RuntimeExecutionMode.STREAMING);
    return new TestStreamEnvironment(
        cluster, job, parallelism, Collections.emptyList(), Collections.emptyList());
  }

  /** Runs the job that ends in {@code stream}; its records as strings, sorted. */
  static <T> List<String> collectSorted(DataStream<T> stream) throws Exception {
    List<String> out = new ArrayList<>();
    try (CloseableIterator<T> it = stream.executeAndCollect()) {
      it.forEachRemaining(r -> out.add(String.valueOf(r)));
    }
    Collections.sort(out);
    return out;
  }

  /**
   * Runs the job that ends in {@code stream} on a thread of its own, so the test can act on the
   * cluster meanwhile; its records as strings, sorted.
   */
  static <T> CompletableFuture<List<String>> collectSortedAsync(DataStream<T> stream) {
    CompletableFuture<List<String>> result = new CompletableFuture<>();
    Thread client =
        new Thread(
            () -> {
              try {
                result.complete(collectSorted(stream));
              } catch (Throwable e) {
                result.completeExceptionally(e);
              }
            },
            "flink-job-client");
    client.setDaemon(true);
    client.start();
    return result;
  }

  /**
   * Waits until {@code latch} opens, failing early with the job's error when {@code job} fails
   * first.
   */
  static void await(CountDownLatch latch, CompletableFuture<?> job, String what) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!latch.await(50, TimeUnit.MILLISECONDS)) {
      if (job.isDone()) {
        job.get(); // throws the job's failure
        throw new AssertionError("the job ended before " + what);
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting until " + what);
      }
    }
  }

  /**
   * The index of the MiniCluster TaskManager an operator runs on, the one {@link
   * MiniCluster#terminateTaskManager} takes: the MiniCluster gives TaskManager {@code i} the
   * working directory {@code tm_<i>}.
   */
  static int taskManagerIndex(RuntimeContext context) {
    File tmp =
        ((StreamingRuntimeContext) context).getTaskManagerRuntimeInfo().getTmpWorkingDirectory();
    String name = tmp.getParentFile().getName();
    if (!name.startsWith("tm_")) {
      throw new IllegalStateException("not a MiniCluster TaskManager's directory: " + tmp);
    }
    return Integer.parseInt(name.substring(3));
  }

  /** What every server has counted so far. */
  static ServerTotals totals(TestCluster servers) {
    long pushed = 0;
    long reads = 0;
    for (ShuffleServer s : servers.servers()) {
      pushed += s.metrics().bytesPushed().getCount();
      reads += s.metrics().mapReads().getCount();
    }
    return new ServerTotals(pushed, reads);
  }

  /** Bytes pushed to the servers and map partition reads they served. */
  static final class ServerTotals {
    final long bytesPushed;
    final long mapReads;

    ServerTotals(long bytesPushed, long mapReads) {
      this.bytesPushed = bytesPushed;
      this.mapReads = mapReads;
    }

    ServerTotals since(ServerTotals before) {
      return new ServerTotals(bytesPushed - before.bytesPushed, mapReads - before.mapReads);
    }

    @Override
    public String toString() {
      return bytesPushed + " bytes pushed, " + mapReads + " map reads";
    }
  }
}
