package io.sluice.server.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.protocol.proto.Status;
import io.sluice.server.storage.CommittedSplitFile;
import io.sluice.server.storage.ServerShuffle;
import io.sluice.server.storage.StorageUnavailableException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A restarting server serves what it committed, and nothing it did not. */
class StateRecoveryTest {
  @TempDir Path tmp;

  @Test
  void committedSplitsAreServedAgainAndUnreferencedFilesDeleted() throws Exception {
    List<CommittedSplitFile> stage;
    List<CommittedSplitFile> sealed;
    try (ServerFixture server = new ServerFixture(tmp)) {
      for (int p = 0; p < 4; p++) {
        server.push("app-1", 0, p, 0, p, 3000);
      }
      stage = server.registry.get("app-1", 0).commit().get(1, TimeUnit.MINUTES);
      server.push("app-1", 1, 0, 0, 0, 2000);
      server.push("app-1", 1, 1, 3, 1, 2000);
      sealed = server.registry.sealAndCommitOpenSplits().get(1, TimeUnit.MINUTES);
      server.stopGracefully();
    }
    Path stray = Files.createDirectories(tmp.resolve("b").resolve("app-9").resolve("0"));
    Files.writeString(stray.resolve("0-0.data"), "no record refers to me");
    Files.writeString(stray.resolve("1-0.data.inprogress"), "half written");
    // sort-on-read's copies: of a split no record refers to, and of a committed one
    Files.writeString(stray.resolve("0-0.data.sorted"), "sorted copy");
    Files.writeString(stray.resolve("0-0.data.sorted.index"), "its index");
    Path keptSorted =
        stage.get(0).path().resolveSibling(stage.get(0).path().getFileName() + ".sorted");
    Files.writeString(keptSorted, "sorted copy of a committed split");

    try (ServerFixture server = new ServerFixture(tmp)) {
      StateRecovery.Summary summary = server.recover();

      assertThat(summary.applications()).isEqualTo(1);
      assertThat(summary.shuffles()).isEqualTo(2);
      assertThat(summary.splits()).isEqualTo(6);
      assertThat(summary.droppedSplits()).isZero();
      assertThat(summary.lostShuffles()).isZero();
      assertThat(summary.deletedFiles()).isEqualTo(4);
      assertThat(stray).doesNotExist();
      assertThat(keptSorted).exists();

      // the stage-committed shuffle serves its splits without a new commit
      ServerShuffle committed = server.registry.get("app-1", 0);
      for (CommittedSplitFile f : stage) {
        CommittedSplitFile back = committed.committedSplit(f.key().partitionId(), 0);
        assertThat(back).isNotNull();
        assertThat(back.path()).isEqualTo(f.path()).exists();
        assertThat(back.length()).isEqualTo(f.length());
        assertThat(back.chunkOffsets()).isEqualTo(f.chunkOffsets());
        assertThat(back.mapIndexes()).isEqualTo(f.mapIndexes());
      }
      assertThat(committed.splitForPush(0, 1)).as("stage ended").isNull();

      // the shuffle committed by the stop refuses its old splits, takes new ones, and commits
      // both
      ServerShuffle stopped = server.registry.get("app-1", 1);
      assertThatThrownBy(() -> stopped.splitForPush(1, 3))
          .isInstanceOf(StorageUnavailableException.class)
          .hasMessageContaining("app app-1 shuffle 1 partition 1 epoch 3")
          .hasMessageContaining("was committed when this server last stopped");
      assertThat(server.push("app-1", 1, 1, 4, 1, 100)).isEqualTo(Status.OK);
      List<CommittedSplitFile> all = stopped.commit().get(1, TimeUnit.MINUTES);
      assertThat(all.stream().map(f -> f.key().epoch()).sorted().collect(Collectors.toList()))
          .containsExactly(0, 3, 4);
      assertThat(all.stream().filter(f -> f.key().epoch() != 4).map(CommittedSplitFile::path))
          .containsExactlyInAnyOrderElementsOf(
              sealed.stream().map(CommittedSplitFile::path).collect(Collectors.toList()));
    }
  }

  @Test
  void aRecordWhoseFileIsGoneOrDamagedIsDroppedAndItsShuffleFailsToCommit() throws Exception {
    List<CommittedSplitFile> files;
    try (ServerFixture server = new ServerFixture(tmp)) {
      for (int p = 0; p < 3; p++) {
        server.push("app-1", 0, p, 0, 0, 1000);
      }
      files = server.registry.sealAndCommitOpenSplits().get(1, TimeUnit.MINUTES);
      server.stopGracefully();
    }
    files.sort((a, b) -> Integer.compare(a.key().partitionId(), b.key().partitionId()));
    Files.delete(files.get(0).path());
    Files.writeString(files.get(1).path(), "shorter");

    for (int restart = 0; restart < 2; restart++) {
      try (ServerFixture server = new ServerFixture(tmp)) {
        StateRecovery.Summary summary = server.recover();
        assertThat(summary.splits()).isEqualTo(1);
        assertThat(summary.droppedSplits()).isEqualTo(restart == 0 ? 2 : 0);
        assertThat(summary.lostShuffles()).isEqualTo(1);
        assertThat(files.get(1).path()).doesNotExist();
        assertThat(files.get(2).path()).exists();
        assertThatThrownBy(() -> server.registry.get("app-1", 0).commit().get())
            .hasMessageContaining("app app-1 shuffle 0 lost acknowledged data")
            .hasMessageContaining("partition 0 epoch 0")
            .hasMessageContaining("partition 1 epoch 0");
        if (restart == 0) {
          assertThatThrownBy(() -> server.registry.get("app-1", 0).commit().get())
              .hasMessageContaining(files.get(0).path() + " is gone")
              .hasMessageContaining(files.get(1).path() + " has 7 bytes, expected 1024");
        }
      }
    }
  }

  @Test
  void aCrashBeforeCommitServesNothingOfTheOpenSplitAndItsShuffleFailsToCommit() throws Exception {
    try (ServerFixture server = new ServerFixture(tmp)) {
      server.push("app-1", 0, 0, 0, 0, 5000);
      server.registry.get("app-1", 0).commit().get(1, TimeUnit.MINUTES);
      server.push("app-1", 1, 0, 0, 0, 5000);
      server.push("app-1", 1, 1, 0, 0, 5000);
      server.crash();
    }
    assertThat(files(".inprogress")).hasSize(2);

    try (ServerFixture server = new ServerFixture(tmp)) {
      StateRecovery.Summary summary = server.recover();
      assertThat(summary.splits()).isEqualTo(1);
      assertThat(summary.lostShuffles()).isEqualTo(1);
      assertThat(files(".inprogress")).isEmpty();
      assertThat(files(".data")).hasSize(1);
      assertThat(server.registry.get("app-1", 0).committedSplit(0, 0)).isNotNull();
      ServerShuffle crashed = server.registry.get("app-1", 1);
      assertThat(crashed.committedSplit(0, 0)).isNull();
      assertThatThrownBy(() -> crashed.commit().get())
          .hasMessageContaining("partition 0 epoch 0 was not committed when the server stopped")
          .hasMessageContaining("partition 1 epoch 0 was not committed");
    }
  }

  private List<Path> files(String suffix) throws Exception {
    try (Stream<Path> walk = Files.walk(tmp)) {
      return walk.filter(p -> p.getFileName().toString().endsWith(suffix))
          .filter(p -> !p.toString().contains(".sluice-state"))
          .collect(Collectors.toList());
    }
  }
}
