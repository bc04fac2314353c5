package io.sluice.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sluice.client.ClientContext;
import io.sluice.network.Message;
import io.sluice.protocol.BatchFormat;
import io.sluice.protocol.MessageType;
import io.sluice.protocol.Messages;
import io.sluice.protocol.StatusException;
import io.sluice.protocol.proto.CommitShuffle;
import io.sluice.protocol.proto.FetchChunk;
import io.sluice.protocol.proto.OpenStream;
import io.sluice.protocol.proto.PushData;
import io.sluice.protocol.proto.PushMerged;
import io.sluice.protocol.proto.RegisterShuffle;
import io.sluice.protocol.proto.Response;
import io.sluice.protocol.proto.ServerAddress;
import io.sluice.protocol.proto.Status;
import io.sluice.testutil.TestCluster;
import java.io.DataOutputStream;
import java.io.InputStream;
import java.net.Socket;
import java.nio.file.Path;
import java.util.function.LongFunction;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Bad input gets a typed status naming what was wrong; the server keeps serving everyone. */
class MalformedInputIT {
  private static final String APP = TestCluster.APP_ID;

  @TempDir Path tmp;
  private TestCluster cluster;
  private ServerAddress server;

  @BeforeEach
  void start() throws Exception {
    cluster = TestCluster.start(tmp, 1);
    server = cluster.addresses().get(0);
    call(
        id ->
            Messages.request(
                MessageType.REGISTER_SHUFFLE,
                RegisterShuffle.newBuilder()
                    .setRequestId(id)
                    .setAppId(APP)
                    .setShuffleId(1)
                    .setNumMaps(4)
                    .setNumPartitions(8)
                    .build(),
                id));
  }

  @AfterEach
  void stop() {
    cluster.close();
    assertThat(cluster.memoryHeld()).as("memory held after the servers stopped").isZero();
  }

  private void call(LongFunction<Message> request) throws Exception {
    cluster.context().call(null, server, request);
  }

  private static ByteBuf batch(int map, int length, int actual) {
    ByteBuf b = Unpooled.directBuffer();
    BatchFormat.writeHeader(b, map, 0, 0, length);
    b.writeZero(actual);
    return b;
  }

  /** The body is made when the request is sent, so a request never sent leaks nothing. */
  private LongFunction<Message> push(
      String app, int shuffle, int partition, Supplier<ByteBuf> body) {
    return id ->
        Messages.request(
            MessageType.PUSH_DATA,
            PushData.newBuilder()
                .setRequestId(id)
                .setAppId(app)
                .setShuffleId(shuffle)
                .setPartitionId(partition)
                .build(),
            id,
            body.get());
  }

  private void assertStatus(LongFunction<Message> request, Status status, String... words) {
    assertThatThrownBy(() -> call(request))
        .isInstanceOfSatisfying(
            StatusException.class, e -> assertThat(e.status()).isEqualTo(status))
        .hasMessageContainingAll(words);
  }

  @Test
  void pushesThatCannotBeTakenGetTypedErrors() throws Exception {
    assertStatus(
        push("other-app", 1, 0, () -> batch(0, 1, 1)),
        Status.SHUFFLE_NOT_REGISTERED,
        "app other-app shuffle 1 is not registered");
    assertStatus(push(APP, 9, 0, () -> batch(0, 1, 1)), Status.SHUFFLE_NOT_REGISTERED, "shuffle 9");
    assertStatus(
        push(APP, 1, -4, () -> batch(0, 1, 1)),
        Status.BAD_REQUEST,
        "partition -4 is outside [0, 8)");
    assertStatus(
        push(APP, 1, 2, () -> batch(0, 1000, 10)),
        Status.BAD_REQUEST,
        "partition 2",
        "claims 1000 payload bytes but 10 remain");
    assertStatus(push(APP, 1, 2, () -> batch(0, -7, 10)), Status.BAD_REQUEST, "claims -7");
    assertStatus(push(APP, 1, 2, () -> Unpooled.EMPTY_BUFFER), Status.BAD_REQUEST, "empty");
    assertStatus(
        id ->
            Messages.request(
                MessageType.REGISTER_SHUFFLE,
                RegisterShuffle.newBuilder()
                    .setRequestId(id)
                    .setAppId("../../etc")
                    .setShuffleId(1)
                    .build(),
                id),
        Status.BAD_REQUEST,
        "invalid application id '../../etc'");

    // a good push still works, and after commit pushes are refused
    call(push(APP, 1, 2, () -> batch(0, 10, 10)));
    call(
        id ->
            Messages.request(
                MessageType.COMMIT_SHUFFLE,
                CommitShuffle.newBuilder().setRequestId(id).setAppId(APP).setShuffleId(1).build(),
                id));
    assertStatus(push(APP, 1, 2, () -> batch(0, 10, 10)), Status.STAGE_ENDED, "committed");
  }

  /** A merged push of {@code parts} (partition, length) pairs to shuffle 1; every epoch 0. */
  private LongFunction<Message> merged(int[][] parts, Supplier<ByteBuf> body) {
    return merged(1, parts, body);
  }

  private LongFunction<Message> merged(int shuffleId, int[][] parts, Supplier<ByteBuf> body) {
    return id -> {
      PushMerged.Builder h =
          PushMerged.newBuilder().setRequestId(id).setAppId(APP).setShuffleId(shuffleId);
      for (int[] part : parts) {
        h.addPartitionIds(part[0]).addEpochs(0).addLengths(part[1]);
      }
      return Messages.request(MessageType.PUSH_MERGED, h.build(), id, body.get());
    };
  }

  private Response callForResponse(LongFunction<Message> request) throws Exception {
    return cluster.context().call(null, server, request);
  }

  @Test
  void mergedPushesAnswerEachPartAndRefuseAMalformedShapeWhole() throws Exception {
    // the lists disagree with the body: refused whole, naming what is wrong
    assertStatus(
        merged(new int[][] {{0, 26}, {1, 26}}, () -> batch(0, 10, 10)),
        Status.BAD_REQUEST,
        "add up to 52 bytes but its body has 34");
    assertStatus(
        merged(new int[][] {{0, 0}}, () -> batch(0, 10, 10)),
        Status.BAD_REQUEST,
        "part 0",
        "length 0");
    assertStatus(
        id ->
            Messages.request(
                MessageType.PUSH_MERGED,
                PushMerged.newBuilder()
                    .setRequestId(id)
                    .setAppId(APP)
                    .setShuffleId(1)
                    .addPartitionIds(0)
                    .addLengths(26)
                    .build(),
                id,
                batch(0, 10, 10)),
        Status.BAD_REQUEST,
        "equally long");
    // each part gets its own outcome: a good one, a partition out of range, a short batch
    Response r =
        callForResponse(
            merged(
                new int[][] {{2, 34}, {9, 34}, {3, 34}},
                () ->
                    Unpooled.wrappedBuffer(batch(0, 10, 10), batch(1, 10, 10), batch(2, 20, 10))));
    assertThat(r.getMerged().getStatusesList())
        .containsExactly(Status.OK, Status.BAD_REQUEST, Status.BAD_REQUEST);
    assertThat(r.getMerged().getMessages(0)).isEmpty();
    assertThat(r.getMerged().getMessages(1)).contains("partition 9 is outside [0, 8)");
    assertThat(r.getMerged().getMessages(2)).contains("partition 3", "claims 20 payload bytes");
    // a shuffle this server does not have: every part says so, naming it
    Response unknown =
        callForResponse(
            merged(
                9,
                new int[][] {{2, 34}, {3, 34}},
                () -> Unpooled.wrappedBuffer(batch(0, 10, 10), batch(1, 10, 10))));
    assertThat(unknown.getMerged().getStatusesList())
        .containsExactly(Status.SHUFFLE_NOT_REGISTERED, Status.SHUFFLE_NOT_REGISTERED);
    assertThat(unknown.getMerged().getMessagesList())
        .allSatisfy(m -> assertThat(m).contains("shuffle 9 is not registered"));
    // the part that was taken is read back after commit
    call(
        id ->
            Messages.request(
                MessageType.COMMIT_SHUFFLE,
                CommitShuffle.newBuilder().setRequestId(id).setAppId(APP).setShuffleId(1).build(),
                id));
    assertThat(cluster.server(0).metrics().bytesPushed().getCount()).isEqualTo(34);
  }

  @Test
  void readsOfWhatDoesNotExistGetTypedErrors() throws Exception {
    assertStatus(open(1, 5), Status.NOT_FOUND, "partition 5", "no committed split");
    assertStatus(open(8, 0), Status.SHUFFLE_NOT_REGISTERED, "shuffle 8");
    assertStatus(
        id ->
            Messages.request(
                MessageType.FETCH_CHUNK,
                FetchChunk.newBuilder().setRequestId(id).setStreamId(12345).build(),
                id),
        Status.NOT_FOUND,
        "no open stream 12345");
  }

  private LongFunction<Message> open(int shuffle, int partition) {
    return id ->
        Messages.request(
            MessageType.OPEN_STREAM,
            OpenStream.newBuilder()
                .setRequestId(id)
                .setAppId(APP)
                .setShuffleId(shuffle)
                .setPartitionId(partition)
                .setEndMapIndex(Integer.MAX_VALUE)
                .build(),
            id);
  }

  @Test
  void garbageAndOversizedFramesCloseOnlyThatConnection() throws Exception {
    int port = server.getPort();
    for (byte[] bad :
        new byte[][] {
          {0, 0, 0, 9, 99, 0, 0, 0, 0, 1, 2, 3, 4}, // unknown type
          {0x7f, 0, 0, 0, 20, 0, 0, 0, 0}, // 2 GiB frame
          {-1, -1, -1, -1}, // negative length
          {0, 0, 0, 9, 20, 0, 0, 0, 4, -1, -1, -1, -1} // header that does not parse
        }) {
      try (Socket socket = new Socket("127.0.0.1", port)) {
        socket.setSoTimeout(30_000);
        DataOutputStream out = new DataOutputStream(socket.getOutputStream());
        out.write(bad);
        out.flush();
        InputStream in = socket.getInputStream();
        assertThat(in.read()).as("server closes the connection").isEqualTo(-1);
      }
    }
    // everyone else is still served
    call(push(APP, 1, 0, () -> batch(3, 4, 4)));
  }

  @Test
  void clientOfAStoppedServerGetsAnErrorNamingIt() throws Exception {
    cluster.server(0).close();
    assertThatThrownBy(() -> call(push(APP, 1, 0, () -> batch(3, 4, 4))))
        .hasMessageContaining("127.0.0.1:" + server.getPort());
    assertThat(ClientContext.format(server)).contains(":");
  }
}
