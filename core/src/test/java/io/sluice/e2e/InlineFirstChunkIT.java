package io.sluice.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.client.push.MapOutputPusher;
import io.sluice.client.read.PartitionReader;
import io.sluice.client.read.ShuffleBatch;
import io.sluice.network.Message;
import io.sluice.network.TransportClient;
import io.sluice.protocol.BatchFormat;
import io.sluice.protocol.MessageType;
import io.sluice.protocol.Messages;
import io.sluice.protocol.proto.FetchChunk;
import io.sluice.protocol.proto.OpenStream;
import io.sluice.protocol.proto.PartitionLocation;
import io.sluice.protocol.proto.Response;
import io.sluice.protocol.proto.StreamHandle;
import io.sluice.server.ShuffleServer;
import io.sluice.testutil.Records;
import io.sluice.testutil.TestCluster;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code OpenStream.inline_first_chunk}: a split of one small chunk is read with one request (the
 * answer to opening it carries the chunk and no stream stays open); a larger split gets its first
 * chunk with the answer and the rest by fetching; a reader asking for nothing inline gets the old
 * exchange. The readers of every other suite use it too (sluice.read.inlineFirstChunk, 1m).
 */
class InlineFirstChunkIT {
  @TempDir Path tmp;

  /** Opens a split on {@code connection}, the connection its stream then lives on. */
  private static Message open(
      TestCluster cluster, TransportClient connection, PartitionLocation at, int inline)
      throws Exception {
    return cluster
        .context()
        .callAsync(
            connection,
            id ->
                Messages.request(
                    MessageType.OPEN_STREAM,
                    OpenStream.newBuilder()
                        .setRequestId(id)
                        .setAppId(TestCluster.APP_ID)
                        .setShuffleId(0)
                        .setPartitionId(at.getPartitionId())
                        .setEpoch(at.getEpoch())
                        .setStartMapIndex(0)
                        .setEndMapIndex(1)
                        .setInlineFirstChunk(inline)
                        .build(),
                    id))
        .get(1, TimeUnit.MINUTES);
  }

  @Test
  void aSmallSplitIsReadInOneRequestAndALargerOneStartsWithItsFirstChunk() throws Exception {
    try (TestCluster cluster =
        TestCluster.start(
            tmp, 1, Map.of("sluice.read.chunkSize", "4k", "sluice.push.compression", "none"))) {
      ShuffleServer server = cluster.server(0);
      cluster.coordinator().registerShuffle(0, 1, 2);
      try (MapOutputPusher pusher = cluster.pusher(0, 0, 0)) {
        for (int s = 0; s < 100; s++) {
          byte[] small = Records.record(0, 0, s, 10); // partition 0: about 3 KiB, one chunk
          pusher.write(0, small, 0, small.length);
          byte[] large = Records.record(0, 1, s, 3000); // partition 1: about 300 KiB, many
          pusher.write(1, large, 0, large.length);
        }
        pusher.finish();
      }
      // every record of both partitions through the reader, which asks for first chunks inline
      Records.Checker checker = new Records.Checker();
      try (PartitionReader reader = cluster.reader(0, 0, 2, 0, 1)) {
        ShuffleBatch b;
        while ((b = reader.next()) != null) {
          checker.accept(b.partitionId(), b.payload());
        }
      }
      assertThat(checker.count(0, 0)).isEqualTo(100);
      assertThat(checker.count(0, 1)).isEqualTo(100);

      PartitionLocation small = cluster.coordinator().locations(0).location(0);
      TransportClient connection =
          cluster.context().connection(TestCluster.APP_ID, small.getServer());
      Message one = open(cluster, connection, small, 1 << 20);
      try {
        StreamHandle h = one.header(Response.class).getStream();
        assertThat(h.getFirstChunkInline()).isTrue();
        assertThat(h.getClosed()).as("nothing left to fetch").isTrue();
        assertThat(h.getChunkOffsetsCount()).isEqualTo(2);
        assertThat(one.body().readableBytes()).isEqualTo((int) h.getChunkOffsets(1));
        assertThat(one.body().getInt(BatchFormat.MAP_INDEX_OFFSET)).isZero();
        assertThat(server.openStreamCount()).as("streams the server keeps").isZero();
      } finally {
        one.release();
      }

      PartitionLocation large = cluster.coordinator().locations(0).location(1);
      Message first = open(cluster, connection, large, 1 << 20);
      long streamId;
      try {
        StreamHandle h = first.header(Response.class).getStream();
        assertThat(h.getFirstChunkInline()).isTrue();
        assertThat(h.getClosed()).isFalse();
        assertThat(h.getChunkOffsetsCount()).isGreaterThan(2);
        assertThat(first.body().readableBytes()).isEqualTo((int) h.getChunkOffsets(1));
        assertThat(server.openStreamCount()).isEqualTo(1);
        streamId = h.getStreamId();
      } finally {
        first.release();
      }
      Message second =
          cluster
              .context()
              .callAsync(
                  connection,
                  id ->
                      Messages.request(
                          MessageType.FETCH_CHUNK,
                          FetchChunk.newBuilder()
                              .setRequestId(id)
                              .setStreamId(streamId)
                              .setChunkIndex(1)
                              .build(),
                          id))
              .get(1, TimeUnit.MINUTES);
      try {
        assertThat(second.body().readableBytes()).isPositive();
      } finally {
        second.release();
      }

      Message plain = open(cluster, connection, small, 0);
      try {
        StreamHandle h = plain.header(Response.class).getStream();
        assertThat(h.getFirstChunkInline()).isFalse();
        assertThat(h.getClosed()).isFalse();
        assertThat(plain.body() == null || plain.body().readableBytes() == 0).isTrue();
      } finally {
        plain.release();
      }
    }
  }
}
