package io.sluice.e2e.flink;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.functions.RichReduceFunction;
import org.apache.flink.api.common.functions.RuntimeContext;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.co.KeyedCoProcessFunction;
import org.apache.flink.util.Collector;

/**
 * The batch jobs the Flink suites run, each on the built-in shuffle and on Sluice; each ends in the
 * stream whose records are compared. Inputs are generated, deterministic.
 */
final class FlinkJobs {
  /** The tags {@link Runs} records {@link #sumPerKey}'s operators under. */
  static final String PRODUCER = "producer";

  static final String CONSUMER = "consumer";

  private FlinkJobs() {}

  static List<String> lines(int count) {
    List<String> lines = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      StringBuilder line = new StringBuilder();
      for (int w = 0; w < 12; w++) {
        line.append("word").append((i * 31 + w * 17) % 307).append(w % 3 == 0 ? "  " : " ");
      }
      lines.add(line.toString());
    }
    return lines;
  }

  /** Counts the words of generated lines. */
  static DataStream<String> wordCount(StreamExecutionEnvironment env) {
    return env.fromData(lines(3000))
        .flatMap(
            (String line, Collector<Tuple2<String, Integer>> out) -> {
              for (String word : line.toLowerCase(Locale.ROOT).split("\\s+")) {
                if (!word.isEmpty()) {
                  out.collect(Tuple2.of(word, 1));
                }
              }
            })
        .returns(Types.TUPLE(Types.STRING, Types.INT))
        .keyBy(t -> t.f0)
        .sum(1)
        .map(t -> t.f0 + "=" + t.f1);
  }

  /** Sums numbers per key, the reduce running with {@code parallelism} subtasks. */
  static DataStream<String> keyedReduce(StreamExecutionEnvironment env, int parallelism) {
    return env.fromSequence(0, 59_999)
        .map(v -> Tuple2.of(v % 97, v))
        .returns(Types.TUPLE(Types.LONG, Types.LONG))
        .keyBy(t -> t.f0)
        .reduce((a, b) -> Tuple2.of(a.f0, a.f1 + b.f1))
        .setParallelism(parallelism)
        .map(t -> t.f0 + ":" + t.f1);
  }

  /** Joins orders with their customers on the customer id (an inner join, both sides keyed). */
  static DataStream<String> join(StreamExecutionEnvironment env) {
    DataStream<Tuple2<Long, String>> customers =
        env.fromSequence(0, 499)
            .map(c -> Tuple2.of(c, "customer-" + c))
            .returns(Types.TUPLE(Types.LONG, Types.STRING));
    DataStream<Tuple2<Long, Long>> orders =
        env.fromSequence(0, 19_999)
            .map(o -> Tuple2.of((o * 7) % 600, o)) // customers 500..599 have no record: dropped
            .returns(Types.TUPLE(Types.LONG, Types.LONG));
    return orders
        .connect(customers)
        .keyBy(o -> o.f0, c -> c.f0)
        .process(new HashJoin())
        .returns(Types.STRING);
  }

  /** Keeps both sides of each key and emits every matching pair once. */
  static final class HashJoin
      extends KeyedCoProcessFunction<Long, Tuple2<Long, Long>, Tuple2<Long, String>, String> {
    private static final long serialVersionUID = 1L;
    private transient ListState<Long> orders;
    private transient ListState<String> names;

    @Override
    public void open(OpenContext openContext) {
      orders = getRuntimeContext().getListState(new ListStateDescriptor<>("orders", Types.LONG));
      names = getRuntimeContext().getListState(new ListStateDescriptor<>("names", Types.STRING));
    }

    @Override
    public void processElement1(Tuple2<Long, Long> order, Context ctx, Collector<String> out)
        throws Exception {
      orders.add(order.f1);
      for (String name : names.get()) {
        out.collect("order " + order.f1 + " by " + name);
      }
    }

    @Override
    public void processElement2(Tuple2<Long, String> customer, Context ctx, Collector<String> out)
        throws Exception {
      names.add(customer.f1);
      for (Long order : orders.get()) {
        out.collect("order " + order + " by " + customer.f1);
      }
    }
  }

  /** Broadcasts numbers to three subtasks; each reports what it saw. */
  static DataStream<String> broadcast(StreamExecutionEnvironment env) {
    return env.fromSequence(0, 9_999)
        .broadcast()
        .map(new TagWithSubtask())
        .setParallelism(3)
        .keyBy(t -> t.f0)
        .reduce((a, b) -> Tuple2.of(a.f0, a.f1 + b.f1))
        .map(t -> "subtask " + t.f0 + " saw a total of " + t.f1);
  }

  static final class TagWithSubtask extends RichMapFunction<Long, Tuple2<Integer, Long>> {
    private static final long serialVersionUID = 1L;

    @Override
    public Tuple2<Integer, Long> map(Long value) {
      return Tuple2.of(getRuntimeContext().getTaskInfo().getIndexOfThisSubtask(), value);
    }
  }

  /** Enough records (about 14 MB serialized) for many regions in every partition. */
  static DataStream<String> manyRegions(StreamExecutionEnvironment env) {
    return env.fromSequence(0, 299_999)
        .map(v -> Tuple2.of(v % 1000, String.format(Locale.ROOT, "%040d", v * 7919)))
        .returns(Types.TUPLE(Types.LONG, Types.STRING))
        .keyBy(t -> t.f0)
        // a sum, so the result does not depend on the order records arrive in
        .reduce(
            (a, b) -> Tuple2.of(a.f0, Long.toString(Long.parseLong(a.f1) + Long.parseLong(b.f1))))
        .map(t -> t.f0 + " " + t.f1);
  }

  /**
   * The consumer is left without a parallelism: Flink picks it from the bytes the producers'
   * partitions report (64k per subtask, at most 4). Each result names the parallelism it ran with.
   */
  static DataStream<String> adaptiveParallelism(StreamExecutionEnvironment env) {
    return env.fromSequence(0, 99_999)
        .setParallelism(2)
        .map(v -> Tuple2.of(v % 50, v))
        .returns(Types.TUPLE(Types.LONG, Types.LONG))
        .setParallelism(2)
        .keyBy(t -> t.f0)
        .map(new TagWithParallelism());
  }

  static final class TagWithParallelism extends RichMapFunction<Tuple2<Long, Long>, String> {
    private static final long serialVersionUID = 1L;

    @Override
    public String map(Tuple2<Long, Long> t) {
      return "parallelism "
          + getRuntimeContext().getTaskInfo().getNumberOfParallelSubtasks()
          + " key "
          + t.f0
          + " value "
          + t.f1;
    }
  }

  /**
   * Numbers 0..49_999 from {@code producers} subtasks (the {@link #PRODUCER}, which keys each by
   * its residue modulo 31), summed per key by {@code sum} (the {@link #CONSUMER}) in {@code
   * consumers} subtasks: 31 results. Every exchange is blocking, so the consumers start once every
   * producer finished.
   */
  static DataStream<String> sumPerKey(
      StreamExecutionEnvironment env, int producers, int consumers, Sum sum) {
    return sumPerKey(env, producers, consumers, new KeyByResidue(PRODUCER, 31), sum);
  }

  /** {@link #sumPerKey} with a producer of the test's (a subclass acting while it maps). */
  static DataStream<String> sumPerKey(
      StreamExecutionEnvironment env,
      int producers,
      int consumers,
      KeyByResidue producer,
      Sum sum) {
    return env.fromSequence(0, 49_999)
        .setParallelism(producers)
        .map(producer)
        .setParallelism(producers)
        .keyBy(t -> t.f0)
        .reduce(sum)
        .setParallelism(consumers)
        .map(t -> t.f0 + ":" + t.f1)
        .returns(Types.STRING);
  }

  /** Keys a number by its residue; records its runs under {@code tag}. */
  static class KeyByResidue extends RichMapFunction<Long, Tuple2<Long, Long>> {
    private static final long serialVersionUID = 1L;
    private final String tag;
    private final long keys;

    KeyByResidue(String tag, long keys) {
      this.tag = tag;
      this.keys = keys;
    }

    @Override
    public void open(OpenContext openContext) throws Exception {
      Runs.record(tag, getRuntimeContext());
    }

    @Override
    public Tuple2<Long, Long> map(Long v) throws Exception {
      return Tuple2.of(v % keys, v);
    }
  }

  /**
   * Sums the values of a key; records its runs as the {@link #CONSUMER}. Tests subclass it to act
   * when a consumer opens.
   */
  static class Sum extends RichReduceFunction<Tuple2<Long, Long>> {
    private static final long serialVersionUID = 1L;

    @Override
    public void open(OpenContext openContext) throws Exception {
      Runs.record(CONSUMER, getRuntimeContext());
    }

    @Override
    public Tuple2<Long, Long> reduce(Tuple2<Long, Long> a, Tuple2<Long, Long> b) {
      return Tuple2.of(a.f0, a.f1 + b.f1);
    }
  }

  static int subtask(RuntimeContext context) {
    return context.getTaskInfo().getIndexOfThisSubtask();
  }

  static int attempt(RuntimeContext context) {
    return context.getTaskInfo().getAttemptNumber();
  }

  /**
   * Which subtask attempts of an operator ran, and on which MiniCluster TaskManager, by operator
   * tag. The MiniClusters run in the test's JVM, so operators record here and tests read it.
   */
  static final class Runs {
    private static final Map<String, Map<String, Integer>> RUNS = new ConcurrentHashMap<>();
    private static final Map<String, AtomicInteger> STARTS = new ConcurrentHashMap<>();

    private Runs() {}

    static void record(String tag, RuntimeContext context) {
      RUNS.computeIfAbsent(tag, t -> new ConcurrentHashMap<>())
          .put(subtask(context) + "/" + attempt(context), FlinkHarness.taskManagerIndex(context));
      STARTS.computeIfAbsent(tag, t -> new AtomicInteger()).incrementAndGet();
    }

    /**
     * How many subtask attempts of {@code tag} started, counting each: a new JobManager numbers its
     * attempts from 0 again, so {@link #attempts} would not tell a rerun apart.
     */
    static int starts(String tag) {
      AtomicInteger n = STARTS.get(tag);
      return n == null ? 0 : n.get();
    }

    /** The attempts of {@code tag} that started, as "subtask/attempt", sorted. */
    static SortedSet<String> attempts(String tag) {
      return new TreeSet<>(RUNS.getOrDefault(tag, Map.of()).keySet());
    }

    /** The TaskManagers {@code tag} ran on, by index. */
    static SortedSet<Integer> taskManagers(String tag) {
      return new TreeSet<>(RUNS.getOrDefault(tag, Map.of()).values());
    }

    /** The TaskManager (by index) each attempt of {@code tag} ran on, by "subtask/attempt". */
    static SortedMap<String, Integer> placement(String tag) {
      return new TreeMap<>(RUNS.getOrDefault(tag, Map.of()));
    }

    static void clear() {
      RUNS.clear();
      STARTS.clear();
    }
  }
}
