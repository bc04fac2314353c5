package io.sluice.e2e.flink;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.e2e.flink.FlinkJobs.KeyByResidue;
import io.sluice.e2e.flink.FlinkJobs.Runs;
import io.sluice.e2e.flink.FlinkJobs.Sum;
import io.sluice.flink.SluiceShuffleDescriptor;
import io.sluice.testutil.TestCluster;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Collectors;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Speculative execution ({@code execution.batch.speculative.enabled}): the first attempt of one
 * mapper subtask stops after some records, its map partition half written, until Flink cancels it.
 * The slow task detector (checking every 100 ms, once two of the three mappers finished, for a
 * mapper running longer than their median and at least 500 ms) starts a second attempt of that
 * subtask, which reads the same input partitions from Sluice and writes a map partition of its own,
 * attempt 1, while attempt 0's is still open; once it finishes, Flink cancels attempt 0 (whose
 * writer drops its partial partition) and the consumers read attempt 1's. Attempt 0 cannot finish
 * before it is canceled, so the two attempts overlap whatever the timing. The result equals the
 * built-in shuffle's (where no attempt is held back).
 */
class FlinkSpeculativeExecutionIT {
  @TempDir static Path tmp;

  private static final String MAPPER = "mapper";

  /** Whether the first attempt of mapper 0 is held back: not on the built-in reference run. */
  private static volatile boolean holdBack;

  /** What the mapper 0 attempts did, in order. */
  private static final List<String> events = new CopyOnWriteArrayList<>();

  /**
   * Numbers from two sources, spread over three mappers (a blocking exchange through Sluice too),
   * summed per key by two consumers.
   */
  private static DataStream<String> job(StreamExecutionEnvironment env) {
    return env.fromSequence(0, 199_999)
        .setParallelism(2)
        .rebalance()
        .map(new SlowFirstAttempt())
        .setParallelism(3)
        .keyBy(t -> t.f0)
        .reduce(new Sum())
        .setParallelism(2)
        .map(t -> t.f0 + ":" + t.f1)
        .returns(Types.STRING);
  }

  @Test
  void aSpeculativeAttemptWritesItsOwnMapPartitionAndItsOutputIsTheOneRead() throws Exception {
    List<String> expected;
    MiniCluster builtin = FlinkHarness.builtin();
    try {
      holdBack = false;
      expected = FlinkHarness.collectSorted(job(FlinkHarness.batch(builtin, 2)));
    } finally {
      builtin.close();
    }

    Configuration settings = FlinkHarness.observing();
    settings.setString("execution.batch.speculative.enabled", "true");
    // one MiniCluster host: blocking the slow node would block every TaskManager
    settings.setString("execution.batch.speculative.block-slow-node-duration", "0 ms");
    settings.setString("slow-task-detector.check-interval", "100 ms");
    settings.setString("slow-task-detector.execution-time.baseline-lower-bound", "500 ms");
    settings.setString("slow-task-detector.execution-time.baseline-ratio", "0.5");
    settings.setString("slow-task-detector.execution-time.baseline-multiplier", "1.0");
    try (TestCluster servers = TestCluster.start(tmp.resolve("sluice"), 2)) {
      MiniCluster flink = FlinkHarness.sluice(servers, settings);
      try {
        Runs.clear();
        events.clear();
        ObservingShuffleServiceFactory.reset();
        holdBack = true;

        List<String> result = FlinkHarness.collectSorted(job(FlinkHarness.batch(flink, 2)));

        assertThat(result).hasSize(31).isEqualTo(expected);
        assertThat(Runs.attempts(MAPPER)).contains("0/0", "0/1", "1/0", "2/0");
        // attempt 1 started while attempt 0, held back, still had its partition open
        assertThat(events)
            .containsSubsequence("0/0 held back", "0/0 canceled")
            .containsSubsequence("0/1 opened", "0/0 canceled");
        // the mappers' data set is the second the job places (shuffle 1): mapper 0's attempts
        // wrote distinct map partitions
        List<SluiceShuffleDescriptor> mapperOutputs =
            ObservingShuffleServiceFactory.placed().stream()
                .filter(d -> d.mapPartitionId().shuffleId() == 1)
                .filter(d -> d.mapPartitionId().mapIndex() == 0)
                .collect(Collectors.toList());
        assertThat(mapperOutputs)
            .extracting(d -> d.mapPartitionId().attempt())
            .contains(0, 1)
            .doesNotHaveDuplicates();
      } finally {
        flink.close();
      }
    }
  }

  /**
   * Keys numbers by their residue modulo 31. With {@link #holdBack}, the first attempt of subtask 0
   * stops after 15,000 records, by which time its writer has started several regions of its map
   * partition on the server (a region holds at most 96k here, about 5,000 records), and waits until
   * Flink cancels it.
   */
  static final class SlowFirstAttempt extends KeyByResidue {
    private static final long serialVersionUID = 1L;
    private transient boolean slow;
    private transient long records;

    SlowFirstAttempt() {
      super(MAPPER, 31);
    }

    @Override
    public void open(OpenContext openContext) throws Exception {
      super.open(openContext);
      int subtask = FlinkJobs.subtask(getRuntimeContext());
      int attempt = FlinkJobs.attempt(getRuntimeContext());
      if (subtask == 0) {
        events.add("0/" + attempt + " opened");
      }
      slow = holdBack && subtask == 0 && attempt == 0;
    }

    @Override
    public Tuple2<Long, Long> map(Long v) throws Exception {
      if (slow && ++records == 15_000) {
        events.add("0/0 held back");
        try {
          new CountDownLatch(1).await(); // until Flink cancels this attempt and interrupts it
        } catch (InterruptedException e) {
          events.add("0/0 canceled");
          throw e;
        }
      }
      return super.map(v);
    }
  }
}
