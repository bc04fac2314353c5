package io.sluice.server.state;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.client.coordinator.ShuffleCommit;
import io.sluice.client.push.MapOutputPusher;
import io.sluice.server.storage.SplitKey;
import io.sluice.testutil.Records;
import io.sluice.testutil.TestCluster;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;

/**
 * A server that comes back without a split it had acknowledged data to answers the commit with what
 * it still has, and that looks complete. A power loss leaves a server so (the record of an open
 * split is written without a sync), and so does a state store or data directory restored from an
 * older copy. The coordinator compares what each partition's committed splits hold with what the
 * servers acknowledged to the map attempts that ended, and reports the partition lost, so its
 * readers fail and the engine reruns the maps, instead of handing out a partition without map 0's
 * data.
 *
 * <p>The end state is made in-process: a graceful stop (which commits the open split), then its
 * record is deleted from the stopped server's store, so the restarted server knows the shuffle but
 * not the split, and deletes its file as unreferenced.
 */
class PowerLossCommitIT {
  private static final int SHUFFLE = 0;
  private static final int RECORDS = 200;

  @TempDir Path tmp;

  private static void writeMap(TestCluster cluster, int map) throws Exception {
    try (MapOutputPusher pusher = cluster.pusher(SHUFFLE, map, 0)) {
      for (int seq = 0; seq < RECORDS; seq++) {
        byte[] r = Records.record(map, 0, seq, 100);
        pusher.write(0, r, 0, r.length);
      }
      pusher.finish();
    }
  }

  /** Deletes the record of partition 0's first split from the stopped server's store. */
  private static void loseTheSplitRecord(Path serverRoot) throws Exception {
    Path store = serverRoot.resolve("disk1").resolve(".sluice-state");
    RocksDB.loadLibrary();
    try (Options options = new Options();
        RocksDB db = RocksDB.open(options, store.toString())) {
      byte[] key = StateKeys.committedSplit(new SplitKey(TestCluster.APP_ID, SHUFFLE, 0, 0));
      assertThat(db.get(key)).as("the record the graceful stop wrote").isNotNull();
      db.delete(key);
    }
  }

  @Test
  void aCommitMissingAcknowledgedBytesReportsThePartitionLost() throws Exception {
    try (TestCluster cluster = TestCluster.start(tmp, 1, Map.of("sluice.flush.size", "8m"))) {
      cluster.coordinator().registerShuffle(SHUFFLE, 2, 1);
      writeMap(cluster, 0); // acknowledged: held in the server's memory
      cluster.restartServer(
          0,
          root -> {
            try {
              loseTheSplitRecord(root);
            } catch (Exception e) {
              throw new java.io.IOException(e);
            }
          });
      writeMap(cluster, 1); // the last map: its end starts the commit

      ShuffleCommit commit = cluster.coordinator().committed(SHUFFLE).get(60, TimeUnit.SECONDS);

      assertThat(commit.splits()).as("the server answered its commit: map 1's split").hasSize(1);
      assertThat(commit.lostPartitions().get(0)).as("partition 0 lost map 0's data").isTrue();
      assertThat(commit.lostReason())
          .contains("committed fewer bytes than they acknowledged")
          .contains("partition 0 (")
          .contains("a server lost acknowledged data");
    }
  }
}
