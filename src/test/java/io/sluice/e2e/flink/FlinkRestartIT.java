package io.sluice.e2e.flink;

import static io.sluice.e2e.flink.FlinkJobs.CONSUMER;
import static io.sluice.e2e.flink.FlinkJobs.PRODUCER;
import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.e2e.flink.FlinkJobs.Runs;
import io.sluice.e2e.flink.FlinkJobs.Sum;
import io.sluice.server.ShuffleServer;
import io.sluice.testutil.TestCluster;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The only Sluice server of a Flink batch job restarted gracefully (down for two seconds, as a
 * daemon's restart is) while the producers write, or just as the consumers start reading. Writers
 * being written finish before the server stops, producers and consumers placed meanwhile wait for
 * it, readers wait for it and read every producer's data after the restart, and the shuffle master
 * does not report its partitions lost: no producer and no consumer runs twice, and the result is
 * the built-in shuffle's.
 */
class FlinkRestartIT {
  @TempDir Path tmp;

  /** The servers the running job uses, for its operators. */
  private static volatile TestCluster servers;

  private static volatile CompletableFuture<ShuffleServer> restarted = new CompletableFuture<>();
  private MiniCluster flink;

  @AfterEach
  void stop() throws Exception {
    if (flink != null) {
      flink.close();
    }
    if (servers != null) {
      servers.close();
    }
  }

  @Test
  void aLoneServerRestartedWhileConsumersReadCostsTheJobNoRerun() throws Exception {
    List<String> expected = builtinResult();
    Configuration settings = oneServer();
    settings.setString("sluice.coordinator.heartbeatInterval", "200ms"); // it finds it away
    flink = FlinkHarness.sluice(servers, settings);

    List<String> result =
        FlinkHarness.collectSorted(
            FlinkJobs.sumPerKey(FlinkHarness.batch(flink, 2), 4, 2, new RestartOnOpen()));

    assertThat(result).isEqualTo(expected);
    assertThat(restarted.get(1, TimeUnit.MINUTES).recovery().mapPartitions())
        .as("map partitions the restarted server serves again")
        .isEqualTo(4);
    assertThat(Runs.attempts(PRODUCER)).containsExactly("0/0", "1/0", "2/0", "3/0");
    assertThat(Runs.attempts(CONSUMER)).containsExactly("0/0", "1/0");
  }

  @Test
  void aLoneServerRestartedWhileProducersWriteCostsTheJobNoRerun() throws Exception {
    List<String> expected = builtinResult();
    Configuration settings = oneServer();
    flink = FlinkHarness.sluice(servers, settings);

    List<String> result =
        FlinkHarness.collectSorted(
            FlinkJobs.sumPerKey(
                FlinkHarness.batch(flink, 2), 4, 2, new RestartWhileMapping(), new Sum()));

    assertThat(result).isEqualTo(expected);
    assertThat(restarted.get(1, TimeUnit.MINUTES)).isNotNull();
    assertThat(Runs.attempts(PRODUCER)).containsExactly("0/0", "1/0", "2/0", "3/0");
    assertThat(Runs.attempts(CONSUMER)).containsExactly("0/0", "1/0");
  }

  /** The job's result through Flink's built-in shuffle. */
  private static List<String> builtinResult() throws Exception {
    MiniCluster builtin = FlinkHarness.builtin();
    try {
      return FlinkHarness.collectSorted(
          FlinkJobs.sumPerKey(FlinkHarness.batch(builtin, 2), 4, 2, new Sum()));
    } finally {
      builtin.close();
    }
  }

  /** Starts the one Sluice server; returns the client settings, with the default restart wait. */
  private Configuration oneServer() throws IOException {
    Runs.clear();
    restarted = new CompletableFuture<>();
    servers = TestCluster.start(tmp.resolve("sluice"), 1);
    Configuration settings = new Configuration();
    settings.setString("sluice.client.serverRestartWait", "60s"); // the default
    return settings;
  }

  /**
   * Producer 0, halfway through its numbers (its map partition being written), restarts the server
   * on a thread of its own and goes on a second later, while the server stops: the stop lets it
   * finish its partition, the producers and consumers that start meanwhile wait for the restart.
   */
  static final class RestartWhileMapping extends FlinkJobs.KeyByResidue {
    private static final long serialVersionUID = 1L;
    private transient long mapped;

    RestartWhileMapping() {
      super(PRODUCER, 31);
    }

    @Override
    public Tuple2<Long, Long> map(Long v) throws Exception {
      if (++mapped == 8000 && FlinkJobs.subtask(getRuntimeContext()) == 0 && !restarted.isDone()) {
        Thread t =
            new Thread(
                () -> {
                  try {
                    restarted.complete(servers.restartServer(0, root -> sleep(2000)));
                  } catch (IOException | RuntimeException e) {
                    restarted.completeExceptionally(e);
                  }
                },
                "restarter");
        t.start();
        sleep(1000);
      }
      return super.map(v);
    }
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** The first consumer to open restarts the server, on a thread of its own, down for 2 s. */
  static final class RestartOnOpen extends Sum {
    private static final long serialVersionUID = 1L;

    @Override
    public void open(OpenContext openContext) throws Exception {
      super.open(openContext);
      if (FlinkJobs.subtask(getRuntimeContext()) == 0 && !restarted.isDone()) {
        CountDownLatch stopped = new CountDownLatch(1);
        Thread t =
            new Thread(
                () -> {
                  try {
                    restarted.complete(
                        servers.restartServer(
                            0,
                            root -> {
                              stopped.countDown();
                              try {
                                Thread.sleep(2000);
                              } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                              }
                            }));
                  } catch (IOException | RuntimeException e) {
                    stopped.countDown();
                    restarted.completeExceptionally(e);
                  }
                },
                "restarter");
        t.start();
        // this consumer reads once the server's port has closed: it finds it away
        stopped.await(1, TimeUnit.MINUTES);
      }
    }
  }
}
