package io.sluice.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.client.push.MapOutputPusher;
import io.sluice.client.read.PartitionReader;
import io.sluice.client.read.ShuffleBatch;
import io.sluice.protocol.MessageType;
import io.sluice.protocol.proto.PushData;
import io.sluice.server.ShuffleServer;
import io.sluice.testutil.RawConnection;
import io.sluice.testutil.Records;
import io.sluice.testutil.TestCluster;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Connections that announce large pushes and send their bodies slowly, never finishing, cannot take
 * a server's memory: a body larger than {@code sluice.network.server.maxBodyInFlight} is refused, a
 * body not whole within {@code sluice.network.server.bodyTimeout} closes its connection and gives
 * its memory back, and meanwhile an application's pushes go through.
 */
class SlowFramesIT {
  private static final int MIB = 1 << 20;

  @TempDir Path tmp;

  @Test
  void slowBodiesLoseTheirMemoryAndOtherPushesGoThrough() throws Exception {
    try (TestCluster cluster =
        TestCluster.start(
            tmp,
            1,
            Map.of(
                "sluice.memory.max", "32m",
                "sluice.flush.size", "1m",
                "sluice.network.server.maxBodyInFlight", "12m",
                "sluice.network.server.bodyTimeout", "2s"))) {
      ShuffleServer server = cluster.server(0);
      cluster.coordinator().registerShuffle(0, 1, 4);

      // larger than one connection may have in flight: refused at once, nothing reserved
      try (RawConnection tooLarge = new RawConnection("127.0.0.1", server.port())) {
        announce(tooLarge, 16 * MIB);
        assertThat(tooLarge.closedByServerWithin(30_000)).as("16 MiB body refused").isTrue();
      }

      // two connections each announce 12 MiB and send 64 KiB of it, never the rest
      try (RawConnection slow1 = new RawConnection("127.0.0.1", server.port());
          RawConnection slow2 = new RawConnection("127.0.0.1", server.port())) {
        announce(slow1, 12 * MIB);
        announce(slow2, 12 * MIB);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (server.memory().held() < 24 * MIB && System.nanoTime() < deadline) {
          Thread.sleep(10);
        }
        assertThat(server.memory().held()).as("both bodies reserved").isEqualTo(24L * MIB);

        // an application pushes, commits and reads back meanwhile
        try (MapOutputPusher pusher = cluster.pusher(0, 0, 0)) {
          for (int i = 0; i < 2_000; i++) {
            byte[] r = Records.record(0, i % 4, i / 4, 1_000);
            pusher.write(i % 4, r, 0, r.length);
          }
          pusher.finish();
        }

        // the slow ones are closed by the deadline, whatever they do
        assertThat(slow1.closedByServerWithin(60_000)).as("slow connection 1 closed").isTrue();
        assertThat(slow2.closedByServerWithin(60_000)).as("slow connection 2 closed").isTrue();
      }
      Records.Checker checker = new Records.Checker();
      try (PartitionReader reader = cluster.reader(0, 0, 4, 0, 1)) {
        ShuffleBatch batch;
        while ((batch = reader.next()) != null) {
          checker.accept(batch.partitionId(), batch.payload());
        }
      }
      assertThat(checker.records()).isEqualTo(2_000);

      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (server.memory().held() > 0 && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      assertThat(server.memory().held()).as("memory accounting balances").isZero();
    }
  }

  /** Sends a PUSH_DATA frame's prefix and header for a body of {@code body} bytes, and 64 KiB. */
  private static void announce(RawConnection c, int body) throws IOException {
    byte[] header =
        PushData.newBuilder()
            .setRequestId(1)
            .setAppId(TestCluster.APP_ID)
            .setShuffleId(0)
            .build()
            .toByteArray();
    DataOutputStream out = new DataOutputStream(c.output());
    out.writeInt(5 + header.length + body);
    out.writeByte(MessageType.PUSH_DATA.id());
    out.writeInt(header.length);
    out.write(header);
    out.write(new byte[64 << 10]);
    out.flush();
  }
}
