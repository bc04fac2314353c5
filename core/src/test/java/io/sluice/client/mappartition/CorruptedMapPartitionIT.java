package io.sluice.client.mappartition;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sluice.client.ClientContext;
import io.sluice.network.Message;
import io.sluice.network.TransportClient;
import io.sluice.protocol.MapBlockFormat;
import io.sluice.protocol.MapPartitionId;
import io.sluice.protocol.MessageType;
import io.sluice.protocol.Messages;
import io.sluice.protocol.StatusException;
import io.sluice.protocol.proto.MapPartitionRef;
import io.sluice.protocol.proto.RegionData;
import io.sluice.protocol.proto.RegionStart;
import io.sluice.protocol.proto.RegisterShuffle;
import io.sluice.protocol.proto.ServerAddress;
import io.sluice.protocol.proto.Status;
import io.sluice.server.ShuffleServer;
import io.sluice.server.storage.DataDirectory;
import io.sluice.testutil.TestCluster;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.LongFunction;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Map partition blocks are checked end to end: a byte changed in a committed data file fails the
 * reader of that block naming the server, the partition and the offset; with {@code
 * sluice.integrity.verifyOnPush} a corrupt block is refused on receipt.
 */
class CorruptedMapPartitionIT {
  private static final String APP = TestCluster.APP_ID;
  private static final int BLOCK = 1000;

  @TempDir Path dir;
  private TestCluster cluster;
  private MapPartitionPlacement placement;

  @BeforeEach
  void start() throws IOException {
    cluster =
        TestCluster.start(
            dir,
            1,
            Map.of(
                "sluice.mapPartition.readBufferSize", "4k",
                "sluice.mapPartition.pushSize", "4k",
                "sluice.integrity.verifyOnPush", "true"));
    List<InetSocketAddress> servers = new ArrayList<>();
    for (ServerAddress a : cluster.addresses()) {
      servers.add(InetSocketAddress.createUnresolved(a.getHost(), a.getPort()));
    }
    placement = new MapPartitionPlacement(cluster.context(), APP, servers, lost -> {});
  }

  @AfterEach
  void stop() {
    placement.close();
    cluster.close();
  }

  private ShuffleServer server() {
    return cluster.server(0);
  }

  private static byte[] bytes(int sub, int length) {
    StringBuilder b = new StringBuilder();
    int i = 0;
    while (b.length() < length) {
      b.append("s").append(sub).append("i").append(i++).append(';');
    }
    return b.substring(0, length).getBytes(StandardCharsets.US_ASCII);
  }

  private void call(TransportClient connection, LongFunction<Message> request) throws Exception {
    cluster.context().callAsync(connection, request).get(10, TimeUnit.SECONDS).release();
  }

  /** A region data frame of one raw block, sealed with its checksum. */
  private static LongFunction<Message> frame(
      MapPartitionRef ref, int sequence, int subpartition, String text) {
    byte[] data = text.getBytes(StandardCharsets.US_ASCII);
    return rid -> {
      ByteBuf body = Unpooled.buffer();
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

  @Test
  void aCorruptBlockIsRefusedOnReceiptWhenTheServerVerifiesOnPush() throws Exception {
    ClientContext context = cluster.context();
    ServerAddress server = cluster.addresses().get(0);
    TransportClient connection = context.connection(null, server);
    context.call(
        null,
        server,
        rid ->
            Messages.request(
                MessageType.REGISTER_SHUFFLE,
                RegisterShuffle.newBuilder()
                    .setRequestId(rid)
                    .setAppId(APP)
                    .setShuffleId(11)
                    .setNumMaps(4)
                    .setNumPartitions(4)
                    .build(),
                rid));
    MapPartitionRef ref =
        MapPartitionRef.newBuilder()
            .setAppId(APP)
            .setShuffleId(11)
            .setMapIndex(2)
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
    call(connection, frame(ref, 0, 0, "intact"));
    byte[] data = "changed on the way".getBytes(StandardCharsets.US_ASCII);
    Throwable refused =
        catchThrowable(
            () ->
                call(
                    connection,
                    rid -> {
                      ByteBuf body = Unpooled.buffer();
                      MapBlockFormat.writeHeader(
                          body, 1, MapBlockFormat.KIND_DATA, data.length, data.length);
                      body.writeBytes(data);
                      MapBlockFormat.seal(body, 0);
                      body.setByte(MapBlockFormat.HEADER_SIZE + 3, 'X');
                      return Messages.request(
                          MessageType.REGION_DATA,
                          RegionData.newBuilder()
                              .setRequestId(rid)
                              .setPartition(ref)
                              .setRegionIndex(0)
                              .setSequence(1)
                              .build(),
                          rid,
                          body);
                    }));
    assertThat(((StatusException) refused.getCause()).status()).isEqualTo(Status.BAD_REQUEST);
    assertThat(refused.getCause())
        .hasMessageContaining("map 2 attempt 0")
        .hasMessageContaining("block 0 (subpartition 1, at byte 0 of the frame)")
        .hasMessageContaining("CRC32C")
        .hasMessageContaining("sluice.integrity.verifyOnPush");
    assertThat(server().metrics().checksumFailures().getCount()).isEqualTo(1);
  }

  /**
   * A byte changed in a committed map partition's data file fails the reader of that block, naming
   * the server, the partition and the block's offset in the file; the blocks before it come out
   * intact.
   */
  @Test
  void aFlippedByteInACommittedPartitionFailsItsReaderNamingServerPartitionAndOffset()
      throws Exception {
    InetSocketAddress at = placement.place(12, 16, 16).get();
    MapPartitionId id = new MapPartitionId(APP, 12, 3, 1);
    byte[] first = bytes(0, 3 * BLOCK);
    byte[] second = bytes(1, 3 * BLOCK);
    try (MapPartitionWriter w =
        MapPartitionWriter.open(
            cluster.context(), id, at.getHostString(), at.getPort(), 2, BLOCK)) {
      w.startRegion(false);
      w.write(0, ByteBuffer.wrap(first));
      w.write(1, ByteBuffer.wrap(second));
      w.finishRegion();
      w.commit();
    }
    Path file;
    try (Stream<Path> files = Files.walk(dir)) {
      file =
          files
              .filter(p -> p.getFileName().toString().equals("map-3-1.data"))
              .findFirst()
              .orElseThrow();
    }
    byte[] original = Files.readAllBytes(file);
    // the fifth block (the second of subpartition 1): its offset is that of four whole blocks
    ByteBuf blocks = Unpooled.wrappedBuffer(original);
    int offset = 0;
    for (int b = 0; b < 4; b++) {
      offset += MapBlockFormat.HEADER_SIZE + MapBlockFormat.length(blocks, offset);
    }
    assertThat(MapBlockFormat.subpartition(blocks, offset)).isEqualTo(1);
    byte[] corrupt = original.clone();
    corrupt[offset + MapBlockFormat.HEADER_SIZE + 10] ^= 0x20;
    Files.write(file, corrupt);

    Semaphore available = new Semaphore(0);
    ByteArrayOutputStream read = new ByteArrayOutputStream();
    Throwable failure;
    try (MapPartitionReader reader =
        MapPartitionReader.open(
            cluster.context(), id, at.getHostString(), at.getPort(), 0, 1, available::release)) {
      failure =
          catchThrowable(
              () -> {
                while (!reader.isFinished()) {
                  MapPartitionReader.Block b = reader.poll();
                  if (b == null) {
                    available.tryAcquire(100, TimeUnit.MILLISECONDS);
                    continue;
                  }
                  ByteBuffer target = ByteBuffer.allocate(b.length());
                  b.readInto(target);
                  read.write(target.array());
                }
              });
      assertThat(catchThrowable(reader::poll)).isInstanceOf(IOException.class);
    }

    assertThat(failure)
        .isInstanceOf(IOException.class)
        .hasMessageContaining(id.toString())
        .hasMessageContaining(ClientContext.format(cluster.addresses().get(0)))
        .hasMessageContaining(
            "subpartition 1 at byte offset "
                + offset
                + " of its data file "
                + APP
                + "/12/map-3-1.data")
        .hasMessageContaining("CRC32C")
        .hasMessageContaining("expected 0x")
        .hasMessageContaining("actual 0x");
    // everything before the corrupt block, nothing of it
    ByteArrayOutputStream before = new ByteArrayOutputStream();
    before.write(first);
    before.write(second, 0, BLOCK);
    assertThat(read.toByteArray()).isEqualTo(before.toByteArray());
  }

  /**
   * A reader that fails on its side (here a block whose checksum does not match, while the server
   * has much more of the stream to send) closes its stream on the server all the same: {@link
   * MapPartitionReader#closedOnServer} completes only once the server let it go, so a task that
   * waits for it does not find its streams still counted against {@code sluice.app.maxOpenStreams}.
   */
  @Test
  void aReaderFailingOnItsSideClosesItsStreamOnTheServer() throws Exception {
    InetSocketAddress at = placement.place(17, 16, 16).get();
    MapPartitionId id = new MapPartitionId(APP, 17, 3, 1);
    try (MapPartitionWriter w =
        MapPartitionWriter.open(
            cluster.context(), id, at.getHostString(), at.getPort(), 2, BLOCK)) {
      w.startRegion(false);
      w.write(0, ByteBuffer.wrap(bytes(0, 200 * BLOCK)));
      w.write(1, ByteBuffer.wrap(bytes(1, 200 * BLOCK)));
      w.finishRegion();
      w.commit();
    }
    Path file;
    try (Stream<Path> files = Files.walk(dir)) {
      file =
          files
              .filter(p -> p.getFileName().toString().equals("map-3-1.data"))
              .filter(p -> p.getParent().getFileName().toString().equals("17"))
              .findFirst()
              .orElseThrow();
    }
    byte[] bytes = Files.readAllBytes(file);
    bytes[MapBlockFormat.HEADER_SIZE + 10] ^= 0x20; // in the first block
    Files.write(file, bytes);

    Semaphore available = new Semaphore(0);
    MapPartitionReader reader =
        MapPartitionReader.open(
            cluster.context(), id, at.getHostString(), at.getPort(), 0, 1, available::release);
    Throwable failure;
    try {
      failure =
          catchThrowable(
              () -> {
                while (!reader.isFinished()) {
                  if (reader.poll() == null) {
                    available.tryAcquire(100, TimeUnit.MILLISECONDS);
                  }
                }
              });
      assertThat(server().openStreamCount()).as("the stream, still open on the server").isOne();
    } finally {
      reader.close();
    }
    assertThat(failure).isInstanceOf(IOException.class).hasMessageContaining("CRC32C");
    reader.closedOnServer().get(30, TimeUnit.SECONDS);
    assertThat(server().openStreamCount()).as("streams open on the server").isZero();
  }

  /**
   * Commits map 3 attempt 1 of shuffle {@code shuffle}: one region, three blocks of each of two
   * subpartitions.
   *
   * @return its data file
   */
  private Path writeTwoSubpartitions(MapPartitionId id, InetSocketAddress at) throws Exception {
    try (MapPartitionWriter w =
        MapPartitionWriter.open(
            cluster.context(), id, at.getHostString(), at.getPort(), 2, BLOCK)) {
      w.startRegion(false);
      w.write(0, ByteBuffer.wrap(bytes(0, 3 * BLOCK)));
      w.write(1, ByteBuffer.wrap(bytes(1, 3 * BLOCK)));
      w.finishRegion();
      w.commit();
    }
    try (Stream<Path> files = Files.walk(dir)) {
      return files
          .filter(p -> p.getFileName().toString().equals("map-3-1.data"))
          .filter(p -> p.getParent().getFileName().toString().equals("" + id.shuffleId()))
          .findFirst()
          .orElseThrow();
    }
  }

  /**
   * A block header whose length field claims more than its segment holds (and more than a read
   * buffer) fails the read on the server, which names the data file, the block's offset and what
   * the header claims. The server used to release the read buffer twice on that path, so the reader
   * got "refCnt: 0, decrement: 1" instead.
   */
  @Test
  void aBlockLengthPastItsSegmentFailsTheReadNamingTheFileAndOffset() throws Exception {
    InetSocketAddress at = placement.place(14, 16, 16).get();
    MapPartitionId id = new MapPartitionId(APP, 14, 3, 1);
    Path file = writeTwoSubpartitions(id, at);
    byte[] bytes = Files.readAllBytes(file);
    ByteBuf blocks = Unpooled.wrappedBuffer(bytes);
    // the first block (subpartition 0) claims 5000 payload bytes: more than the 4k read buffer
    // and than the three blocks of its segment
    blocks.setInt(MapBlockFormat.LENGTH_OFFSET, 5000);
    Files.write(file, bytes);

    Throwable failure = readAll(cluster, id, at, new ByteArrayOutputStream());

    assertThat(failure)
        .isInstanceOf(IOException.class)
        .hasMessageContaining(id.toString())
        .hasMessageContaining("the block at byte offset 0 of " + file)
        .hasMessageContaining("claims 5000 payload bytes")
        .hasMessageNotContaining("refCnt");
  }

  /**
   * A data file truncated on disk inside a block fails the read of the segment that reaches past
   * its end, naming the file, where it ends and the length its commit recorded.
   */
  @Test
  void aTruncatedDataFileFailsTheReadNamingTheFile() throws Exception {
    InetSocketAddress at = placement.place(15, 16, 16).get();
    MapPartitionId id = new MapPartitionId(APP, 15, 3, 1);
    Path file = writeTwoSubpartitions(id, at);
    long committed = Files.size(file);
    long size = committed - BLOCK / 2; // inside the last block's payload
    try (java.nio.channels.FileChannel ch =
        java.nio.channels.FileChannel.open(file, java.nio.file.StandardOpenOption.WRITE)) {
      ch.truncate(size);
    }

    Throwable failure = readAll(cluster, id, at, new ByteArrayOutputStream());

    assertThat(failure)
        .isInstanceOf(IOException.class)
        .hasMessageContaining(id.toString())
        .hasMessageContaining(
            "its data file "
                + file
                + " ends at byte offset "
                + size
                + ", but its commit recorded "
                + committed
                + " bytes")
        .hasMessageContaining("truncated");
  }

  /**
   * A compressed block whose LZ4 stream claims more bytes than the block holds, sealed with a valid
   * checksum (as a faulty writer would store it), fails its reader naming the file and offset. The
   * decompressor must stay inside the block: the one used before read on past its end, into the
   * blocks that follow (or, in pure Java, failed with an IndexOutOfBoundsException).
   */
  @Test
  void anLz4StreamLongerThanItsBlockFailsTheReadNamingTheOffset() throws Exception {
    InetSocketAddress at = placement.place(16, 16, 16).get();
    MapPartitionId id = new MapPartitionId(APP, 16, 3, 1);
    Path file = writeTwoSubpartitions(id, at);
    byte[] bytes = Files.readAllBytes(file);
    ByteBuf blocks = Unpooled.wrappedBuffer(bytes);
    assertThat(MapBlockFormat.kind(blocks, 0)).isEqualTo(MapBlockFormat.KIND_DATA_LZ4);
    int length = MapBlockFormat.length(blocks, 0);
    int raw = MapBlockFormat.uncompressedLength(blocks, 0);
    // one literal run of the whole raw length (a token of 15 literals, then 255s and the rest),
    // of which only the block's length is there
    int at0 = MapBlockFormat.HEADER_SIZE;
    blocks.setByte(at0++, 0xF0);
    int more = raw - 15;
    for (; more >= 255; more -= 255) {
      blocks.setByte(at0++, 255);
    }
    blocks.setByte(at0, more);
    MapBlockFormat.seal(blocks, 0);
    assertThat(length).isLessThan(raw);
    Files.write(file, bytes);

    ByteArrayOutputStream read = new ByteArrayOutputStream();
    Throwable failure = readAll(cluster, id, at, read);

    assertThat(failure)
        .isInstanceOf(IOException.class)
        .hasMessageContaining(id.toString())
        .hasMessageContaining("subpartition 0 at byte offset 0 of its data file")
        .hasMessageContaining("does not decompress");
    assertThat(read.size()).as("bytes read of the block").isZero();
  }

  /** Reads subpartitions [0, 1] until the end or a failure; returns the failure or null. */
  private static Throwable readAll(
      TestCluster cluster, MapPartitionId id, InetSocketAddress at, ByteArrayOutputStream read)
      throws Exception {
    Semaphore available = new Semaphore(0);
    try (MapPartitionReader reader =
        MapPartitionReader.open(
            cluster.context(), id, at.getHostString(), at.getPort(), 0, 1, available::release)) {
      return catchThrowable(
          () -> {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!reader.isFinished()) {
              assertThat(System.nanoTime()).as("the read ends in time").isLessThan(deadline);
              MapPartitionReader.Block b = reader.poll();
              if (b == null) {
                available.tryAcquire(100, TimeUnit.MILLISECONDS);
                continue;
              }
              ByteBuffer target = ByteBuffer.allocate(b.length());
              b.readInto(target);
              read.write(target.array());
            }
          });
    }
  }

  /**
   * A block replaced by a copy of another block of its subpartition (same size, so the index stays
   * valid; every block still passes its CRC32C) fails the reader at the end of its stream: what it
   * read of the subpartition differs from what the writer reported at commit. Before integrity
   * records the copy was read as data.
   */
  @Test
  void aBlockReplacedByAnotherIntactOneFailsItsReaderAtTheEnd() throws Exception {
    // uncompressed, so that blocks of a subpartition have the same size
    try (TestCluster plain =
            TestCluster.start(
                dir.resolve("plain"),
                1,
                Map.of(
                    "sluice.push.compression", "none",
                    "sluice.mapPartition.readBufferSize", "4k",
                    "sluice.mapPartition.pushSize", "4k"));
        MapPartitionPlacement places =
            new MapPartitionPlacement(
                plain.context(),
                APP,
                List.of(
                    InetSocketAddress.createUnresolved(
                        plain.addresses().get(0).getHost(), plain.addresses().get(0).getPort())),
                lost -> {})) {
      replacedBlock(plain, places);
    }
  }

  private void replacedBlock(TestCluster cluster, MapPartitionPlacement placement)
      throws Exception {
    InetSocketAddress at = placement.place(13, 16, 16).get();
    MapPartitionId id = new MapPartitionId(APP, 13, 3, 1);
    byte[] first = bytes(0, 3 * BLOCK);
    byte[] second = bytes(1, 3 * BLOCK);
    try (MapPartitionWriter w =
        MapPartitionWriter.open(
            cluster.context(), id, at.getHostString(), at.getPort(), 2, BLOCK)) {
      w.startRegion(false);
      w.write(0, ByteBuffer.wrap(first));
      w.write(1, ByteBuffer.wrap(second));
      w.finishRegion();
      w.startRegion(true);
      w.write(0, ByteBuffer.wrap(bytes(2, BLOCK)));
      w.finishRegion();
      w.commit();
    }
    ByteArrayOutputStream intact = new ByteArrayOutputStream();
    assertThat(readAll(cluster, id, at, intact)).isNull();
    assertThat(intact.size()).isEqualTo(6 * BLOCK + 2 * BLOCK);

    Path file;
    try (Stream<Path> files = Files.walk(cluster.root())) {
      file =
          files
              .filter(p -> p.getFileName().toString().equals("map-3-1.data"))
              .findFirst()
              .orElseThrow();
    }
    byte[] bytes = Files.readAllBytes(file);
    ByteBuf blocks = Unpooled.wrappedBuffer(bytes);
    int[] offsets = new int[6];
    for (int b = 1; b < 6; b++) {
      offsets[b] =
          offsets[b - 1]
              + MapBlockFormat.HEADER_SIZE
              + MapBlockFormat.length(blocks, offsets[b - 1]);
    }
    // the fifth block (subpartition 1) becomes a copy of the fourth
    assertThat(MapBlockFormat.subpartition(blocks, offsets[4])).isEqualTo(1);
    System.arraycopy(bytes, offsets[3], bytes, offsets[4], MapBlockFormat.HEADER_SIZE + BLOCK);
    Files.write(file, bytes);

    Throwable failure = readAll(cluster, id, at, new ByteArrayOutputStream());

    assertThat(failure)
        .isInstanceOf(IOException.class)
        .hasMessageContaining(id.toString())
        .hasMessageContaining(ClientContext.format(cluster.addresses().get(0)))
        .hasMessageContaining("subpartition 1 of its data file " + APP + "/13/map-3-1.data")
        .hasMessageContaining("written as 4 blocks")
        .hasMessageContaining("the reader got 4 blocks")
        .hasMessageContaining("checksum");
    // the reader told the server, which counts it against the file's directory
    DataDirectory directory = cluster.server(0).dataDirectories().directoryOf(file);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (directory.checksumFailures() == 0 && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertThat(directory.checksumFailures()).isEqualTo(1);
  }
}
