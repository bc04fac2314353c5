package io.sluice.yarn;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.client.ClientContext;
import io.sluice.e2e.ApplicationClient;
import io.sluice.testutil.Records;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.api.ApplicationTerminationContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A NodeManager restart with recovery on, driven as the NodeManager drives its aux services
 * (MiniYARNCluster cannot run NodeManager recovery: it binds the NodeManager to an ephemeral port):
 * create the service, {@code setRecoveryPath}, {@code init}, {@code start}; write and commit;
 * {@code stop}; a new instance on the same recovery path serves everything back.
 */
class YarnRecoveryIT {
  private static final int PARTITIONS = 5;
  private static final int RECORDS = 120;
  private static final ApplicationId APP = ApplicationId.newInstance(1_700_000_000_000L, 7);

  @TempDir Path tmp;
  private SluiceShuffleService service;

  @AfterEach
  void stopService() {
    if (service != null) {
      service.stop();
    }
  }

  @Test
  void aRestartedServiceServesWhatItCommittedAndWhatItHeldWhenStopped() throws Exception {
    Path recovery = Files.createDirectories(tmp.resolve("recovery"));
    Path localDir = tmp.resolve("nm-local");
    YarnConfiguration conf = new YarnConfiguration();
    conf.set(YarnConfiguration.NM_LOCAL_DIRS, localDir.toString());
    conf.set("sluice.server.host", "127.0.0.1");
    conf.setInt("sluice.server.port", freePort()); // a NodeManager's port is fixed
    conf.set("sluice.memory.max", "64m");
    conf.set("sluice.flush.size", "16k");
    conf.set("sluice.network.ioThreads", "2");
    conf.set("sluice.commit.fsync", "false");

    service = start(conf, recovery);
    int port = service.getMetaData().getInt(0);
    assertThat(port).isEqualTo(conf.getInt("sluice.server.port", -1));
    try (ApplicationClient app =
        new ApplicationClient(APP.toString(), List.of(ClientContext.address("127.0.0.1", port)))) {
      // shuffle 0 committed; shuffle 1 half written (map 0 of 2 acknowledged)
      app.coordinator().registerShuffle(0, 2, PARTITIONS);
      app.runMap(0, 0, PARTITIONS, RECORDS, 250);
      app.runMap(0, 1, PARTITIONS, RECORDS, 250);
      app.coordinator().committed(0).get(1, TimeUnit.MINUTES);
      app.coordinator().registerShuffle(1, 2, PARTITIONS);
      app.runMap(1, 0, PARTITIONS, RECORDS, 250);

      service.stop();
      service = null;
      // NodeManager recovery is on: the state is in the recovery path, not in a data directory
      assertThat(recovery.resolve("CURRENT")).exists();
      assertThat(localDir.resolve("sluice").resolve(".sluice-state")).doesNotExist();

      service = start(conf, recovery);
      assertThat(service.server().recovery().shuffles()).isEqualTo(2);
      assertThat(service.server().recovery().splits()).isEqualTo(2 * PARTITIONS);
      assertExactlyOnce(app.readAll(0, PARTITIONS, 2));
      app.runMap(1, 1, PARTITIONS, RECORDS, 250);
      assertExactlyOnce(app.readAll(1, PARTITIONS, 2));

      // the application finishes on this node: the NodeManager tells every aux service
      service.stopApplication(new ApplicationTerminationContext(APP));
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (!dataFiles(localDir).isEmpty()) {
        assertThat(System.nanoTime())
            .as("files of %s left: %s", APP, dataFiles(localDir))
            .isLessThan(deadline);
        Thread.sleep(20);
      }
      assertThat(service.server().registry().applicationCount()).isZero();
    }
  }

  /**
   * A reader that starts while the NodeManager's service is down (the NodeManager restarting) waits
   * for it ({@code sluice.client.serverRestartWait}) and reads every record once from the restarted
   * service, as a running reduce stage would: no fetch failure.
   */
  @Test
  void aReadDuringANodeManagerRestartWaitsForTheService() throws Exception {
    Path recovery = Files.createDirectories(tmp.resolve("recovery"));
    YarnConfiguration conf = new YarnConfiguration();
    conf.set(YarnConfiguration.NM_LOCAL_DIRS, tmp.resolve("nm-local").toString());
    conf.set("sluice.server.host", "127.0.0.1");
    conf.setInt("sluice.server.port", freePort());
    conf.set("sluice.memory.max", "64m");
    conf.set("sluice.network.ioThreads", "2");
    conf.set("sluice.commit.fsync", "false");

    service = start(conf, recovery);
    int port = service.getMetaData().getInt(0);
    try (ApplicationClient app =
        new ApplicationClient(
            APP.toString(),
            List.of(ClientContext.address("127.0.0.1", port)),
            Map.of("sluice.client.serverRestartWait", "60s"))) {
      app.coordinator().registerShuffle(0, 2, PARTITIONS);
      app.runMap(0, 0, PARTITIONS, RECORDS, 250);
      app.runMap(0, 1, PARTITIONS, RECORDS, 250);
      app.coordinator().committed(0).get(1, TimeUnit.MINUTES);

      service.stop();
      service = null;
      CompletableFuture<Records.Checker> read =
          CompletableFuture.supplyAsync(
              () -> {
                try {
                  return app.readAll(0, PARTITIONS, 2);
                } catch (Exception e) {
                  throw new CompletionException(e);
                }
              });
      Thread.sleep(1000); // the reader finds the port closed, and waits
      assertThat(read).isNotDone();
      service = start(conf, recovery);

      assertExactlyOnce(read.get(1, TimeUnit.MINUTES));
    }
  }

  private static SluiceShuffleService start(YarnConfiguration conf, Path recovery) {
    SluiceShuffleService s = new SluiceShuffleService();
    s.setRecoveryPath(new org.apache.hadoop.fs.Path(recovery.toUri()));
    s.init(conf);
    s.start();
    return s;
  }

  private static void assertExactlyOnce(Records.Checker checker) {
    for (int m = 0; m < 2; m++) {
      for (int p = 0; p < PARTITIONS; p++) {
        assertThat(checker.count(m, p)).as("map %d partition %d", m, p).isEqualTo(RECORDS);
      }
    }
  }

  /** Regular files under {@code localDir}; walks again when a file vanishes mid-walk. */
  private static List<Path> dataFiles(Path localDir) throws Exception {
    while (Files.isDirectory(localDir)) {
      try (Stream<Path> walk = Files.walk(localDir)) {
        return walk.filter(Files::isRegularFile).collect(Collectors.toList());
      } catch (java.io.UncheckedIOException | java.nio.file.NoSuchFileException e) {
        // the service is deleting files as we walk: look again
      }
    }
    return List.of();
  }

  private static int freePort() throws Exception {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}
