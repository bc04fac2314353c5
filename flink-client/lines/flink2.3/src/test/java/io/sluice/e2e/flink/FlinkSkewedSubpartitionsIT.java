package io.sluice.e2e.flink;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.testutil.TestCluster;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.shuffle.ShuffleServiceOptions;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Flink 2.x's adaptive batch scheduler balances an input whose records carry no key (a rebalance):
 * it cuts the bytes of every (producer, subpartition) into even slices, so a consumer reads some
 * subpartitions of one producer and others of the next, and one producer's heavy subpartitions go
 * to several consumers. Every Sluice input gate reads exactly the range it is given per producer:
 * the job's result equals Flink's own shuffle's, and the plan did hand gates ranges that differ
 * between producers.
 */
class FlinkSkewedSubpartitionsIT {
  @TempDir Path tmp;

  /**
   * 60 000 numbers from 3 producers, every tenth one carrying 2 KB (so the subpartitions it lands
   * in hold most of the bytes), rebalanced to consumers whose number Flink picks from the bytes.
   */
  private static DataStream<String> skewed(StreamExecutionEnvironment env) {
    return env.fromSequence(0, 59_999)
        .setParallelism(3)
        .map(v -> v % 10 == 0 ? v + ":" + "x".repeat(2000) : v + ":")
        .returns(Types.STRING)
        .setParallelism(3)
        .rebalance()
        .map(s -> s.substring(0, s.indexOf(':')) + " " + s.length())
        .returns(Types.STRING);
  }

  @Test
  void everyGateReadsTheRangeItIsGivenPerProducer() throws Exception {
    List<String> builtin;
    MiniCluster flink = FlinkHarness.builtin();
    try {
      builtin = FlinkHarness.collectSorted(skewed(FlinkHarness.batch(flink, -1)));
    } finally {
      flink.close();
    }

    try (TestCluster servers = TestCluster.start(tmp, 2)) {
      Configuration recording = new Configuration();
      recording.set(
          ShuffleServiceOptions.SHUFFLE_SERVICE_FACTORY_CLASS,
          RecordingShuffleServiceFactory.class.getName());
      RecordingShuffleServiceFactory.reset();
      flink = FlinkHarness.sluice(servers, recording);
      try {
        FlinkHarness.ServerTotals before = FlinkHarness.totals(servers);
        assertThat(FlinkHarness.collectSorted(skewed(FlinkHarness.batch(flink, -1))))
            .hasSize(60_000)
            .isEqualTo(builtin);
        assertThat(FlinkHarness.totals(servers).since(before).bytesPushed).isPositive();
      } finally {
        flink.close();
      }
    }
    List<List<String>> gates = RecordingShuffleServiceFactory.gates();
    assertThat(gates).as("input gates created").isNotEmpty();
    assertThat(gates)
        .as("a gate whose producers' ranges differ (the scheduler split the input unevenly)")
        .anySatisfy(read -> assertThat(ranges(read)).hasSizeGreaterThan(1));
  }

  /** The distinct subpartition ranges a gate read ("start-end"). */
  private static Set<String> ranges(List<String> read) {
    Set<String> ranges = new HashSet<>();
    for (String r : read) {
      ranges.add(r.substring(r.indexOf(':') + 1));
    }
    return ranges;
  }
}
