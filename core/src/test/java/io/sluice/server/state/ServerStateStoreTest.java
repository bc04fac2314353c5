package io.sluice.server.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.codahale.metrics.MetricRegistry;
import io.sluice.protocol.proto.StateSplit;
import io.sluice.protocol.proto.Status;
import io.sluice.server.storage.CommittedSplitFile;
import io.sluice.server.storage.ShuffleShape;
import io.sluice.server.storage.SplitKey;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;

class ServerStateStoreTest {
  @TempDir Path tmp;

  @Test
  void committedSplitsRoundTripWithEveryField() throws Exception {
    List<CommittedSplitFile> files;
    try (ServerFixture server = new ServerFixture(tmp)) {
      for (int i = 0; i < 30; i++) {
        assertThat(server.push("app-1", 3, 0, 0, i % 3, 500)).isEqualTo(Status.OK);
      }
      assertThat(server.push("app-1", 3, 1, 2, 7, 100)).isEqualTo(Status.OK);
      files = server.registry.get("app-1", 3).commit().get(1, TimeUnit.MINUTES);
    }
    try (ServerStateStore store = ServerStateStore.open(stateDir(), false, new MetricRegistry())) {
      RecoveredState state = store.load();
      assertThat(state.applications()).containsExactly("app-1");
      assertThat(state.shuffles()).hasSize(1);
      RecoveredState.Shuffle shuffle = state.shuffles().get(0);
      assertThat(shuffle.shuffleId()).isEqualTo(3);
      assertThat(shuffle.stageCommitted()).isTrue();
      assertThat(shuffle.openSplits()).isEmpty();
      List<StateSplit> splits =
          shuffle.committedSplits().stream()
              .sorted(Comparator.comparing(StateSplit::getPartitionId))
              .collect(Collectors.toList());
      files =
          files.stream()
              .sorted(Comparator.comparing(f -> f.key().partitionId()))
              .collect(Collectors.toList());
      assertThat(splits).hasSize(2);
      for (int i = 0; i < 2; i++) {
        StateSplit recorded = splits.get(i);
        CommittedSplitFile file = files.get(i);
        assertThat(recorded.getPartitionId()).isEqualTo(file.key().partitionId());
        assertThat(recorded.getEpoch()).isEqualTo(file.key().epoch());
        assertThat(recorded.getPath()).isEqualTo(file.path().toString());
        assertThat(recorded.getLength()).isEqualTo(file.length()).isPositive();
        assertThat(recorded.getChunkOffsetsList()).isEqualTo(file.chunkOffsets());
        assertThat(recorded.getMapRunsList())
            .containsExactlyElementsOf(
                java.util.Arrays.stream(file.mapIndexes().toRuns()).boxed()::iterator);
      }
      assertThat(splits.get(0).getChunkOffsetsCount()).isGreaterThan(2);
      assertThat(splits.get(1).getEpoch()).isEqualTo(2);
    }
  }

  @Test
  void aSplitIsOpenUntilItCommits() throws Exception {
    try (ServerFixture server = new ServerFixture(tmp)) {
      server.push("app-1", 0, 5, 1, 0, 10);
      List<SplitKey> open = server.store.load().shuffles().get(0).openSplits();
      assertThat(open).containsExactly(new SplitKey("app-1", 0, 5, 1));
      assertThat(server.store.load().shuffles().get(0).stageCommitted()).isFalse();

      server.registry.get("app-1", 0).commit().get(1, TimeUnit.MINUTES);
      RecoveredState.Shuffle shuffle = server.store.load().shuffles().get(0);
      assertThat(shuffle.openSplits()).isEmpty();
      assertThat(shuffle.committedSplits()).hasSize(1);
    }
  }

  @Test
  void unregisteringRemovesTheRecordsOfThatShuffleOrApplicationOnly() throws Exception {
    try (ServerFixture server = new ServerFixture(tmp)) {
      // app-1 is a prefix of app-10: deleting one must not touch the other
      for (String app : List.of("app-1", "app-10")) {
        for (int shuffle = 1; shuffle <= 2; shuffle++) {
          server.push(app, shuffle, 0, 0, 0, 10);
          server.push(app, shuffle, 1, 0, 0, 10);
          server.registry.get(app, shuffle).commit().get(1, TimeUnit.MINUTES);
          server.registry.register(
              app, shuffle + 10, ShuffleShape.of(100, 100)); // registered, never pushed
          server.push(app, shuffle + 20, 0, 0, 0, 10); // open
        }
      }
      server.registry.unregisterShuffle("app-1", 1).get(1, TimeUnit.MINUTES);
      RecoveredState state = server.store.load();
      assertThat(shuffleIds(state, "app-1")).containsExactly(2, 11, 12, 21, 22);
      assertThat(shuffleIds(state, "app-10")).containsExactly(1, 2, 11, 12, 21, 22);
      assertThat(state.committedSplitCount()).isEqualTo(6);

      server.registry.unregisterApplication("app-1").get(1, TimeUnit.MINUTES);
      state = server.store.load();
      assertThat(state.applications()).containsExactly("app-10");
      assertThat(shuffleIds(state, "app-10")).containsExactly(1, 2, 11, 12, 21, 22);
      assertThat(state.committedSplitCount()).isEqualTo(4);
      assertThat(state.shuffles().stream().mapToInt(s -> s.openSplits().size()).sum()).isEqualTo(2);
      server.stopGracefully();
    }
  }

  private static List<Integer> shuffleIds(RecoveredState state, String appId) {
    return state.shuffles().stream()
        .filter(s -> s.appId().equals(appId))
        .map(RecoveredState.Shuffle::shuffleId)
        .collect(Collectors.toList());
  }

  @Test
  void aStoreOfAnotherFormatVersionIsRefusedNamingBoth() throws Exception {
    Path dir = tmp.resolve("state");
    ServerStateStore.open(dir, false, new MetricRegistry()).close();
    writeRaw(dir, StateKeys.FORMAT, StateKeys.version(2));

    assertThatThrownBy(() -> ServerStateStore.open(dir, false, new MetricRegistry()))
        .hasMessageContaining(dir.toString())
        .hasMessageContaining("format version 2")
        .hasMessageContaining("reads version 1");
  }

  @Test
  void aDatabaseWithoutAFormatVersionIsRefused() throws Exception {
    Path dir = tmp.resolve("state");
    writeRaw(dir, "somebody-else".getBytes(StandardCharsets.UTF_8), new byte[] {1});

    assertThatThrownBy(() -> ServerStateStore.open(dir, false, new MetricRegistry()))
        .hasMessageContaining(dir.toString())
        .hasMessageContaining("no format version")
        .hasMessageContaining("somebody-else");
  }

  @Test
  void aSecondServerCannotOpenAStoreInUse() throws Exception {
    Path dir = tmp.resolve("state");
    try (ServerStateStore first = ServerStateStore.open(dir, false, new MetricRegistry())) {
      assertThatThrownBy(() -> ServerStateStore.open(dir, false, new MetricRegistry()))
          .hasMessageContaining(dir.toString())
          .hasMessageContaining("another Sluice server");
      assertThat(first.load().isEmpty()).isTrue();
    }
  }

  @Test
  void aStoreRocksDbCannotReadSaysSoAndHowToStartFresh() throws Exception {
    Path dir = tmp.resolve("state");
    ServerStateStore.open(dir, false, new MetricRegistry()).close();
    Files.writeString(dir.resolve("CURRENT"), "MANIFEST-999999"); // no newline, no such manifest

    assertThatThrownBy(() -> ServerStateStore.open(dir, false, new MetricRegistry()))
        .hasMessageContaining(dir.toString())
        .hasMessageContaining("damaged, or was written by a newer RocksDB")
        .hasMessageContaining("move the directory away")
        .hasMessageNotContaining("another Sluice server");
  }

  @Test
  void aDamagedRecordIsDroppedAndTheRestLoads() throws Exception {
    try (ServerFixture server = new ServerFixture(tmp)) {
      server.push("app-1", 0, 0, 0, 0, 10);
      server.registry.get("app-1", 0).commit().get(1, TimeUnit.MINUTES);
    }
    writeRaw(
        stateDir(),
        StateKeys.committedSplit(new SplitKey("app-1", 0, 9, 0)),
        new byte[] {(byte) 0xff, 0x01, 0x02});
    try (ServerStateStore store = ServerStateStore.open(stateDir(), false, new MetricRegistry())) {
      assertThat(store.load().committedSplitCount()).isEqualTo(1);
      assertThat(store.load().committedSplitCount()).isEqualTo(1);
    }
  }

  @Test
  void changesAfterCloseAreCountedAsFailuresNotWritten() throws Exception {
    MetricRegistry metrics = new MetricRegistry();
    ServerStateStore store = ServerStateStore.open(tmp.resolve("state"), false, metrics);
    store.close();
    store.applicationRegistered("app-1", null);
    store.close();
    assertThat(metrics.counter(StateMetrics.PREFIX + "writeFailures").getCount()).isEqualTo(1);
  }

  private Path stateDir() {
    return tmp.resolve("a").resolve(".sluice-state").toAbsolutePath();
  }

  private static void writeRaw(Path dir, byte[] key, byte[] value) throws Exception {
    RocksDB.loadLibrary();
    java.nio.file.Files.createDirectories(dir);
    try (Options options = new Options().setCreateIfMissing(true);
        RocksDB db = RocksDB.open(options, dir.toString())) {
      db.put(key, value);
    }
  }
}
