package io.sluice.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.client.push.MapOutputPusher;
import io.sluice.protocol.MessageType;
import io.sluice.protocol.proto.FetchChunk;
import io.sluice.protocol.proto.OpenStream;
import io.sluice.protocol.proto.Response;
import io.sluice.protocol.proto.Status;
import io.sluice.testutil.RawConnection;
import io.sluice.testutil.TestCluster;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.HashSet;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A peer that opens a stream on a committed split and sends thousands of chunk fetches without
 * reading any answer: each answer holds its file open until it is written, so without a bound the
 * server's open files grow with the fetches until it has none left for anyone. The server holds at
 * most sluice.network.server.maxFileAnswers of them per connection (it stops reading the connection
 * past that), answers every fetch once the peer reads, and lets the files go.
 */
class FetchFloodIT {
  private static final int FETCHES = 5_000;
  private static final int MAX_ANSWERS = 64; // sluice.network.server.maxFileAnswers' default

  @TempDir Path tmp;

  @Test
  void fetchesNeverReadHoldAtMostTheBoundOfOpenFilesAndAreAllAnsweredWhenRead() throws Exception {
    try (TestCluster cluster = TestCluster.start(tmp, 1, Map.of("sluice.read.chunkSize", "256k"))) {
      cluster.coordinator().registerShuffle(0, 1, 1);
      byte[] record = new byte[32 << 10];
      new Random(7).nextBytes(record);
      try (MapOutputPusher pusher = cluster.pusher(0, 0, 0)) {
        for (int i = 0; i < 64; i++) { // 2 MiB: several chunks
          pusher.write(0, record, 0, record.length);
        }
        pusher.finish();
      }
      cluster.coordinator().committed(0).get(1, TimeUnit.MINUTES);

      try (RawConnection peer = new RawConnection("127.0.0.1", cluster.server(0).port())) {
        peer.send(
            RawConnection.frame(
                MessageType.OPEN_STREAM,
                OpenStream.newBuilder()
                    .setRequestId(1)
                    .setAppId(TestCluster.APP_ID)
                    .setShuffleId(0)
                    .setPartitionId(0)
                    .setEndMapIndex(1)
                    .build(),
                new byte[0]));
        Response opened = peer.readResponse();
        assertThat(opened.getStatus()).isEqualTo(Status.OK);
        long streamId = opened.getStream().getStreamId();
        int chunks = opened.getStream().getChunkOffsetsCount() - 1;
        assertThat(chunks).isGreaterThan(2);

        long before = openFiles();
        ByteArrayOutputStream flood = new ByteArrayOutputStream();
        for (int i = 0; i < FETCHES; i++) {
          flood.write(
              RawConnection.frame(
                  MessageType.FETCH_CHUNK,
                  FetchChunk.newBuilder()
                      .setRequestId(100 + i)
                      .setStreamId(streamId)
                      .setChunkIndex(i % chunks)
                      .build(),
                  new byte[0]));
        }
        peer.send(flood.toByteArray());
        long peak = before;
        for (int look = 0; look < 40; look++) { // the server works through what it read
          Thread.sleep(50);
          peak = Math.max(peak, openFiles());
        }
        assertThat(peak - before)
            .as("files the server opened for answers nobody reads (%d fetches)", FETCHES)
            .isLessThanOrEqualTo(MAX_ANSWERS + 16);

        // answers go out as their chunks are ready, not in the order asked
        Set<Long> answered = new HashSet<>();
        for (int i = 0; i < FETCHES; i++) {
          Response r = peer.readResponse();
          assertThat(r.getStatus()).as("answer to %d", r.getRequestId()).isEqualTo(Status.OK);
          answered.add(r.getRequestId());
        }
        assertThat(answered).as("fetches answered, each once").hasSize(FETCHES);
        assertThat(Collections.min(answered)).isEqualTo(100);
      }
      // the connection's close drops its stream on the server's own time
      for (int look = 0; look < 200 && cluster.server(0).openStreamCount() > 0; look++) {
        Thread.sleep(50);
      }
      assertThat(cluster.server(0).openStreamCount()).as("streams after the peer left").isZero();
    }
  }

  private static long openFiles() throws IOException {
    try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
      return fds.count();
    }
  }
}
