package io.sluice.e2e.flink;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
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
}
