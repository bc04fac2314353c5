package io.sluice.benchmarks;

import java.util.Locale;
import java.util.Map;
import org.apache.flink.api.common.BatchShuffleMode;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExecutionOptions;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.runtime.shuffle.ShuffleServiceOptions;
import org.apache.flink.runtime.util.EnvironmentInformation;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;

/** The Flink jobs of {@code shuffle-bench flink} and the MiniCluster they run on. */
final class FlinkWorkloads {
  private FlinkWorkloads() {}

  /** A padding that makes each record about 110 bytes through the exchange. */
  private static final String PAD = "x".repeat(96);

  /**
   * keyBy(key).reduce(sum) over {@code records} generated records of {@code keys} keys: every
   * record crosses one blocking exchange from {@code producers} to {@code consumers} subtasks.
   */
  static final class Workload {
    final String name;
    final long records;
    final long keys;
    final int producers;
    final int consumers;

    /** The share of records that carry key 0 (the rest spread over all keys). */
    final double hotKeyShare;

    Workload(String name, long records, long keys, int producers, int consumers) {
      this(name, records, keys, producers, consumers, 0);
    }

    private Workload(
        String name, long records, long keys, int producers, int consumers, double hotKeyShare) {
      this.name = name;
      this.records = records;
      this.keys = keys;
      this.producers = producers;
      this.consumers = consumers;
      this.hotKeyShare = hotKeyShare;
    }

    Workload withHotKeyShare(double share) {
      return new Workload(name, records, keys, producers, consumers, share);
    }

    Workload scaled(double f) {
      return new Workload(
          name, Math.max(1000, (long) (records * f)), keys, producers, consumers, hotKeyShare);
    }

    String describe() {
      return String.format(
          Locale.ROOT,
          "%,d records of ~110 B, %,d keys%s, %d producers -> %d consumers",
          records,
          keys,
          hotKeyShare > 0 ? String.format(Locale.ROOT, " (%.0f %% on one)", hotKeyShare * 100) : "",
          producers,
          consumers);
    }

    JobGraph jobGraph() {
      Configuration conf = new Configuration();
      conf.set(ExecutionOptions.RUNTIME_MODE, RuntimeExecutionMode.BATCH);
      conf.set(ExecutionOptions.BATCH_SHUFFLE_MODE, BatchShuffleMode.ALL_EXCHANGES_BLOCKING);
      StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
      long k = keys;
      // every hot-th record carries key 0
      long hot = hotKeyShare > 0 ? Math.max(1, Math.round(1 / hotKeyShare)) : 0;
      env.fromSequence(0, records - 1)
          .setParallelism(producers)
          .map(i -> Tuple3.of(hot > 0 && i % hot == 0 ? 0L : i % k, 1L, PAD))
          .returns(Types.TUPLE(Types.LONG, Types.LONG, Types.STRING))
          .setParallelism(producers)
          .keyBy(t -> t.f0)
          .reduce((a, b) -> Tuple3.of(a.f0, a.f1 + b.f1, a.f2))
          .setParallelism(consumers)
          .map(new Signature())
          .setParallelism(consumers)
          .sinkTo(new DiscardingSink<>())
          .setParallelism(consumers);
      return env.getStreamGraph().getJobGraph();
    }
  }

  /**
   * Sums what the job produced into accumulators: the result's signature. A map before a discarding
   * sink, the sink API every Flink line has.
   */
  static final class Signature extends RichMapFunction<Tuple3<Long, Long, String>, Long> {
    private static final long serialVersionUID = 1L;
    private transient LongCounter keys;
    private transient LongCounter records;
    private transient LongCounter weighted;

    @Override
    public void open(OpenContext context) {
      keys = getRuntimeContext().getLongCounter("keys");
      records = getRuntimeContext().getLongCounter("records");
      weighted = getRuntimeContext().getLongCounter("weighted");
    }

    @Override
    public Long map(Tuple3<Long, Long, String> value) {
      keys.add(1);
      records.add(value.f1);
      weighted.add(value.f0 * 31 + value.f1);
      return value.f0;
    }
  }

  /** The version of the Flink the benchmark runs on. */
  static String flinkVersion() {
    return EnvironmentInformation.getVersion();
  }

  /** A MiniCluster of two TaskManagers with two slots each. */
  static final class Cluster implements AutoCloseable {
    private final MiniCluster cluster;

    private Cluster(Configuration conf) throws Exception {
      conf.set(RestOptions.BIND_PORT, "0");
      conf.set(RestOptions.ADDRESS, "127.0.0.1");
      conf.set(TaskManagerOptions.NETWORK_MEMORY_MIN, MemorySize.parse("256m"));
      conf.set(TaskManagerOptions.NETWORK_MEMORY_MAX, MemorySize.parse("256m"));
      conf.set(TaskManagerOptions.MANAGED_MEMORY_SIZE, MemorySize.parse("256m"));
      cluster =
          new MiniCluster(
              new MiniClusterConfiguration.Builder()
                  .setConfiguration(conf)
                  .setNumTaskManagers(2)
                  .setNumSlotsPerTaskManager(2)
                  .build());
      cluster.start();
    }

    /** Flink's own blocking shuffle (sort-merge, compressed). */
    static Cluster builtin() throws Exception {
      return new Cluster(new Configuration());
    }

    /** Sluice on {@code servers}, with {@code settings} over the plugin's defaults. */
    static Cluster sluice(String servers, Map<String, String> settings) throws Exception {
      Configuration conf = new Configuration();
      conf.set(
          ShuffleServiceOptions.SHUFFLE_SERVICE_FACTORY_CLASS,
          "io.sluice.flink.SluiceShuffleServiceFactory");
      conf.setString("sluice.servers", servers);
      settings.forEach(conf::setString);
      return new Cluster(conf);
    }

    /** Runs the job and returns its result's signature. */
    String run(Workload w) throws Exception {
      JobExecutionResult r = cluster.executeJobBlocking(w.jobGraph());
      return String.format(
          Locale.ROOT,
          "keys=%d records=%d weighted=%d",
          (Long) r.getAccumulatorResult("keys"),
          (Long) r.getAccumulatorResult("records"),
          (Long) r.getAccumulatorResult("weighted"));
    }

    @Override
    public void close() throws Exception {
      cluster.close();
    }
  }
}
