package io.sluice.client.mappartition;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.Unpooled;
import io.sluice.client.ClientContext;
import io.sluice.protocol.MapBlockFormat;
import io.sluice.protocol.MapPartitionId;
import io.sluice.protocol.MessageType;
import io.sluice.protocol.Messages;
import io.sluice.protocol.StatusException;
import io.sluice.protocol.proto.MapPartitionRef;
import io.sluice.protocol.proto.OpenMapStream;
import io.sluice.protocol.proto.RegionData;
import io.sluice.protocol.proto.RegionStart;
import io.sluice.protocol.proto.RegisterShuffle;
import io.sluice.protocol.proto.ServerAddress;
import io.sluice.protocol.proto.Status;
import io.sluice.server.ShuffleServer;
import io.sluice.server.read.MapReadScheduler;
import io.sluice.server.storage.CommittedMapPartition;
import io.sluice.testutil.TestCluster;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Map partitions end to end against real servers: regions, index, credits, IO order, errors. */
class MapPartitionIT {
  private static final String APP = TestCluster.APP_ID;
  private static final int BLOCK = 1000;

  @TempDir Path dir;
  private TestCluster cluster;
  private MapPartitionPlacement placement;
  private final List<InetSocketAddress> lost = Collections.synchronizedList(new ArrayList<>());

  @BeforeEach
  void start() throws IOException {
    cluster =
        TestCluster.start(
            dir,
            1,
            Map.of(
                "sluice.mapPartition.readBufferSize", "4k",
                "sluice.mapPartition.pushSize", "4k",
                "sluice.mapPartition.readCredits", "16",
                "sluice.shutdown.timeout", "2s", // a partition being written stops a stop 1 s
                // every block the writers of these tests send is verified on receipt
                "sluice.integrity.verifyOnPush", "true"));
    placement = new MapPartitionPlacement(cluster.context(), APP, servers(), lost::add);
  }

  @AfterEach
  void stop() {
    placement.close();
    cluster.close();
  }

  private List<InetSocketAddress> servers() {
    List<InetSocketAddress> list = new ArrayList<>();
    for (ServerAddress a : cluster.addresses()) {
      list.add(InetSocketAddress.createUnresolved(a.getHost(), a.getPort()));
    }
    return list;
  }

  private ShuffleServer server() {
    return cluster.server(0);
  }

  private static byte[] bytes(int region, int sub, int length) {
    StringBuilder b = new StringBuilder();
    int i = 0;
    while (b.length() < length) {
      b.append("r").append(region).append("s").append(sub).append("i").append(i++).append(';');
    }
    return b.substring(0, length).getBytes(StandardCharsets.US_ASCII);
  }

  /** What a reader got: data bytes and events per subpartition, in order. */
  private static final class Received {
    final Map<Integer, ByteArrayOutputStream> data = new HashMap<>();
    final Map<Integer, List<String>> events = new HashMap<>();
  }

  private Received readAll(MapPartitionId id, InetSocketAddress at, int start, int end)
      throws Exception {
    Semaphore available = new Semaphore(0);
    try (MapPartitionReader reader =
        MapPartitionReader.open(
            cluster.context(),
            id,
            at.getHostString(),
            at.getPort(),
            start,
            end,
            available::release)) {
      return drain(reader, available);
    }
  }

  private static Received drain(MapPartitionReader reader, Semaphore available) throws Exception {
    Received r = new Received();
    while (!reader.isFinished()) {
      MapPartitionReader.Block b = reader.poll();
      if (b == null) {
        available.tryAcquire(100, TimeUnit.MILLISECONDS);
        continue;
      }
      ByteBuffer target = ByteBuffer.allocate(b.length());
      b.readInto(target);
      String s = new String(target.array(), StandardCharsets.US_ASCII);
      if (b.isEvent()) {
        r.events.computeIfAbsent(b.subpartition(), k -> new ArrayList<>()).add(s);
      } else {
        r.data
            .computeIfAbsent(b.subpartition(), k -> new ByteArrayOutputStream())
            .write(target.array());
      }
    }
    return r;
  }

  @Test
  void regionsRoundTripThroughTheIndex() throws Exception {
    InetSocketAddress at = placement.place(3, 16, 16).get();
    MapPartitionId id = new MapPartitionId(APP, 3, 7, 0);
    int subs = 5;
    Map<Integer, ByteArrayOutputStream> expected = new HashMap<>();
    for (int s = 0; s < subs; s++) {
      expected.put(s, new ByteArrayOutputStream());
    }
    long[] expectedCounts = new long[subs];
    try (MapPartitionWriter w =
        MapPartitionWriter.open(
            cluster.context(), id, at.getHostString(), at.getPort(), subs, BLOCK)) {
      for (int region = 0; region < 3; region++) {
        w.startRegion(false);
        for (int s = 0; s < subs; s++) {
          if ((s + region) % 3 == 0) {
            continue; // some subpartitions have no data in some regions
          }
          byte[] data = bytes(region, s, 500 + 2500 * s + region);
          w.write(s, ByteBuffer.wrap(data));
          expected.get(s).write(data);
          expectedCounts[s] += data.length;
        }
        w.finishRegion();
      }
      w.startRegion(true);
      byte[] shared = bytes(9, 9, 3333);
      w.write(0, ByteBuffer.wrap(shared));
      w.writeEvent(0, ByteBuffer.wrap("end-of-data".getBytes(StandardCharsets.US_ASCII)));
      w.finishRegion();
      for (int s = 0; s < subs; s++) {
        expected.get(s).write(shared);
        expectedCounts[s] += shared.length;
      }
      assertThat(w.commit()).isPositive();
      assertThat(w.bytesPerSubpartition()).containsExactly(expectedCounts);
    }

    Received all = readAll(id, at, 0, subs - 1);
    for (int s = 0; s < subs; s++) {
      assertThat(all.data.get(s).toByteArray())
          .as("subpartition %d", s)
          .isEqualTo(expected.get(s).toByteArray());
      assertThat(all.events.get(s)).containsExactly("end-of-data");
    }
    Received one = readAll(id, at, 2, 2);
    assertThat(one.data.keySet()).containsExactly(2);
    assertThat(one.data.get(2).toByteArray()).isEqualTo(expected.get(2).toByteArray());
    Received middle = readAll(id, at, 1, 3);
    assertThat(middle.data.keySet()).containsExactlyInAnyOrder(1, 2, 3);
    assertThat(middle.data.get(3).toByteArray()).isEqualTo(expected.get(3).toByteArray());
    assertThat(cluster.memoryHeld()).isZero();
  }

  @Test
  void manyConsumersOfOneFileAreServedInOffsetOrder() throws Exception {
    InetSocketAddress at = placement.place(1, 16, 16).get();
    MapPartitionId id = new MapPartitionId(APP, 1, 0, 0);
    int subs = 16;
    int regions = 4;
    CommittedMapPartition file = writePartition(id, at, subs, regions);
    MapReadScheduler scheduler = server().mapStreams().scheduler(file.directory());
    List<Long> offsets = Collections.synchronizedList(new ArrayList<>());
    scheduler.setObserver((f, offset, length) -> offsets.add(offset));
    scheduler.pause();
    List<MapPartitionReader> readers = new ArrayList<>();
    List<Semaphore> signals = new ArrayList<>();
    try {
      for (int s = 0; s < subs; s++) {
        Semaphore signal = new Semaphore(0);
        signals.add(signal);
        readers.add(
            MapPartitionReader.open(
                cluster.context(), id, at.getHostString(), at.getPort(), s, s, signal::release));
      }
      // every consumer has granted a credit per buffer it needs (and one for the end) before the
      // disk is read at all
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (scheduler.waitingCredits() < subs * (regions + 1) && System.nanoTime() < deadline) {
        Thread.sleep(5);
      }
      assertThat(scheduler.waitingCredits()).isEqualTo(subs * (regions + 1));
      scheduler.resume();
      for (int s = 0; s < subs; s++) {
        Received r = drain(readers.get(s), signals.get(s));
        ByteArrayOutputStream expected = new ByteArrayOutputStream();
        for (int region = 0; region < regions; region++) {
          expected.write(bytes(region, s, 2500));
        }
        assertThat(r.data.get(s).toByteArray()).isEqualTo(expected.toByteArray());
      }
    } finally {
      scheduler.resume();
      scheduler.setObserver((f, offset, length) -> {});
      for (MapPartitionReader r : readers) {
        r.close();
      }
    }
    assertThat(offsets).hasSize(subs * regions);
    // one sweep through the file: every read starts after the one before
    assertThat(offsets).isSorted().doesNotHaveDuplicates();
    assertThat(server().metrics().mapReadsInOrder().getCount())
        .isEqualTo(server().metrics().mapReads().getCount());
  }

  @Test
  void aClosedReadersStreamIsGoneFromTheServerWhenClosedOnServerCompletes() throws Exception {
    InetSocketAddress at = placement.place(1, 4, 4).get();
    MapPartitionId id = new MapPartitionId(APP, 1, 0, 0);
    CommittedMapPartition file = writePartition(id, at, 4, 2);
    MapReadScheduler scheduler = server().mapStreams().scheduler(file.directory());
    scheduler.pause(); // the streams stay open: nothing is read, so none reaches its end
    try {
      for (int i = 0; i < 10; i++) {
        MapPartitionReader open =
            MapPartitionReader.open(
                cluster.context(), id, at.getHostString(), at.getPort(), 0, 3, () -> {});
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (server().streamQuota().openBy(APP) == 0 && System.nanoTime() < deadline) {
          Thread.sleep(1);
        }
        assertThat(server().streamQuota().openBy(APP)).isEqualTo(1);
        open.close();
        open.closedOnServer().get(30, TimeUnit.SECONDS);
        assertThat(server().streamQuota().openBy(APP)).as("open streams, round %d", i).isZero();

        // closed before the server answered the open: the stream it opens is closed after it
        MapPartitionReader opening =
            MapPartitionReader.open(
                cluster.context(), id, at.getHostString(), at.getPort(), 0, 3, () -> {});
        opening.close();
        opening.closedOnServer().get(30, TimeUnit.SECONDS);
        assertThat(server().streamQuota().openBy(APP))
            .as("open streams after a close during the open, round %d", i)
            .isZero();
      }
    } finally {
      scheduler.resume();
    }
  }

  /**
   * Writes one map partition of {@code subs} subpartitions, {@code regions} regions, 2500 B each.
   */
  private CommittedMapPartition writePartition(
      MapPartitionId id, InetSocketAddress at, int subs, int regions) throws Exception {
    try (MapPartitionWriter w =
        MapPartitionWriter.open(
            cluster.context(), id, at.getHostString(), at.getPort(), subs, BLOCK)) {
      for (int r = 0; r < regions; r++) {
        w.startRegion(false);
        for (int s = 0; s < subs; s++) {
          w.write(s, ByteBuffer.wrap(bytes(r, s, 2500)));
        }
        w.finishRegion();
      }
      w.commit();
    }
    return server()
        .registry()
        .get(id.appId(), id.shuffleId())
        .mapPartition(id.mapIndex(), id.attempt())
        .committed();
  }

  @Test
  void aSmallJobsReadTakesItsTurnBesideALargeJobsSweep() throws Exception {
    InetSocketAddress at = placement.place(1, 1, 8).get();
    MapPartitionId large = new MapPartitionId(APP, 1, 0, 0);
    CommittedMapPartition largeFile = writePartition(large, at, 8, 4);
    // the small job's partition, written after the large one's (later in the sweep), on the same
    // data directory (the server has two; new partitions go to the less busy one)
    String smallApp = "app-small";
    MapPartitionId small = null;
    // not closed here: closing unregisters the application (placement.close() ends the rest)
    MapPartitionPlacement smallPlacement =
        new MapPartitionPlacement(cluster.context(), smallApp, servers(), lost::add);
    smallPlacement.place(1, 4, 1).get();
    for (int map = 0; map < 4 && small == null; map++) {
      MapPartitionId candidate = new MapPartitionId(smallApp, 1, map, 0);
      if (writePartition(candidate, at, 1, 1).directory() == largeFile.directory()) {
        small = candidate;
      }
    }
    assertThat(small).as("a small partition on the large one's directory").isNotNull();
    MapReadScheduler scheduler = server().mapStreams().scheduler(largeFile.directory());
    List<String> order = Collections.synchronizedList(new ArrayList<>());
    scheduler.setObserver((f, offset, length) -> order.add(f.key().appId()));
    scheduler.pause();
    List<MapPartitionReader> readers = new ArrayList<>();
    List<Semaphore> signals = new ArrayList<>();
    try {
      for (int s = 0; s < 8; s++) {
        Semaphore signal = new Semaphore(0);
        signals.add(signal);
        readers.add(
            MapPartitionReader.open(
                cluster.context(), large, at.getHostString(), at.getPort(), s, s, signal::release));
      }
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (scheduler.waitingCredits() < 8 * 5 && System.nanoTime() < deadline) {
        Thread.sleep(5);
      }
      Semaphore smallSignal = new Semaphore(0);
      signals.add(smallSignal);
      readers.add(
          MapPartitionReader.open(
              cluster.context(),
              small,
              at.getHostString(),
              at.getPort(),
              0,
              0,
              smallSignal::release));
      while (scheduler.waitingCredits() < 8 * 5 + 2 && System.nanoTime() < deadline) {
        Thread.sleep(5);
      }
      assertThat(scheduler.waitingCredits()).isEqualTo(8 * 5 + 2);
      scheduler.resume();
      for (int i = 0; i < readers.size(); i++) {
        drain(readers.get(i), signals.get(i));
      }
    } finally {
      scheduler.resume();
      scheduler.setObserver((f, offset, length) -> {});
      for (MapPartitionReader r : readers) {
        r.close();
      }
    }
    smallPlacement.close();
    assertThat(order).hasSize(8 * 4 + 1);
    assertThat(order.indexOf(smallApp))
        .as("the small job's one read waits one read of the large job's 32, not all of them")
        .isLessThanOrEqualTo(1);
  }

  @Test
  void theServerAnnouncesItsBacklogAndSendsOneBufferPerCredit() throws Exception {
    InetSocketAddress at = placement.place(4, 16, 16).get();
    MapPartitionId id = new MapPartitionId(APP, 4, 0, 0);
    int regions = 3;
    try (MapPartitionWriter w =
        MapPartitionWriter.open(
            cluster.context(), id, at.getHostString(), at.getPort(), 2, BLOCK)) {
      for (int r = 0; r < regions; r++) {
        w.startRegion(false);
        // 6 incompressible blocks of 1024 bytes stored: two 4k read buffers per region
        byte[] data = new byte[6000];
        new java.util.Random(r).nextBytes(data);
        w.write(1, ByteBuffer.wrap(data));
        w.finishRegion();
      }
      w.commit();
    }
    // the index on disk: header, then per region one (offset, length) entry per subpartition
    CommittedMapPartition file = server().registry().get(APP, 4).mapPartition(0, 0).committed();
    ByteBuffer index =
        ByteBuffer.wrap(
            java.nio.file.Files.readAllBytes(file.dataPath().resolveSibling("map-0-0.index")));
    assertThat(index.getInt(0)).isEqualTo(0x534c4d49);
    assertThat(index.getInt(4)).isEqualTo(1);
    assertThat(index.getInt(8)).isEqualTo(2);
    assertThat(index.limit()).isEqualTo(16 + regions * 2 * 16);
    long regionLength = file.length() / regions;
    for (int r = 0; r < regions; r++) {
      int at0 = 16 + r * 32;
      assertThat(index.getLong(at0 + 8)).as("no data of subpartition 0").isZero();
      assertThat(index.getLong(at0 + 16)).isEqualTo(r * regionLength);
      assertThat(index.getLong(at0 + 24)).isEqualTo(regionLength);
    }

    ClientContext context = cluster.context();
    io.sluice.network.TransportClient connection =
        context.connection(null, ClientContext.address(at.getHostString(), at.getPort()));
    MapPartitionRef ref =
        MapPartitionRef.newBuilder()
            .setAppId(APP)
            .setShuffleId(4)
            .setMapIndex(0)
            .setAttempt(0)
            .build();
    io.sluice.network.Message opened =
        context
            .callAsync(
                connection,
                rid ->
                    Messages.request(
                        MessageType.OPEN_MAP_STREAM,
                        OpenMapStream.newBuilder()
                            .setRequestId(rid)
                            .setPartition(ref)
                            .setStartSubpartition(0)
                            .setEndSubpartition(1)
                            .build(),
                        rid))
            .get(10, TimeUnit.SECONDS);
    opened.release();
    io.sluice.protocol.proto.MapStreamOpened stream =
        opened.header(io.sluice.protocol.proto.Response.class).getMapStream();
    long backlog = stream.getBacklog();
    assertThat(backlog).isEqualTo(2L * regions);
    int buffers = 0;
    while (true) {
      io.sluice.network.Message m =
          context
              .callAsync(
                  connection,
                  rid ->
                      Messages.request(
                          MessageType.READ_MAP_BUFFER,
                          io.sluice.protocol.proto.ReadMapBuffer.newBuilder()
                              .setRequestId(rid)
                              .setStreamId(stream.getStreamId())
                              .build(),
                          rid))
              .get(10, TimeUnit.SECONDS);
      io.sluice.protocol.proto.MapBuffer b =
          m.header(io.sluice.protocol.proto.Response.class).getMapBuffer();
      int length = m.body().readableBytes();
      m.release();
      if (b.getEndOfStream()) {
        assertThat(length).isZero();
        break;
      }
      buffers++;
      assertThat(length).isBetween(1, 4096);
      assertThat(b.getSubpartition()).isEqualTo(1);
      assertThat(b.getBacklog())
          .as("backlog after buffer %d", buffers)
          .isEqualTo(backlog - buffers);
    }
    assertThat(buffers).isEqualTo(2 * regions);
    assertThat(cluster.memoryHeld()).isZero();
  }

  @Test
  void aFrameAfterARefusedOneIsRefusedTooSoFramesAreStoredInOrder() throws Exception {
    ClientContext context = cluster.context();
    ServerAddress server = cluster.addresses().get(0);
    io.sluice.network.TransportClient connection = context.connection(null, server);
    context.call(
        null,
        server,
        rid ->
            Messages.request(
                MessageType.REGISTER_SHUFFLE,
                RegisterShuffle.newBuilder()
                    .setRequestId(rid)
                    .setAppId(APP)
                    .setShuffleId(9)
                    .setNumMaps(16)
                    .setNumPartitions(1024)
                    .build(),
                rid));
    MapPartitionRef ref =
        MapPartitionRef.newBuilder()
            .setAppId(APP)
            .setShuffleId(9)
            .setMapIndex(0)
            .setAttempt(0)
            .build();
    call(
        connection,
        rid ->
            Messages.request(
                MessageType.REGION_START,
                RegionStart.newBuilder()
                    .setRequestId(rid)
                    .setPartition(ref)
                    .setNumSubpartitions(2)
                    .setRegionIndex(0)
                    .build(),
                rid));
    // frame 1 arrives while frame 0 is missing (refused and not yet sent again): refused too
    Throwable early = catchThrowable(() -> call(connection, frame(ref, 1, 1, "second")));
    assertThat(early).hasCauseInstanceOf(StatusException.class);
    assertThat(((StatusException) early.getCause()).status()).isEqualTo(Status.CONGESTED);
    call(connection, frame(ref, 0, 0, "first"));
    call(connection, frame(ref, 1, 1, "second"));
    // a frame sent twice is refused naming it
    Throwable twice = catchThrowable(() -> call(connection, frame(ref, 1, 1, "again")));
    assertThat(((StatusException) twice.getCause()).status()).isEqualTo(Status.BAD_REQUEST);
    assertThat(twice.getCause()).hasMessageContaining("frame 1").hasMessageContaining("already");
    call(
        connection,
        rid ->
            Messages.request(
                MessageType.REGION_FINISH,
                io.sluice.protocol.proto.RegionFinish.newBuilder()
                    .setRequestId(rid)
                    .setPartition(ref)
                    .setRegionIndex(0)
                    .build(),
                rid));
    call(
        connection,
        rid ->
            Messages.request(
                MessageType.COMMIT_MAP_PARTITION,
                io.sluice.protocol.proto.CommitMapPartition.newBuilder()
                    .setRequestId(rid)
                    .setPartition(ref)
                    .setNumRegions(1)
                    .build(),
                rid));
    Received r =
        readAll(
            new MapPartitionId(APP, 9, 0, 0),
            InetSocketAddress.createUnresolved(server.getHost(), server.getPort()),
            0,
            1);
    assertThat(new String(r.data.get(0).toByteArray(), StandardCharsets.US_ASCII))
        .isEqualTo("first");
    assertThat(new String(r.data.get(1).toByteArray(), StandardCharsets.US_ASCII))
        .isEqualTo("second");
    assertThat(cluster.memoryHeld()).isZero();
  }

  /** A region data frame of one raw block. */
  private static java.util.function.LongFunction<io.sluice.network.Message> frame(
      MapPartitionRef ref, int sequence, int subpartition, String text) {
    byte[] data = text.getBytes(StandardCharsets.US_ASCII);
    return rid -> {
      io.netty.buffer.ByteBuf body = Unpooled.buffer();
      MapBlockFormat.writeHeader(
          body, subpartition, MapBlockFormat.KIND_DATA, data.length, data.length);
      body.writeBytes(data);
      MapBlockFormat.seal(body, 0);
      return Messages.request(
          MessageType.REGION_DATA,
          RegionData.newBuilder()
              .setRequestId(rid)
              .setPartition(ref)
              .setRegionIndex(0)
              .setSequence(sequence)
              .build(),
          rid,
          body);
    };
  }

  private void call(
      io.sluice.network.TransportClient connection,
      java.util.function.LongFunction<io.sluice.network.Message> request)
      throws Exception {
    cluster.context().callAsync(connection, request).get(10, TimeUnit.SECONDS).release();
  }

  @Test
  void malformedRequestsAreRefusedNamingTheProblemAndTheServerKeepsServing() throws Exception {
    ClientContext context = cluster.context();
    ServerAddress server = cluster.addresses().get(0);
    context.call(
        null,
        server,
        rid ->
            Messages.request(
                MessageType.REGISTER_SHUFFLE,
                RegisterShuffle.newBuilder()
                    .setRequestId(rid)
                    .setAppId(APP)
                    .setShuffleId(5)
                    .setNumMaps(16)
                    .setNumPartitions(1024)
                    .build(),
                rid));
    MapPartitionRef ref =
        MapPartitionRef.newBuilder()
            .setAppId(APP)
            .setShuffleId(5)
            .setMapIndex(0)
            .setAttempt(0)
            .build();
    // a later region before region 0
    assertThatThrownBy(
            () ->
                context.call(
                    null,
                    server,
                    rid ->
                        Messages.request(
                            MessageType.REGION_START,
                            RegionStart.newBuilder()
                                .setRequestId(rid)
                                .setPartition(ref)
                                .setNumSubpartitions(4)
                                .setRegionIndex(2)
                                .build(),
                            rid)))
        .isInstanceOf(StatusException.class)
        .hasMessageContaining("region 2");
    context.call(
        null,
        server,
        rid ->
            Messages.request(
                MessageType.REGION_START,
                RegionStart.newBuilder()
                    .setRequestId(rid)
                    .setPartition(ref)
                    .setNumSubpartitions(4)
                    .setRegionIndex(0)
                    .build(),
                rid));
    // a block naming a subpartition the partition does not have
    StatusException bad =
        (StatusException)
            catchThrowable(
                () ->
                    context.call(
                        null,
                        server,
                        rid -> {
                          io.netty.buffer.ByteBuf body = Unpooled.buffer();
                          MapBlockFormat.writeHeader(body, 9, MapBlockFormat.KIND_DATA, 3, 3);
                          body.writeBytes(new byte[] {1, 2, 3});
                          return Messages.request(
                              MessageType.REGION_DATA,
                              RegionData.newBuilder()
                                  .setRequestId(rid)
                                  .setPartition(ref)
                                  .setRegionIndex(0)
                                  .build(),
                              rid,
                              body);
                        }));
    assertThat(bad.status()).isEqualTo(Status.BAD_REQUEST);
    assertThat(bad.getMessage()).contains("subpartition 9").contains("map 0 attempt 0");
    // reading a partition that was never committed
    StatusException missing =
        (StatusException)
            catchThrowable(
                () ->
                    context.call(
                        null,
                        server,
                        rid ->
                            Messages.request(
                                MessageType.OPEN_MAP_STREAM,
                                OpenMapStream.newBuilder()
                                    .setRequestId(rid)
                                    .setPartition(ref.toBuilder().setMapIndex(3))
                                    .build(),
                                rid)));
    assertThat(missing.status()).isEqualTo(Status.NOT_FOUND);
    assertThat(missing.getMessage()).contains("map 3 attempt 0");
    // nothing refused is held, and an open region without data holds nothing
    assertThat(cluster.memoryHeld()).isZero();

    // the server still serves a good partition
    InetSocketAddress at = placement.place(6, 16, 16).get();
    MapPartitionId id = new MapPartitionId(APP, 6, 0, 0);
    try (MapPartitionWriter w =
        MapPartitionWriter.open(context, id, at.getHostString(), at.getPort(), 2, BLOCK)) {
      w.startRegion(false);
      w.write(1, ByteBuffer.wrap(bytes(0, 1, 100)));
      w.finishRegion();
      w.commit();
    }
    assertThat(readAll(id, at, 0, 1).data.get(1).toByteArray()).isEqualTo(bytes(0, 1, 100));
  }

  private static Throwable catchThrowable(org.assertj.core.api.ThrowableAssert.ThrowingCallable c) {
    return org.assertj.core.api.Assertions.catchThrowable(c);
  }

  @Test
  void readingAReleasedPartitionFailsNamingIt() throws Exception {
    InetSocketAddress at = placement.place(2, 16, 16).get();
    MapPartitionId id = new MapPartitionId(APP, 2, 4, 1);
    try (MapPartitionWriter w =
        MapPartitionWriter.open(
            cluster.context(), id, at.getHostString(), at.getPort(), 1, BLOCK)) {
      w.startRegion(false);
      w.write(0, ByteBuffer.wrap(bytes(0, 0, 5000)));
      w.finishRegion();
      w.commit();
    }
    placement.release(id, at);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (server().registry().get(APP, 2).mapPartition(4, 1) != null
        && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    assertThatThrownBy(() -> readAll(id, at, 0, 0))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("map 4 attempt 1")
        .hasMessageContaining(at.getHostString());
  }

  @Test
  void committedPartitionsAreServedAgainAfterARestartAndReleasedOnesAreNot() throws Exception {
    InetSocketAddress at = placement.place(8, 16, 16).get();
    MapPartitionId kept = new MapPartitionId(APP, 8, 0, 0);
    MapPartitionId released = new MapPartitionId(APP, 8, 1, 0);
    MapPartitionId damaged = new MapPartitionId(APP, 8, 3, 0);
    for (MapPartitionId id : List.of(kept, released, damaged)) {
      try (MapPartitionWriter w =
          MapPartitionWriter.open(
              cluster.context(), id, at.getHostString(), at.getPort(), 3, BLOCK)) {
        w.startRegion(false);
        for (int s = 0; s < 3; s++) {
          w.write(s, ByteBuffer.wrap(bytes(id.mapIndex(), s, 7000)));
        }
        w.finishRegion();
        w.commit();
      }
    }
    placement.release(released, at);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (server().registry().get(APP, 8).mapPartition(1, 0) != null
        && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    // a partition still being written when the server stops is dropped
    MapPartitionWriter open =
        MapPartitionWriter.open(
            cluster.context(),
            new MapPartitionId(APP, 8, 2, 0),
            at.getHostString(),
            at.getPort(),
            3,
            BLOCK);
    open.startRegion(false);
    open.write(0, ByteBuffer.wrap(bytes(2, 0, 100)));
    open.finishRegion();

    // a committed partition whose index file is gone when the server starts again is dropped
    CommittedMapPartition lostIndex =
        server().registry().get(APP, 8).mapPartition(3, 0).committed();
    java.nio.file.Files.delete(lostIndex.indexPath());

    cluster.restartServer(0);
    open.close();
    assertThat(server().recovery().mapPartitions()).isEqualTo(1);
    assertThat(server().recovery().droppedMapPartitions()).isEqualTo(1);
    assertThat(lostIndex.dataPath()).doesNotExist();
    Received r = readAll(kept, at, 0, 2);
    for (int s = 0; s < 3; s++) {
      assertThat(r.data.get(s).toByteArray()).isEqualTo(bytes(0, s, 7000));
    }
    assertThatThrownBy(() -> readAll(released, at, 0, 2))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("map 1 attempt 0");
    assertThat(server().registry().get(APP, 8).mapPartition(2, 0)).isNull();
  }

  /** Reported lost once not back within sluice.client.serverRestartWait (2s), as a restart is. */
  @Test
  void aStoppedServerIsNotPlacedOnAndIsReportedLostWhenItDoesNotComeBack() throws Exception {
    InetSocketAddress at = placement.place(1, 16, 16).get();
    server().close();
    assertThatThrownBy(() -> placement.place(1, 16, 16).get())
        .hasMessageContaining("no Sluice server");
    assertThat(lost).as("reported before the restart wait passed").isEmpty();
    for (long end = System.nanoTime() + (long) 30e9; lost.isEmpty() && System.nanoTime() < end; ) {
      Thread.sleep(50);
    }
    assertThat(lost).containsExactly(at);
  }
}
