package io.sluice.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.MessageLite;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sluice.network.Message;
import io.sluice.protocol.BatchFormat;
import io.sluice.protocol.MessageType;
import io.sluice.protocol.Messages;
import io.sluice.protocol.StatusException;
import io.sluice.protocol.proto.CloseStream;
import io.sluice.protocol.proto.CommitMapPartition;
import io.sluice.protocol.proto.CommitShuffle;
import io.sluice.protocol.proto.FetchChunk;
import io.sluice.protocol.proto.GetShuffleLocations;
import io.sluice.protocol.proto.Heartbeat;
import io.sluice.protocol.proto.MapPartitionRef;
import io.sluice.protocol.proto.OpenMapStream;
import io.sluice.protocol.proto.OpenStream;
import io.sluice.protocol.proto.PushData;
import io.sluice.protocol.proto.ReadMapBuffer;
import io.sluice.protocol.proto.RegionData;
import io.sluice.protocol.proto.RegionFinish;
import io.sluice.protocol.proto.RegionStart;
import io.sluice.protocol.proto.RegisterShuffle;
import io.sluice.protocol.proto.ReleaseMapPartition;
import io.sluice.protocol.proto.ServerAddress;
import io.sluice.protocol.proto.Status;
import io.sluice.protocol.proto.UnregisterApplication;
import io.sluice.protocol.proto.UnregisterShuffle;
import io.sluice.server.memory.MemoryBudget;
import io.sluice.testutil.RawConnection;
import io.sluice.testutil.TestCluster;
import java.nio.file.Path;
import java.util.Map;
import java.util.function.LongFunction;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every count, index and length a stranger can put in a request, at its boundaries, against a real
 * server: each is answered with the exact status and a message naming the field and its limit,
 * before anything is allocated for it, and the server keeps serving.
 */
class HostileRequestsIT {
  private static final String APP = TestCluster.APP_ID;
  private static final int MAPS = 4;
  private static final int PARTITIONS = 8;

  @TempDir Path tmp;
  private TestCluster cluster;
  private ServerAddress server;

  @BeforeEach
  void start() throws Exception {
    cluster = TestCluster.start(tmp, 1, Map.of("sluice.memory.max", "8m"));
    server = cluster.addresses().get(0);
    call(register(1, MAPS, PARTITIONS));
    call(register(2, MAPS, 16));
  }

  @AfterEach
  void stop() {
    cluster.close();
    assertThat(cluster.memoryHeld()).as("memory held after the servers stopped").isZero();
  }

  private void call(LongFunction<Message> request) throws Exception {
    cluster.context().call(null, server, request);
  }

  private void assertStatus(LongFunction<Message> request, Status status, String... words) {
    assertThatThrownBy(() -> call(request))
        .isInstanceOfSatisfying(
            StatusException.class, e -> assertThat(e.status()).isEqualTo(status))
        .hasMessageContainingAll(words);
  }

  private static LongFunction<Message> request(MessageType type, MessageLite header) {
    return id -> Messages.request(type, withRequestId(header, id), id);
  }

  private static MessageLite withRequestId(MessageLite header, long id) {
    // every request header has request_id as field 1
    try {
      MessageLite.Builder b = header.toBuilder();
      b.getClass().getMethod("setRequestId", long.class).invoke(b, id);
      return b.build();
    } catch (ReflectiveOperationException e) {
      throw new AssertionError(e);
    }
  }

  private static LongFunction<Message> register(int shuffle, int maps, int partitions) {
    return request(
        MessageType.REGISTER_SHUFFLE,
        RegisterShuffle.newBuilder()
            .setAppId(APP)
            .setShuffleId(shuffle)
            .setNumMaps(maps)
            .setNumPartitions(partitions)
            .build());
  }

  private static ByteBuf batch(int map, int length) {
    ByteBuf b = Unpooled.directBuffer();
    BatchFormat.writeHeader(b, map, 0, 0, length);
    b.writeZero(length);
    return b;
  }

  private static LongFunction<Message> push(int partition, int epoch, int map) {
    return id ->
        Messages.request(
            MessageType.PUSH_DATA,
            PushData.newBuilder()
                .setRequestId(id)
                .setAppId(APP)
                .setShuffleId(1)
                .setPartitionId(partition)
                .setEpoch(epoch)
                .build(),
            id,
            batch(map, 16));
  }

  private static MapPartitionRef ref(int map) {
    return MapPartitionRef.newBuilder()
        .setAppId(APP)
        .setShuffleId(2)
        .setMapIndex(map)
        .setAttempt(0)
        .build();
  }

  private static LongFunction<Message> regionStart(int map, int subpartitions, int region) {
    return request(
        MessageType.REGION_START,
        RegionStart.newBuilder()
            .setPartition(ref(map))
            .setNumSubpartitions(subpartitions)
            .setRegionIndex(region)
            .build());
  }

  @Test
  void pushHeadersAreCheckedAgainstTheRegisteredShape() throws Exception {
    // one 48-byte push naming map 2^31-2 once grew a split's map set to 256 MiB
    assertStatus(
        push(0, 0, Integer.MAX_VALUE - 1),
        Status.BAD_REQUEST,
        "names map index 2147483646 but the shuffle registered 4 maps");
    assertStatus(push(0, 0, MAPS), Status.BAD_REQUEST, "map index 4");
    assertStatus(
        push(Integer.MAX_VALUE, 0, 0),
        Status.BAD_REQUEST,
        "partition 2147483647 is outside [0, 8)");
    assertStatus(push(PARTITIONS, 0, 0), Status.BAD_REQUEST, "partition 8 is outside [0, 8)");
    assertStatus(
        push(0, Integer.MAX_VALUE, 0),
        Status.BAD_REQUEST,
        "epoch 2147483647 is outside [0, 65536)");
    assertStatus(push(0, -1, 0), Status.BAD_REQUEST, "epoch -1 is outside");
    assertThat(cluster.server(0).registry().get(APP, 1).shape().numMaps()).isEqualTo(MAPS);
    // nothing was taken, so no split exists
    assertThat(cluster.server(0).memory().held()).isZero();
    call(push(PARTITIONS - 1, 0, MAPS - 1));
  }

  @Test
  void registrationsAreChecked() throws Exception {
    assertStatus(register(3, -1, 4), Status.BAD_REQUEST, "num_maps -1 is negative");
    assertStatus(register(3, 4, -5), Status.BAD_REQUEST, "num_partitions -5 is negative");
    assertStatus(
        register(1, MAPS, PARTITIONS + 1),
        Status.BAD_REQUEST,
        "is registered with 4 maps and 8 partitions",
        "cannot be registered again with 4 maps and 9 partitions");
    call(register(1, MAPS, PARTITIONS)); // the same shape again is fine
  }

  @Test
  void regionStartsAreCheckedBeforeAnythingIsAllocated() throws Exception {
    // 100,000,000 subpartitions once took 1.5 GiB of heap; 2^31-1 an OutOfMemoryError
    assertStatus(
        regionStart(0, 100_000_000, 0),
        Status.BAD_REQUEST,
        "num_subpartitions 100000000",
        "is outside [1, 16]");
    assertStatus(regionStart(0, Integer.MAX_VALUE, 0), Status.BAD_REQUEST, "2147483647");
    assertStatus(regionStart(0, 0, 0), Status.BAD_REQUEST, "num_subpartitions 0");
    assertStatus(
        regionStart(Integer.MAX_VALUE, 4, 0),
        Status.BAD_REQUEST,
        "map index 2147483647 is outside [0, 4)");
    assertStatus(regionStart(0, 4, -1), Status.BAD_REQUEST, "region_index -1");
    assertStatus(
        request(
            MessageType.REGION_DATA,
            RegionData.newBuilder().setPartition(ref(-3)).setRegionIndex(0).build()),
        Status.BAD_REQUEST,
        "negative shuffle, map index or attempt (2, -3, 0)");
    assertThat(cluster.server(0).registry().get(APP, 2).mapPartitionCount()).isZero();
    call(regionStart(1, 16, 0));
  }

  @Test
  void readsAreChecked() throws Exception {
    assertStatus(
        request(
            MessageType.OPEN_STREAM,
            OpenStream.newBuilder()
                .setAppId(APP)
                .setShuffleId(1)
                .setPartitionId(Integer.MAX_VALUE)
                .setEndMapIndex(1)
                .build()),
        Status.BAD_REQUEST,
        "partition 2147483647 is outside [0, 8)");
    assertStatus(
        request(
            MessageType.OPEN_MAP_STREAM,
            OpenMapStream.newBuilder()
                .setPartition(ref(Integer.MAX_VALUE))
                .setEndSubpartition(Integer.MAX_VALUE)
                .build()),
        Status.BAD_REQUEST,
        "map index 2147483647 is outside [0, 4)");
  }

  @Test
  void everyOtherRequestTypeAnswersBoundaryValuesByName() throws Exception {
    call(regionStart(1, 16, 0));
    assertStatus(
        request(
            MessageType.REGION_FINISH,
            RegionFinish.newBuilder()
                .setPartition(ref(1))
                .setRegionIndex(Integer.MAX_VALUE)
                .build()),
        Status.BAD_REQUEST,
        "region 2147483647");
    assertStatus(
        request(
            MessageType.COMMIT_MAP_PARTITION,
            CommitMapPartition.newBuilder().setPartition(ref(1)).setNumRegions(-1).build()),
        Status.BAD_REQUEST,
        "with -1 regions");
    assertStatus(
        request(
            MessageType.COMMIT_MAP_PARTITION,
            CommitMapPartition.newBuilder().setPartition(ref(Integer.MIN_VALUE)).build()),
        Status.BAD_REQUEST,
        "negative");
    assertStatus(
        request(
            MessageType.RELEASE_MAP_PARTITION,
            ReleaseMapPartition.newBuilder().setPartition(ref(-1)).build()),
        Status.BAD_REQUEST,
        "negative");
    assertStatus(
        request(MessageType.READ_MAP_BUFFER, ReadMapBuffer.newBuilder().setStreamId(-1).build()),
        Status.NOT_FOUND,
        "no open map stream -1");
    assertStatus(
        request(
            MessageType.FETCH_CHUNK,
            FetchChunk.newBuilder().setStreamId(Long.MAX_VALUE).setChunkIndex(-1).build()),
        Status.NOT_FOUND,
        "no open stream " + Long.MAX_VALUE);
    assertStatus(
        request(MessageType.CLOSE_STREAM, CloseStream.newBuilder().setStreamId(-7).build()),
        Status.NOT_FOUND,
        "no open stream -7");
    assertStatus(
        request(
            MessageType.COMMIT_SHUFFLE,
            CommitShuffle.newBuilder().setAppId(APP).setShuffleId(Integer.MAX_VALUE).build()),
        Status.SHUFFLE_NOT_REGISTERED,
        "shuffle 2147483647 is not registered");
    assertStatus(
        request(MessageType.HEARTBEAT, Heartbeat.newBuilder().setAppId("no-such-app").build()),
        Status.SHUFFLE_NOT_REGISTERED,
        "no-such-app");
    assertStatus(
        request(
            MessageType.REGISTER_SHUFFLE,
            RegisterShuffle.newBuilder()
                .setAppId("../../etc")
                .setShuffleId(1)
                .setNumMaps(1)
                .setNumPartitions(1)
                .build()),
        Status.BAD_REQUEST,
        "invalid application id");
    assertStatus(
        request(
            MessageType.GET_SHUFFLE_LOCATIONS,
            GetShuffleLocations.newBuilder().setShuffleId(1).build()),
        Status.BAD_REQUEST,
        "is not a request this server answers");
    // unregistering what does not exist changes nothing and is fine
    call(
        request(
            MessageType.UNREGISTER_SHUFFLE,
            UnregisterShuffle.newBuilder().setAppId(APP).setShuffleId(Integer.MIN_VALUE).build()));
    call(
        request(
            MessageType.UNREGISTER_APPLICATION,
            UnregisterApplication.newBuilder().setAppId("no-such-app").build()));
    assertThat(cluster.server(0).registry().get(APP, 1)).isNotNull();
  }

  /**
   * Regions of 65,536 subpartitions opened on 300 map partitions without data (a few kilobytes on
   * the wire) cost the budget nothing: the server stays ACCEPTING and pushes go through. Each
   * region's bookkeeping was once reserved whole, 1 MiB apiece, which filled the budget and paused
   * everyone.
   */
  @Test
  void regionsWithoutDataOfManySubpartitionsHoldNoMemory() throws Exception {
    int subpartitions = 65_536;
    call(
        request(
            MessageType.REGISTER_SHUFFLE,
            RegisterShuffle.newBuilder()
                .setAppId(APP)
                .setShuffleId(3)
                .setNumMaps(300)
                .setNumPartitions(subpartitions)
                .build()));
    for (int map = 0; map < 300; map++) {
      MapPartitionRef r = ref(map).toBuilder().setShuffleId(3).build();
      call(
          request(
              MessageType.REGION_START,
              RegionStart.newBuilder()
                  .setPartition(r)
                  .setNumSubpartitions(subpartitions)
                  .setRegionIndex(0)
                  .build()));
    }
    assertThat(cluster.server(0).memory().held()).isZero();
    assertThat(cluster.server(0).memory().state()).isEqualTo(MemoryBudget.State.ACCEPTING);
    call(push(0, 0, 0));
  }

  @Test
  void splitsBeyondTheServersMaximumGoElsewhere() throws Exception {
    try (TestCluster small =
        TestCluster.start(tmp.resolve("small"), 1, Map.of("sluice.server.maxOpenWriters", "2"))) {
      ServerAddress s = small.addresses().get(0);
      small.context().call(null, s, register(1, MAPS, PARTITIONS));
      small.context().call(null, s, push(0, 0, 0));
      small.context().call(null, s, push(1, 0, 0));
      small.context().call(null, s, push(1, 0, 1)); // an open split takes more
      assertThatThrownBy(() -> small.context().call(null, s, push(2, 0, 0)))
          .isInstanceOfSatisfying(
              StatusException.class, e -> assertThat(e.status()).isEqualTo(Status.HARD_SPLIT))
          .hasMessageContaining(
              "writing 2 splits and map partitions, its maximum (sluice.server.maxOpenWriters)");
      // a map partition counts too; one committed leaves room for the next
      small.context().call(null, s, register(2, MAPS, 16));
      small.context().call(null, s, commit(1));
      small.context().call(null, s, regionStart(0, 16, 0));
      small.context().call(null, s, regionStart(1, 16, 0));
      assertThatThrownBy(() -> small.context().call(null, s, regionStart(2, 16, 0)))
          .isInstanceOfSatisfying(
              StatusException.class, e -> assertThat(e.status()).isEqualTo(Status.HARD_SPLIT))
          .hasMessageContaining("sluice.server.maxOpenWriters");
    }
  }

  private static LongFunction<Message> commit(int shuffle) {
    return request(
        MessageType.COMMIT_SHUFFLE,
        CommitShuffle.newBuilder().setAppId(APP).setShuffleId(shuffle).build());
  }

  @Test
  void oversizedFramesCloseOnlyTheirConnection() throws Exception {
    int port = cluster.server(0).port();
    // a control frame over sluice.network.maxControlFrameSize (64k)
    try (RawConnection c = new RawConnection("127.0.0.1", port)) {
      c.send(
          RawConnection.frame(
              MessageType.HEARTBEAT,
              Heartbeat.newBuilder().setRequestId(1).setAppId("x".repeat(100_000)).build(),
              new byte[0]));
      assertThat(c.closedByServerWithin(30_000)).isTrue();
    }
    // a push body larger than sluice.memory.max (8m) can never be reserved
    try (RawConnection c = new RawConnection("127.0.0.1", port)) {
      byte[] header =
          PushData.newBuilder().setRequestId(1).setAppId(APP).setShuffleId(1).build().toByteArray();
      java.io.DataOutputStream out = new java.io.DataOutputStream(c.output());
      out.writeInt(5 + header.length + (16 << 20));
      out.writeByte(MessageType.PUSH_DATA.id());
      out.writeInt(header.length);
      out.write(header);
      out.flush();
      assertThat(c.closedByServerWithin(30_000)).isTrue();
    }
    assertThat(cluster.server(0).memory().held()).isZero();
    call(push(0, 0, 0));
    // the coordinator's endpoint takes no bulk data at all (it would hold it outside any budget)
    try (RawConnection c = new RawConnection("127.0.0.1", cluster.coordinator().port())) {
      c.send(
          RawConnection.frame(
              MessageType.PUSH_DATA,
              PushData.newBuilder().setRequestId(1).setAppId(APP).build(),
              new byte[1000]));
      assertThat(c.closedByServerWithin(30_000)).isTrue();
    }
  }
}
