package io.sluice.e2e.flink;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.testutil.TestCluster;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.BatchShuffleMode;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExecutionOptions;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code sluice.flink.fallback}: on one MiniCluster whose shuffle service is Sluice, a streaming
 * job (pipelined exchanges) and a batch job of hybrid exchanges run on Flink's own Netty shuffle
 * and push nothing to the Sluice servers, while a batch job of blocking exchanges goes through
 * Sluice; all three give the same result. With {@code never} the first two are refused naming the
 * setting.
 */
class FlinkFallbackIT {
  private static final int KEYS = 13;

  @TempDir Path tmp;

  /** Numbers 0..9999 keyed by their residue and tagged with it: the same lines in every mode. */
  private static DataStream<String> tagged(StreamExecutionEnvironment env) {
    return env.fromSequence(0, 9_999)
        .keyBy(v -> v % KEYS)
        .map(v -> (v % KEYS) + ":" + v)
        .returns(Types.STRING);
  }

  private static List<String> expected() {
    List<String> lines = new ArrayList<>();
    for (long v = 0; v < 10_000; v++) {
      lines.add((v % KEYS) + ":" + v);
    }
    lines.sort(null);
    return lines;
  }

  @Test
  void streamingAndHybridRunOnNettyAndBlockingOnSluiceInOneCluster() throws Exception {
    try (TestCluster servers = TestCluster.start(tmp, 2)) {
      // Flink 2.x's Netty shuffle master serves hybrid exchanges only when the cluster's default
      // shuffle mode is hybrid; each job below sets its own mode
      Configuration cluster = new Configuration();
      cluster.set(ExecutionOptions.BATCH_SHUFFLE_MODE, BatchShuffleMode.ALL_EXCHANGES_HYBRID_FULL);
      MiniCluster flink = FlinkHarness.sluice(servers, cluster);
      try {
        FlinkHarness.ServerTotals before = FlinkHarness.totals(servers);
        assertThat(FlinkHarness.collectSorted(tagged(FlinkHarness.streaming(flink, 2))))
            .as("a streaming job")
            .isEqualTo(expected());
        assertThat(
                FlinkHarness.collectSorted(
                    tagged(
                        FlinkHarness.environment(
                            flink, 2, BatchShuffleMode.ALL_EXCHANGES_HYBRID_FULL))))
            .as("a batch job of hybrid exchanges")
            .isEqualTo(expected());
        assertThat(FlinkHarness.totals(servers).since(before).bytesPushed)
            .as("bytes the Netty-shuffled jobs pushed to Sluice")
            .isZero();

        assertThat(FlinkHarness.collectSorted(tagged(FlinkHarness.batch(flink, 2))))
            .as("a batch job of blocking exchanges")
            .isEqualTo(expected());
        assertThat(FlinkHarness.totals(servers).since(before).bytesPushed)
            .as("bytes the blocking job pushed to Sluice")
            .isPositive();
      } finally {
        flink.close();
      }
    }
  }
}
