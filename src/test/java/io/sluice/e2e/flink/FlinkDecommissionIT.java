package io.sluice.e2e.flink;

import static io.sluice.e2e.flink.FlinkJobs.CONSUMER;
import static io.sluice.e2e.flink.FlinkJobs.PRODUCER;
import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.e2e.flink.FlinkJobs.KeyByResidue;
import io.sluice.e2e.flink.FlinkJobs.Runs;
import io.sluice.e2e.flink.FlinkJobs.Sum;
import io.sluice.flink.SluiceShuffleDescriptor;
import io.sluice.server.ShuffleServer;
import io.sluice.testutil.TestCluster;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A server decommissioned while a Flink batch job's producers write to it: the map partitions
 * placed on it before finish and are read from it, so no producer or consumer runs twice and the
 * result is the built-in shuffle's; the next job places nothing on it; and it reports itself
 * drained once the jobs' applications end.
 */
class FlinkDecommissionIT {
  @TempDir Path tmp;

  /** The servers the running job uses, for its operators (the MiniCluster runs in this JVM). */
  private static volatile TestCluster servers;

  private static final AtomicBoolean decommissioned = new AtomicBoolean();
  private static List<String> expected;
  private MiniCluster flink;

  @BeforeAll
  static void reference() throws Exception {
    MiniCluster builtin = FlinkHarness.builtin();
    try {
      expected =
          FlinkHarness.collectSorted(
              job(FlinkHarness.batch(builtin, 2), new KeyByResidue(PRODUCER, 31)));
    } finally {
      builtin.close();
    }
  }

  @AfterEach
  void stop() throws Exception {
    if (flink != null) {
      flink.close();
    }
    if (servers != null) {
      servers.close();
      servers = null;
    }
  }

  /** {@link FlinkJobs#sumPerKey}'s job with {@code producer} as its producer. */
  private static DataStream<String> job(StreamExecutionEnvironment env, KeyByResidue producer) {
    return env.fromSequence(0, 49_999)
        .setParallelism(4)
        .map(producer)
        .setParallelism(4)
        .keyBy(t -> t.f0)
        .reduce(new Sum())
        .setParallelism(2)
        .map(t -> t.f0 + ":" + t.f1)
        .returns(Types.STRING);
  }

  @Test
  void aServerDecommissionedWhileProducersWriteToItReRunsNothingAndDrains() throws Exception {
    decommissioned.set(false);
    Runs.clear();
    ObservingShuffleServiceFactory.reset();
    servers = TestCluster.start(tmp.resolve("sluice"), 2);
    flink = FlinkHarness.sluice(servers, FlinkHarness.observing());
    ShuffleServer leaving = servers.server(0);

    List<String> result =
        FlinkHarness.collectSorted(
            job(FlinkHarness.batch(flink, 2), new DecommissionServerZeroOnOpen()));

    assertThat(result).hasSize(31).isEqualTo(expected);
    assertThat(decommissioned).as("server 0 was decommissioned during the job").isTrue();
    List<SluiceShuffleDescriptor> firstJob = ObservingShuffleServiceFactory.placed();
    assertThat(firstJob)
        .as("producer outputs placed on server 0 before its decommission")
        .anyMatch(d -> d.port() == leaving.port());
    assertThat(Runs.attempts(PRODUCER)).containsExactly("0/0", "1/0", "2/0", "3/0");
    assertThat(Runs.attempts(CONSUMER)).containsExactly("0/0", "1/0");
    assertThat(leaving.metrics().mapReads().getCount())
        .as("reads served by the decommissioned server")
        .isPositive();

    // the next job places nothing on it
    ObservingShuffleServiceFactory.reset();
    List<String> again =
        FlinkHarness.collectSorted(
            job(FlinkHarness.batch(flink, 2), new KeyByResidue(PRODUCER, 31)));
    assertThat(again).isEqualTo(expected);
    assertThat(
            ObservingShuffleServiceFactory.placed().stream()
                .map(SluiceShuffleDescriptor::port)
                .collect(Collectors.toSet()))
        .as("servers the second job placed its partitions on")
        .containsExactly(servers.server(1).port());

    // each job's application is unregistered when it ends: nothing is left, it is drained
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (leaving.lifecycle() != ShuffleServer.Lifecycle.DRAINED && System.nanoTime() < deadline) {
      Thread.sleep(50);
    }
    assertThat(leaving.lifecycle()).isEqualTo(ShuffleServer.Lifecycle.DRAINED);
  }

  /** Decommissions server 0 when the first attempt of producer 0 opens, before it writes. */
  static final class DecommissionServerZeroOnOpen extends KeyByResidue {
    private static final long serialVersionUID = 1L;

    DecommissionServerZeroOnOpen() {
      super(PRODUCER, 31);
    }

    @Override
    public void open(OpenContext openContext) throws Exception {
      super.open(openContext);
      if (FlinkJobs.subtask(getRuntimeContext()) == 0
          && FlinkJobs.attempt(getRuntimeContext()) == 0
          && decommissioned.compareAndSet(false, true)) {
        servers.server(0).decommission().get(1, TimeUnit.MINUTES);
      }
    }
  }
}
