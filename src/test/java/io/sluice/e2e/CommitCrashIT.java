package io.sluice.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.client.ClientContext;
import io.sluice.common.CrashPoints;
import io.sluice.testutil.Records;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The daemon dies, as under {@code kill -9}, at each step of a commit ({@link CrashPoints}): the
 * coordinator never reports the shuffle committed, so readers get an error naming the lost data
 * (the engine reruns the maps) and never a part of it; after a restart the server serves a rerun
 * whole and keeps no half-written file.
 */
class CommitCrashIT {
  private static final int PARTITIONS = 6;
  private static final int RECORDS = 120;

  @TempDir Path tmp;
  private DaemonProcess daemon;

  @BeforeEach
  void setUp() throws Exception {
    daemon = new DaemonProcess(tmp);
  }

  @AfterEach
  void tearDown() throws Exception {
    daemon.killIfRunning();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        CrashPoints.SPLIT_BEFORE_RENAME,
        CrashPoints.SPLIT_AFTER_RENAME,
        CrashPoints.SPLIT_AFTER_RECORD,
        CrashPoints.COMMIT_BEFORE_ANSWER
      })
  void aCrashAtAnyStepOfACommitNeverServesPartOfIt(String point) throws Exception {
    int port = daemon.startCrashingAt(0, point);
    String appId = "app-crash-" + point.replace('.', '-');
    try (ApplicationClient app =
        new ApplicationClient(appId, List.of(ClientContext.address("127.0.0.1", port)))) {
      app.coordinator().registerShuffle(0, 2, PARTITIONS);
      app.runMap(0, 0, PARTITIONS, RECORDS, 300);
      // the last map's report starts the commit, in which the server dies
      app.runMap(0, 1, PARTITIONS, RECORDS, 300);
      assertThatThrownBy(() -> app.readAll(0, PARTITIONS, 2))
          .as("crash at %s", point)
          .hasMessageContaining("lost");
      daemon.awaitCrash();
      assertThat(daemon.log()).contains("halting at " + point);

      daemon.start(port);
      assertThatThrownBy(() -> app.readAll(0, PARTITIONS, 2))
          .as("after the restart, crash at %s", point)
          .hasMessageContaining("lost");
      assertThat(files(".inprogress")).as("deleted at start").isEmpty();
      // the engine's rerun, into a new shuffle, is served whole
      app.coordinator().registerShuffle(1, 2, PARTITIONS);
      app.runMap(1, 0, PARTITIONS, RECORDS, 300);
      app.runMap(1, 1, PARTITIONS, RECORDS, 300);
      Records.Checker checker = app.readAll(1, PARTITIONS, 2);
      for (int m = 0; m < 2; m++) {
        for (int p = 0; p < PARTITIONS; p++) {
          assertThat(checker.count(m, p)).as("map %d partition %d", m, p).isEqualTo(RECORDS);
        }
      }
    }
    daemon.stop();
  }

  private List<Path> files(String suffix) throws Exception {
    try (Stream<Path> walk = Files.walk(daemon.dataDir())) {
      return walk.filter(p -> p.getFileName().toString().endsWith(suffix))
          .filter(p -> !p.toString().contains(".sluice-state"))
          .collect(Collectors.toList());
    }
  }
}
