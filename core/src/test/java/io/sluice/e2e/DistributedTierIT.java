package io.sluice.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.client.push.MapOutputPusher;
import io.sluice.client.read.PartitionReader;
import io.sluice.client.read.ShuffleBatch;
import io.sluice.common.SluiceConf;
import io.sluice.protocol.proto.CommittedShuffle;
import io.sluice.protocol.proto.CommittedSplit;
import io.sluice.server.ServerConf;
import io.sluice.server.ShuffleServer;
import io.sluice.testutil.HangingFileSystem;
import io.sluice.testutil.Records;
import io.sluice.testutil.TestCluster;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The distributed tier on real servers, through Hadoop's local file system ({@code file://}; the
 * end-to-end suite runs it on a MiniDFSCluster): committed splits move there and leave no local
 * file, readers read them from there, also after their server stopped and for map ranges; a restart
 * keeps them and deletes files no record names; unregistering deletes them; a policy threshold
 * keeps small splits local.
 */
class DistributedTierIT {
  private static final int MAPS = 3;
  private static final int PARTITIONS = 6;
  private static final int RECORDS = 40;

  @TempDir Path tmp;

  private Map<String, String> tier(long minSplit) {
    return Map.of(
        "sluice.storage.policy",
        "local,hdfs",
        "sluice.storage.hdfs.dir",
        tmp.resolve("dfs").toUri().toString(),
        "sluice.storage.hdfs.minSplitSize",
        Long.toString(minSplit),
        "sluice.read.chunkSize",
        "2k");
  }

  private static void shuffle(TestCluster cluster, int shuffleId) throws Exception {
    cluster.coordinator().registerShuffle(shuffleId, MAPS, PARTITIONS);
    for (int m = 0; m < MAPS; m++) {
      try (MapOutputPusher pusher = cluster.pusher(shuffleId, m, 0)) {
        for (int s = 0; s < RECORDS; s++) {
          for (int p = 0; p < PARTITIONS; p++) {
            byte[] r = Records.record(m, p, s, 100 + (s * 7 + p) % 50);
            pusher.write(p, r, 0, r.length);
          }
        }
        pusher.finish();
      }
    }
    cluster.coordinator().commit(shuffleId).get(60, TimeUnit.SECONDS);
  }

  /** Reads maps [startMap, endMap) of every partition and checks each record came once. */
  private static void readsOnce(TestCluster cluster, int shuffleId, int startMap, int endMap)
      throws Exception {
    Records.Checker checker = new Records.Checker();
    try (PartitionReader reader = cluster.reader(shuffleId, 0, PARTITIONS, startMap, endMap)) {
      ShuffleBatch b;
      while ((b = reader.next()) != null) {
        checker.accept(b.partitionId(), b.payload());
      }
    }
    for (int m = 0; m < MAPS; m++) {
      for (int p = 0; p < PARTITIONS; p++) {
        int expected = m >= startMap && m < endMap ? RECORDS : 0;
        assertThat(checker.count(m, p)).as("map %d partition %d", m, p).isEqualTo(expected);
      }
    }
  }

  private static List<Path> files(Path root, String suffix) throws IOException {
    if (!Files.exists(root)) {
      return List.of();
    }
    try (Stream<Path> files = Files.walk(root)) {
      return files
          .filter(f -> f.getFileName().toString().endsWith(suffix))
          .collect(Collectors.toList());
    }
  }

  private List<Path> localSplitFiles() throws IOException {
    return files(tmp.resolve("cluster"), ".data");
  }

  private List<Path> remoteSplitFiles() throws IOException {
    return files(tmp.resolve("dfs"), ".data");
  }

  @Test
  void committedSplitsAreReadFromTheTierAfterTheirServerStoppedAndSurviveARestart()
      throws Exception {
    try (TestCluster cluster = TestCluster.start(tmp.resolve("cluster"), 2, tier(0))) {
      shuffle(cluster, 0);
      assertThat(localSplitFiles()).as("split files left on local disks").isEmpty();
      assertThat(remoteSplitFiles()).hasSize(PARTITIONS);
      long moved = 0;
      for (ShuffleServer s : cluster.servers()) {
        moved += s.metrics().hdfsTierSplits().getCount();
      }
      assertThat(moved).isEqualTo(PARTITIONS);
      CommittedShuffle committed = cluster.coordinatorClient().committedSplits(0, 0, PARTITIONS);
      for (CommittedSplit split : committed.getSplitsList()) {
        assertThat(split.getRemotePath())
            .startsWith("file:")
            .contains(tmp.resolve("dfs").toString());
      }
      readsOnce(cluster, 0, 0, MAPS);
      long whole = cluster.context().metrics().remoteBytesRead();
      // a map range: only its runs, from the files' map-run trailers
      readsOnce(cluster, 0, 1, 2);
      long oneMap = cluster.context().metrics().remoteBytesRead() - whole;
      assertThat(oneMap).isPositive().isLessThan(whole / 2);
      readsOnce(cluster, 0, 0, 2);
      readsOnce(cluster, 0, 2, 3);
      assertThat(cluster.context().metrics().remoteSplitsRead()).isEqualTo(4 * PARTITIONS);

      // a leftover of an earlier run that no record names goes at the restart
      Path serverRoot = remoteSplitFiles().get(0).getParent().getParent().getParent();
      Path stray = Files.createDirectories(serverRoot.resolve("app-gone").resolve("3"));
      Files.write(stray.resolve("0-0.data"), new byte[10]);
      for (int i = 0; i < 2; i++) {
        cluster.restartServer(i);
      }
      assertThat(remoteSplitFiles()).as("split files after the restart").hasSize(PARTITIONS);
      assertThat(Files.exists(serverRoot.resolve("app-gone"))).isFalse();
      int recovered = 0;
      for (ShuffleServer s : cluster.servers()) {
        assertThat(s.recovery().lostShuffles()).isZero();
        recovered += s.recovery().splits();
      }
      assertThat(recovered).isEqualTo(PARTITIONS);
      readsOnce(cluster, 0, 0, MAPS);

      // every server stopped: the splits are read from the tier all the same
      for (ShuffleServer s : cluster.servers()) {
        s.close();
      }
      readsOnce(cluster, 0, 0, MAPS);
    }
  }

  @Test
  void unregisteringDeletesTheFilesInTheTier() throws Exception {
    try (TestCluster cluster = TestCluster.start(tmp.resolve("cluster"), 1, tier(0))) {
      shuffle(cluster, 0);
      shuffle(cluster, 1);
      assertThat(remoteSplitFiles()).hasSize(2 * PARTITIONS);
      cluster.coordinator().unregisterShuffle(0);
      awaitRemoteFiles(PARTITIONS);
      readsOnce(cluster, 1, 0, MAPS);
      cluster.coordinator().close(); // unregisters the application
      awaitRemoteFiles(0);
    }
  }

  @Test
  void anApplicationThatExpiresLeavesNoFileInTheTier() throws Exception {
    try (TestCluster cluster = TestCluster.start(tmp.resolve("cluster"), 1, tier(0))) {
      shuffle(cluster, 0);
      assertThat(remoteSplitFiles()).hasSize(PARTITIONS);
      // as if no heartbeat came for longer than sluice.app.timeout
      cluster.server(0).registry().expire(-1).get(30, TimeUnit.SECONDS);
      awaitRemoteFiles(0);
    }
  }

  @Test
  void splitsBelowTheThresholdStayLocal() throws Exception {
    try (TestCluster cluster = TestCluster.start(tmp.resolve("cluster"), 1, tier(1L << 30))) {
      shuffle(cluster, 0);
      assertThat(remoteSplitFiles()).isEmpty();
      assertThat(localSplitFiles()).hasSize(PARTITIONS);
      readsOnce(cluster, 0, 0, MAPS);
      assertThat(cluster.context().metrics().remoteSplitsRead()).isZero();
    }
  }

  @Test
  void aCopyThatHangsLeavesTheSplitLocalAndIsDeletedWhenItEnds() throws Exception {
    Map<String, String> conf = new java.util.HashMap<>(tier(0));
    conf.put("sluice.storage.hdfs.dir", "hangfile://" + tmp.resolve("dfs"));
    conf.put("sluice.hadoop.fs.hangfile.impl", HangingFileSystem.class.getName());
    conf.put("sluice.hadoop.fs.hangfile.impl.disable.cache", "true");
    conf.put("sluice.storage.hdfs.copyTimeout", "300ms");
    HangingFileSystem.hold();
    try (TestCluster cluster = TestCluster.start(tmp.resolve("cluster"), 1, conf)) {
      shuffle(cluster, 0); // the commit answers once the copies time out
      assertThat(localSplitFiles()).hasSize(PARTITIONS);
      assertThat(cluster.server(0).metrics().hdfsTierFailures().getCount()).isEqualTo(PARTITIONS);
      for (CommittedSplit split :
          cluster.coordinatorClient().committedSplits(0, 0, PARTITIONS).getSplitsList()) {
        assertThat(split.getRemotePath()).isEmpty();
      }
      readsOnce(cluster, 0, 0, MAPS); // from the server
      HangingFileSystem.release();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      // each held copy goes on once released, then finds its split kept local and deletes what
      // it wrote: wait for all of them to have started, then for their files to be gone
      while ((HangingFileSystem.createsPassed() < PARTITIONS
              || !files(tmp.resolve("dfs"), "").stream().allMatch(Files::isDirectory))
          && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      assertThat(files(tmp.resolve("dfs"), "")).as("late copies").allMatch(Files::isDirectory);
      assertThat(localSplitFiles()).hasSize(PARTITIONS);
      readsOnce(cluster, 0, 0, MAPS);
    } finally {
      HangingFileSystem.release();
    }
  }

  @Test
  void anApplicationThatAsksForTheTierSendsEverySplitThere() throws Exception {
    Map<String, String> conf = new java.util.HashMap<>(tier(1L << 30));
    conf.put("sluice.shuffle.distributedTier", "true");
    try (TestCluster cluster = TestCluster.start(tmp.resolve("cluster"), 1, conf)) {
      shuffle(cluster, 0);
      assertThat(remoteSplitFiles()).hasSize(PARTITIONS);
      assertThat(localSplitFiles()).isEmpty();
      readsOnce(cluster, 0, 0, MAPS);
    }
  }

  @Test
  void aPolicyWithoutLocalOrWithoutADirectoryIsRefusedNamingTheSetting() {
    assertThatThrownBy(() -> new ServerConf(SluiceConf.of(Map.of("sluice.storage.policy", "hdfs"))))
        .hasMessageContaining("sluice.storage.policy")
        .hasMessageContaining("must name local");
    assertThatThrownBy(
            () -> new ServerConf(SluiceConf.of(Map.of("sluice.storage.policy", "local,s3"))))
        .hasMessageContaining("'s3'")
        .hasMessageContaining("memory, local and hdfs");
    assertThatThrownBy(
            () -> new ServerConf(SluiceConf.of(Map.of("sluice.storage.policy", "local,hdfs"))))
        .hasMessageContaining("sluice.storage.hdfs.dir is not set");
    assertThatThrownBy(
            () ->
                new ServerConf(
                    SluiceConf.of(
                        Map.of(
                            "sluice.storage.policy",
                            "local,hdfs",
                            "sluice.storage.hdfs.dir",
                            "relative/dir"))))
        .hasMessageContaining("sluice.storage.hdfs.dir must be an absolute URI");
  }

  private void awaitRemoteFiles(int expected) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (remoteSplitFiles().size() != expected && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    assertThat(remoteSplitFiles()).hasSize(expected);
  }
}
