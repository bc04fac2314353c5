package io.sluice.client.mappartition;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.channel.Channel;
import io.sluice.client.ClientContext;
import io.sluice.common.SluiceConf;
import io.sluice.network.Message;
import io.sluice.network.NetworkConf;
import io.sluice.network.RequestHandler;
import io.sluice.network.TransportServer;
import io.sluice.protocol.MapPartitionId;
import io.sluice.protocol.MessageType;
import io.sluice.protocol.Messages;
import io.sluice.protocol.SluiceProtocol;
import io.sluice.protocol.proto.CloseStream;
import io.sluice.protocol.proto.MapStreamOpened;
import io.sluice.protocol.proto.PartitionRecordList;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** A reader against a server that answers the open with records the reader cannot decode. */
class MapPartitionReaderFaultyServerIT {
  private static final long STREAM_ID = 7;

  /**
   * Opens every map stream as {@link #STREAM_ID}, with records whose lists differ in length, and
   * remembers the streams it was asked to close.
   */
  private static final class MalformedRecords implements RequestHandler {
    final List<Long> closed = new CopyOnWriteArrayList<>();

    @Override
    public void handle(Channel channel, Message request) {
      long id = request.requestId();
      MessageType type = MessageType.of(request.type());
      if (type == MessageType.OPEN_MAP_STREAM) {
        PartitionRecordList malformed =
            PartitionRecordList.newBuilder().addPartitionDeltas(0).build(); // no batches, bytes
        channel.writeAndFlush(
            Messages.response(
                Messages.okBuilder(id)
                    .setMapStream(
                        MapStreamOpened.newBuilder()
                            .setStreamId(STREAM_ID)
                            .setBacklog(1)
                            .setWithRecords(true)
                            .setRecords(malformed))
                    .build()));
      } else {
        if (type == MessageType.CLOSE_STREAM) {
          closed.add(request.header(CloseStream.class).getStreamId());
        }
        channel.writeAndFlush(Messages.ok(id));
      }
      request.release();
    }
  }

  @Test
  void aStreamWhoseRecordsCannotBeDecodedIsClosedOnTheServer() throws Exception {
    SluiceConf conf = SluiceConf.of(Map.of("sluice.network.ioThreads", "1"));
    MalformedRecords handler = new MalformedRecords();
    TransportServer server =
        new TransportServer(
            "faulty", new NetworkConf(conf), SluiceProtocol.INSTANCE, handler, "127.0.0.1", 0);
    try (ClientContext context = new ClientContext(conf)) {
      MapPartitionReader reader =
          MapPartitionReader.open(
              context,
              new MapPartitionId("app-faulty", 0, 3, 0),
              ClientContext.address("127.0.0.1", server.port()),
              0,
              0,
              () -> {});
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      IOException failure = null;
      while (failure == null && System.nanoTime() < deadline) {
        try {
          reader.poll();
          Thread.sleep(10);
        } catch (IOException e) {
          failure = e;
        }
      }
      assertThat(failure).isNotNull().hasMessageContaining("malformed records");
      reader.close();
      reader.closedOnServer().get(30, TimeUnit.SECONDS);
      // the server opened the stream; it must not stay open until the connection closes
      assertThat(handler.closed).containsExactly(STREAM_ID);
      assertThatThrownBy(reader::poll).isInstanceOf(IOException.class);
    } finally {
      server.close();
    }
  }
}
