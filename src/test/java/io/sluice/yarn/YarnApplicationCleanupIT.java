package io.sluice.yarn;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.client.ClientContext;
import io.sluice.e2e.ApplicationClient;
import io.sluice.protocol.proto.ServerAddress;
import io.sluice.server.storage.ShuffleRegistry;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.api.ApplicationTerminationContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * When YARN reports an application finished, the aux service deletes the data of every Sluice
 * application that ran in it, whatever the engine named it: a Spark driver in cluster mode names
 * its application {@code <YARN id>-attempt-N}, a Flink JobManager {@code flink-<job id>}. The data
 * of other applications stays.
 */
class YarnApplicationCleanupIT {
  private static final ApplicationId FINISHED = ApplicationId.newInstance(1_700_000_000_000L, 7);
  private static final ApplicationId RUNNING = ApplicationId.newInstance(1_700_000_000_000L, 8);

  @TempDir Path tmp;
  private SluiceShuffleService service;

  @AfterEach
  void stopService() {
    if (service != null) {
      service.stop();
    }
  }

  @Test
  void everyApplicationThatRanInAFinishedYarnApplicationIsDeleted() throws Exception {
    YarnConfiguration conf = new YarnConfiguration();
    conf.set(YarnConfiguration.NM_LOCAL_DIRS, tmp.resolve("nm-local").toString());
    conf.set("sluice.server.host", "127.0.0.1");
    conf.setInt("sluice.server.port", freePort());
    conf.set("sluice.memory.max", "64m");
    conf.set("sluice.network.ioThreads", "2");
    service = new SluiceShuffleService();
    service.init(conf);
    service.start();
    List<ServerAddress> servers =
        List.of(ClientContext.address("127.0.0.1", service.getMetaData().getInt(0)));

    String sparkAttempt = FINISHED + "-attempt-1";
    String flinkJob = "flink-0123456789abcdef0123456789abcdef";
    String otherFlinkJob = "flink-fedcba9876543210fedcba9876543210";
    try (ApplicationClient spark = new ApplicationClient(sparkAttempt, servers);
        ApplicationClient flink =
            new ApplicationClient(
                flinkJob,
                servers,
                Map.of("sluice.client.clusterApplicationId", FINISHED.toString()));
        ApplicationClient other =
            new ApplicationClient(
                otherFlinkJob,
                servers,
                Map.of("sluice.client.clusterApplicationId", RUNNING.toString()))) {
      for (ApplicationClient app : List.of(spark, flink, other)) {
        app.coordinator().registerShuffle(0, 1, 2);
        app.runMap(0, 0, 2, 10, 100);
        app.coordinator().committed(0).get(1, TimeUnit.MINUTES);
      }
      ShuffleRegistry registry = service.server().registry();
      assertThat(registry.applicationCount()).isEqualTo(3);

      service.stopApplication(new ApplicationTerminationContext(FINISHED));

      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (registry.application(sparkAttempt) != null || registry.application(flinkJob) != null) {
        assertThat(System.nanoTime())
            .as("applications left after stopApplication")
            .isLessThan(deadline);
        Thread.sleep(20);
      }
      assertThat(registry.application(otherFlinkJob))
          .as("the application of a YARN application still running")
          .isNotNull();
      assertThat(other.readAll(0, 2, 1).records()).isEqualTo(20);
    }
  }

  private static int freePort() throws Exception {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}
