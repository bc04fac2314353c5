package io.sluice.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.client.ClientContext;
import io.sluice.testutil.Records;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The daemon, a real process, restarted in the middle of shuffles: after a SIGTERM it serves every
 * byte it acknowledged; after a kill -9 it serves every committed split whole and never serves
 * uncommitted data as committed.
 */
class DaemonRestartIT {
  private static final Pattern STOPPED_IN = Pattern.compile("stopped in (\\d+) ms");
  private static final Pattern STARTED_IN = Pattern.compile("started in (\\d+) ms");
  private static final int PARTITIONS = 8;
  private static final int RECORDS = 200;

  /** The clients wait for a restarting server as long as they do by default. */
  private static final Map<String, String> RESTARTS =
      Map.of("sluice.client.serverRestartWait", "60s");

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

  @Test
  void sigtermMidShuffleThenRestartServesEverythingAcknowledged() throws Exception {
    int port = daemon.start(0);
    try (ApplicationClient app =
        new ApplicationClient(
            "app-sigterm", List.of(ClientContext.address("127.0.0.1", port)), RESTARTS)) {
      app.coordinator().registerShuffle(0, 2, PARTITIONS);
      // map 0 is acknowledged and reported; the shuffle waits for map 1, so nothing is committed
      app.runMap(0, 0, PARTITIONS, RECORDS, 300);

      daemon.stop();
      assertThat(files(".inprogress")).as("the stop committed every open split").isEmpty();
      assertThat(files(".data")).hasSize(PARTITIONS);

      daemon.start(port);
      // map 1 finds map 0's splits sealed (HARD_SPLIT), moves every partition to a new split,
      // and its report commits the shuffle: the splits from before the stop are part of it
      app.runMap(0, 1, PARTITIONS, RECORDS, 300);
      Records.Checker checker = app.readAll(0, PARTITIONS, 2);
      assertExactlyOnce(checker, 2);
      assertThat(files(".data")).hasSize(2 * PARTITIONS);
    }
    assertThat(daemon.log())
        .contains("new pushes are answered HARD_SPLIT")
        .contains("committed " + PARTITIONS + " open split(s)")
        .contains("1 shuffle(s), " + PARTITIONS + " committed split(s)");
    daemon.stop();
    report("SIGTERM");
  }

  @Test
  void killMinus9AfterACommitServesTheCommittedShuffleWholeAndNothingUncommitted()
      throws Exception {
    int port = daemon.start(0);
    try (ApplicationClient app =
        new ApplicationClient(
            "app-kill", List.of(ClientContext.address("127.0.0.1", port)), RESTARTS)) {
      app.coordinator().registerShuffle(0, 2, PARTITIONS);
      app.runMap(0, 0, PARTITIONS, RECORDS, 300);
      app.runMap(0, 1, PARTITIONS, RECORDS, 300);
      app.coordinator().committed(0).get(1, TimeUnit.MINUTES);
      // shuffle 1: map 0 acknowledged, never committed
      app.coordinator().registerShuffle(1, 2, PARTITIONS);
      app.runMap(1, 0, PARTITIONS, RECORDS, 300);

      daemon.kill();

      daemon.start(port);
      assertThat(files(".inprogress")).as("deleted at start").isEmpty();
      assertExactlyOnce(app.readAll(0, PARTITIONS, 2), 2);

      // shuffle 1 lost map 0's acknowledged data: its commit fails, naming it, and nothing of it
      // is served
      app.runMap(1, 1, PARTITIONS, RECORDS, 300);
      assertThatThrownBy(() -> app.readAll(1, PARTITIONS, 2))
          .hasMessageContaining("is lost")
          .hasMessageContaining("app app-kill shuffle 1 lost acknowledged data")
          .hasMessageContaining("was not committed when the server stopped");
      assertThat(files(".data").stream().filter(f -> f.getParent().endsWith("app-kill/1")))
          .as("files of shuffle 1")
          .isEmpty();
    }
    daemon.stop();
    report("kill -9");
  }

  private static void assertExactlyOnce(Records.Checker checker, int maps) {
    for (int m = 0; m < maps; m++) {
      for (int p = 0; p < PARTITIONS; p++) {
        assertThat(checker.count(m, p)).as("map %d partition %d", m, p).isEqualTo(RECORDS);
      }
    }
  }

  private List<Path> files(String suffix) throws Exception {
    try (Stream<Path> walk = Files.walk(daemon.dataDir())) {
      return walk.filter(p -> p.getFileName().toString().endsWith(suffix))
          .filter(p -> !p.toString().contains(".sluice-state"))
          .collect(Collectors.toList());
    }
  }

  /** The durations the daemon logged, for the record (the test does not depend on them). */
  private void report(String scenario) throws Exception {
    System.out.printf(
        "%s: daemon start durations %s ms, stop durations %s ms%n",
        scenario, daemon.logged(STARTED_IN), daemon.logged(STOPPED_IN));
  }
}
