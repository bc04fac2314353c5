package io.sluice.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.client.push.MapOutputPusher;
import io.sluice.client.read.PartitionReader;
import io.sluice.client.read.ShuffleBatch;
import io.sluice.protocol.BatchFormat;
import io.sluice.protocol.BatchLimits;
import io.sluice.testutil.Records;
import io.sluice.testutil.TestCluster;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A map task builds no batch that a server or a reader must refuse ({@link BatchLimits}): the
 * largest record that fits in a batch travels and reads back, a larger one fails its map task at
 * once, naming it, and leaves the connections the JVM's other tasks push on alone.
 */
class RecordSizeIT {
  private static final int FRAME = 1 << 20;

  @TempDir Path tmp;

  /**
   * 1 MiB frames; chunks of at most 256k + 128k before their last batch, so every chunk fits in a
   * frame (chunkSize + flushSize at most half a frame).
   */
  private TestCluster cluster(String compression) throws IOException {
    return TestCluster.start(
        tmp,
        1,
        Map.of(
            "sluice.network.maxFrameSize",
            "" + FRAME,
            "sluice.read.chunkSize",
            "256k",
            "sluice.flush.size",
            "128k",
            "sluice.push.compression",
            compression));
  }

  private static int largestRecord() {
    int maxBatch =
        BatchLimits.maxBatchSize(FRAME, BatchLimits.maxPushHeaderSize(TestCluster.APP_ID));
    assertThat(maxBatch).isEqualTo(FRAME / 2);
    return maxBatch - BatchFormat.HEADER_SIZE;
  }

  private static void write(MapOutputPusher pusher, int map, int partition, int seq, int size)
      throws IOException {
    byte[] r = Records.record(map, partition, seq, size - Records.HEADER);
    pusher.write(partition, r, 0, r.length);
  }

  @Test
  void theLargestRecordTravelsAndAnyLargerOneFailsItsMapAtOnce() throws Exception {
    int largest = largestRecord();
    try (TestCluster cluster = cluster("none")) {
      cluster.coordinator().registerShuffle(0, 2, 2);
      try (MapOutputPusher failing = cluster.pusher(0, 1, 0);
          MapOutputPusher pusher = cluster.pusher(0, 0, 0)) {
        write(pusher, 0, 0, 0, 100);
        write(pusher, 0, 0, 1, largest);
        write(pusher, 0, 1, 0, 1000);
        assertThatThrownBy(() -> write(failing, 1, 1, 0, largest + 1))
            .isInstanceOf(IOException.class)
            .hasMessageContaining("record of " + (largest + 1) + " bytes")
            .hasMessageContaining("map 1 attempt 0 of app " + TestCluster.APP_ID)
            .hasMessageContaining("partition 1")
            .hasMessageContaining("sluice.network.maxFrameSize (" + FRAME + " bytes)");
        assertThatThrownBy(() -> write(failing, 1, 0, 0, 3 * FRAME))
            .as("larger than a frame: before, this closed the connection all tasks push on")
            .hasMessageContaining("record of " + 3 * FRAME + " bytes");
        write(pusher, 0, 1, 1, largest);
        pusher.finish();
      }
      try (MapOutputPusher second = cluster.pusher(0, 1, 1)) {
        write(second, 1, 0, 0, largest);
        second.finish();
      }
      Records.Checker checker = new Records.Checker();
      try (PartitionReader reader = cluster.reader(0, 0, 2, 0, 2)) {
        ShuffleBatch b;
        while ((b = reader.next()) != null) {
          checker.accept(b.partitionId(), b.payload());
        }
      }
      assertThat(checker.records()).isEqualTo(5);
    }
  }

  @Test
  void aRecordLargerThanAFrameTravelsWhenItCompressesIntoOneBatch() throws Exception {
    byte[] record = new byte[3 * FRAME];
    for (int i = 0; i < record.length; i++) {
      record[i] = (byte) (i % 251);
    }
    try (TestCluster cluster = cluster("lz4")) {
      cluster.coordinator().registerShuffle(0, 1, 1);
      try (MapOutputPusher pusher = cluster.pusher(0, 0, 0)) {
        pusher.write(0, record, 0, record.length);
        pusher.finish();
      }
      List<byte[]> read = new ArrayList<>();
      try (PartitionReader reader = cluster.reader(0, 0, 1, 0, 1)) {
        ShuffleBatch b;
        while ((b = reader.next()) != null) {
          read.add(b.payload());
        }
      }
      assertThat(read).hasSize(1);
      assertThat(read.get(0)).isEqualTo(record);
    }
  }
}
