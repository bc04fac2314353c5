package io.sluice.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.client.push.MapOutputPusher;
import io.sluice.client.push.RecordStream;
import io.sluice.client.read.PartitionReader;
import io.sluice.client.read.ShuffleBatch;
import io.sluice.testutil.Records;
import io.sluice.testutil.TestCluster;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Records written in place through a {@link RecordStream} (in pieces, as a serializer flushes them)
 * make the same batches as the same records written whole with {@link MapOutputPusher#write}, and
 * read back unchanged: small records packed, records past the buffer size alone, a flush in the
 * middle of a record keeps it whole.
 */
class RecordStreamIT {
  private static final int PARTITIONS = 3;
  private static final int RECORDS = 300;

  @TempDir Path tmp;

  /** Record sizes: mostly small, some past the 4 KiB buffer. */
  private static int[] sizes() {
    Random random = new Random(42);
    int[] sizes = new int[RECORDS];
    for (int i = 0; i < RECORDS; i++) {
      sizes[i] = i % 37 == 5 ? 4096 + random.nextInt(20_000) : 1 + random.nextInt(900);
    }
    return sizes;
  }

  @Test
  void recordsWrittenInPlaceMakeTheSameBatchesAsWholeWrites() throws Exception {
    int[] sizes = sizes();
    Random pieces = new Random(7);
    Map<String, String> conf = Map.of("sluice.push.bufferSize", "4k");
    try (TestCluster cluster = TestCluster.start(tmp, 1, conf)) {
      cluster.coordinator().registerShuffle(0, 2, PARTITIONS);
      try (MapOutputPusher whole = cluster.pusher(0, 0, 0);
          MapOutputPusher inPlace = cluster.pusher(0, 1, 0)) {
        RecordStream stream = inPlace.recordStream();
        for (int i = 0; i < RECORDS; i++) {
          int p = i % PARTITIONS;
          byte[] a = Records.record(0, p, i / PARTITIONS, sizes[i]);
          if (i == RECORDS / 2) {
            whole.flush();
          }
          whole.write(p, a, 0, a.length);
          byte[] b = Records.record(1, p, i / PARTITIONS, sizes[i]);
          stream.startRecord(p);
          stream.write(b[0]);
          for (int off = 1; off < b.length; ) {
            int n = Math.min(b.length - off, 1 + pieces.nextInt(3000));
            stream.write(b, off, n);
            off += n;
          }
          if (i == RECORDS / 2) {
            inPlace.flush(); // with the record open: the records before it go, it stays whole
          }
          assertThat(stream.endRecord()).isEqualTo(b.length);
        }
        whole.finish();
        inPlace.finish();
      }

      Records.Checker checker = new Records.Checker();
      List<List<Integer>> batchSizes = List.of(new ArrayList<>(), new ArrayList<>());
      try (PartitionReader reader = cluster.reader(0, 0, PARTITIONS, 0, 2)) {
        for (ShuffleBatch batch = reader.next(); batch != null; batch = reader.next()) {
          checker.accept(batch.partitionId(), batch.payload());
          batchSizes.get(batch.mapIndex()).add(batch.payload().length);
        }
      }
      assertThat(checker.records()).isEqualTo(2L * RECORDS);
      for (int m = 0; m < 2; m++) {
        for (int p = 0; p < PARTITIONS; p++) {
          assertThat(checker.count(m, p)).isEqualTo(RECORDS / PARTITIONS);
        }
      }
      batchSizes.get(0).sort(null);
      batchSizes.get(1).sort(null);
      assertThat(batchSizes.get(1)).isEqualTo(batchSizes.get(0));
    }
  }

  @Test
  void bytesOutsideARecordAndNestedRecordsAreRefused() throws Exception {
    try (TestCluster cluster = TestCluster.start(tmp, 1, Map.of())) {
      cluster.coordinator().registerShuffle(0, 1, 1);
      try (MapOutputPusher pusher = cluster.pusher(0, 0, 0)) {
        RecordStream stream = pusher.recordStream();
        assertThatThrownBy(() -> stream.write(1))
            .isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("startRecord");
        stream.startRecord(0);
        assertThatThrownBy(() -> stream.startRecord(0))
            .isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("still open");
      }
    }
  }
}
