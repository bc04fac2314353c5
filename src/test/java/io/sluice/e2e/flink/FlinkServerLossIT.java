package io.sluice.e2e.flink;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.testutil.TestCluster;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.functions.RichReduceFunction;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A producer's data is lost after it finished: the first attempt of a consumer stops the server a
 * producer wrote to (from its operator's {@code open()}, through a static handle to this test's
 * servers; the MiniCluster runs in this JVM). The consumer's read fails, Flink reruns the producer,
 * the placement leaves the dead server out, and the job still completes with the result of Flink's
 * built-in shuffle.
 */
class FlinkServerLossIT {
  @TempDir static Path tmp;

  /** The servers the running job uses, for its operators. */
  private static volatile TestCluster servers;

  private static final AtomicBoolean serverStopped = new AtomicBoolean();
  private static final Set<String> producerAttempts = ConcurrentHashMap.newKeySet();
  private static List<String> expected;
  private static MiniCluster flink;

  @BeforeAll
  static void start() throws Exception {
    MiniCluster builtin = FlinkHarness.builtin();
    try {
      serverStopped.set(true); // nothing to stop on the built-in shuffle
      expected = FlinkHarness.collectSorted(job(FlinkHarness.batch(builtin, 2)));
    } finally {
      builtin.close();
    }
    serverStopped.set(false);
    producerAttempts.clear();
    servers = TestCluster.start(tmp.resolve("sluice"), 2);
    flink = FlinkHarness.sluice(servers);
  }

  @AfterAll
  static void stop() throws Exception {
    if (flink != null) {
      flink.close();
    }
    if (servers != null) {
      servers.close();
    }
  }

  /**
   * Two producers, placed round robin: the first on server 0, the second on server 1. Two consumers
   * sum per key; the first attempt of consumer 0 stops server 0 before it reads.
   */
  private static DataStream<String> job(StreamExecutionEnvironment env) {
    return env.fromSequence(0, 49_999)
        .setParallelism(2)
        .map(new RecordProducerAttempt())
        .setParallelism(2)
        .keyBy(t -> t.f0)
        .reduce(new SumStoppingServerZeroOnce())
        .setParallelism(2)
        .map(t -> t.f0 + ":" + t.f1)
        .returns(Types.STRING);
  }

  static final class RecordProducerAttempt extends RichMapFunction<Long, Tuple2<Long, Long>> {
    private static final long serialVersionUID = 1L;

    @Override
    public void open(OpenContext openContext) {
      producerAttempts.add(
          getRuntimeContext().getTaskInfo().getIndexOfThisSubtask()
              + "/"
              + getRuntimeContext().getTaskInfo().getAttemptNumber());
    }

    @Override
    public Tuple2<Long, Long> map(Long v) {
      return Tuple2.of(v % 31, v);
    }
  }

  static final class SumStoppingServerZeroOnce extends RichReduceFunction<Tuple2<Long, Long>> {
    private static final long serialVersionUID = 1L;

    @Override
    public void open(OpenContext openContext) {
      if (getRuntimeContext().getTaskInfo().getIndexOfThisSubtask() == 0
          && getRuntimeContext().getTaskInfo().getAttemptNumber() == 0
          && serverStopped.compareAndSet(false, true)) {
        servers.server(0).close();
      }
    }

    @Override
    public Tuple2<Long, Long> reduce(Tuple2<Long, Long> a, Tuple2<Long, Long> b) {
      return Tuple2.of(a.f0, a.f1 + b.f1);
    }
  }

  @Test
  void aLostProducerIsRerunAndTheJobCompletes() throws Exception {
    long pushedToServer1 = servers.server(1).metrics().bytesPushed().getCount();

    List<String> result = FlinkHarness.collectSorted(job(FlinkHarness.batch(flink, 2)));

    assertThat(result).hasSize(31).isEqualTo(expected);
    assertThat(serverStopped).as("server 0 was stopped during the job").isTrue();
    // a producer ran a second time, its data now on the server that answers
    assertThat(producerAttempts).contains("0/0", "1/0").hasSizeGreaterThan(2);
    assertThat(servers.server(1).metrics().bytesPushed().getCount()).isGreaterThan(pushedToServer1);
    assertThat(servers.server(1).metrics().mapReads().getCount()).isPositive();
  }
}
