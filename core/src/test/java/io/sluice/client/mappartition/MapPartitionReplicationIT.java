package io.sluice.client.mappartition;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sluice.client.ClientContext;
import io.sluice.protocol.MapBlockFormat;
import io.sluice.protocol.MapPartitionId;
import io.sluice.protocol.proto.ServerAddress;
import io.sluice.server.ShuffleServer;
import io.sluice.testutil.BlackHoleProxy;
import io.sluice.testutil.TestCluster;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Map partitions with two copies ({@link ReplicatedMapPartitionWriter}, {@link
 * ReplicatedMapPartitionReader}): three servers, each behind a proxy whose close cuts it off as a
 * crash would (connections reset, new ones refused). One server lost while the partition is
 * written, before its commit, after it, or in the middle of a read, or a corrupt block in the
 * primary's file, costs nothing: every subpartition is read whole, once. With one copy the same
 * loss fails the read (the engine reruns the producer).
 */
class MapPartitionReplicationIT {
  private static final String APP = TestCluster.APP_ID;
  private static final int BLOCK = 1000;
  private static final int SUBPARTITIONS = 4;

  @TempDir Path dir;
  private TestCluster cluster;
  private final List<BlackHoleProxy> proxies = new ArrayList<>();
  private MapPartitionPlacement placement;
  // the server the last read ended on
  private ServerAddress readFrom;

  @BeforeEach
  void start() throws IOException {
    cluster =
        TestCluster.start(
            dir,
            3,
            Map.of(
                "sluice.mapPartition.readBufferSize", "4k",
                "sluice.mapPartition.pushSize", "4k",
                "sluice.mapPartition.readCredits", "2",
                "sluice.network.connectTimeout", "2s",
                // a black-holed server is left after about a second, not a request timeout
                "sluice.network.silentAfter", "500ms"));
    List<InetSocketAddress> servers = new ArrayList<>();
    for (ServerAddress s : cluster.addresses()) {
      BlackHoleProxy proxy = new BlackHoleProxy("127.0.0.1", s.getPort());
      proxies.add(proxy);
      servers.add(InetSocketAddress.createUnresolved("127.0.0.1", proxy.port()));
    }
    placement = new MapPartitionPlacement(cluster.context(), APP, servers, lost -> {});
  }

  @AfterEach
  void stop() {
    placement.close();
    for (BlackHoleProxy p : proxies) {
      p.close();
    }
    cluster.close();
  }

  private List<ServerAddress> place(int shuffleId, int copies) throws Exception {
    List<ServerAddress> placed = new ArrayList<>();
    for (InetSocketAddress s :
        placement.place(shuffleId, 4, SUBPARTITIONS, copies).get(10, TimeUnit.SECONDS)) {
      placed.add(ClientContext.address(s.getHostString(), s.getPort()));
    }
    return placed;
  }

  /** Cuts off the server behind {@code at}: its connections reset, new ones are refused. */
  private void kill(ServerAddress at) {
    proxy(at).close();
  }

  private BlackHoleProxy proxy(ServerAddress at) {
    for (BlackHoleProxy p : proxies) {
      if (p.port() == at.getPort()) {
        return p;
      }
    }
    throw new IllegalArgumentException("no proxy at " + at);
  }

  private int serverIndex(ServerAddress at) {
    return proxies.indexOf(proxy(at));
  }

  private static byte[] bytes(int region, int sub, int length) {
    StringBuilder b = new StringBuilder();
    int i = 0;
    while (b.length() < length) {
      b.append("r").append(region).append("s").append(sub).append("i").append(i++).append(';');
    }
    return b.substring(0, length).getBytes(StandardCharsets.US_ASCII);
  }

  /** What the partition written by {@link #writeRegion} holds: per subpartition, in order. */
  private static final class Expected {
    final Map<Integer, ByteArrayOutputStream> bytes = new TreeMap<>();

    void add(int sub, byte[] data) {
      bytes.computeIfAbsent(sub, k -> new ByteArrayOutputStream()).writeBytes(data);
    }

    Map<Integer, String> asStrings() {
      Map<Integer, String> m = new TreeMap<>();
      bytes.forEach((k, v) -> m.put(k, v.toString(StandardCharsets.US_ASCII)));
      return m;
    }
  }

  /**
   * Region {@code region}: every subpartition gets five and a bit blocks, then an event (a
   * broadcast region of its own) marks the region's end for every subpartition.
   */
  private static void writeRegion(ReplicatedMapPartitionWriter w, int region, Expected expected)
      throws IOException {
    w.startRegion(false);
    for (int s = 0; s < SUBPARTITIONS; s++) {
      byte[] data = bytes(region, s, 5 * BLOCK + 123 * (s + 1));
      w.write(s, ByteBuffer.wrap(data));
      expected.add(s, data);
    }
    w.finishRegion();
    w.startRegion(true);
    byte[] event = ("<end of region " + region + ">").getBytes(StandardCharsets.US_ASCII);
    w.writeEvent(0, ByteBuffer.wrap(event));
    w.finishRegion();
    for (int s = 0; s < SUBPARTITIONS; s++) {
      expected.add(s, event);
    }
  }

  private ReplicatedMapPartitionWriter writer(MapPartitionId id, List<ServerAddress> copies) {
    return new ReplicatedMapPartitionWriter(cluster.context(), id, copies, SUBPARTITIONS, BLOCK);
  }

  /** Reads subpartitions [0, 3]; {@code afterBlocks} runs once that many blocks were read. */
  private Map<Integer, String> readAll(
      MapPartitionId id, List<ServerAddress> copies, int afterBlocks, Runnable then)
      throws Exception {
    Semaphore available = new Semaphore(0);
    Map<Integer, ByteArrayOutputStream> read = new TreeMap<>();
    int blocks = 0;
    try (ReplicatedMapPartitionReader reader =
        ReplicatedMapPartitionReader.open(
            cluster.context(), id, copies, 0, SUBPARTITIONS - 1, available::release)) {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (!reader.isFinished()) {
        assertThat(System.nanoTime()).as("read in time").isLessThan(deadline);
        MapPartitionReader.Block b = reader.poll();
        if (b == null) {
          available.tryAcquire(100, TimeUnit.MILLISECONDS);
          continue;
        }
        ByteBuffer target = ByteBuffer.allocate(b.length());
        b.readInto(target);
        read.computeIfAbsent(b.subpartition(), k -> new ByteArrayOutputStream())
            .writeBytes(target.array());
        if (++blocks == afterBlocks) {
          then.run();
        }
      }
      readFrom = reader.server();
    }
    Map<Integer, String> m = new TreeMap<>();
    read.forEach((k, v) -> m.put(k, v.toString(StandardCharsets.US_ASCII)));
    return m;
  }

  private Map<Integer, String> readAll(MapPartitionId id, List<ServerAddress> copies)
      throws Exception {
    return readAll(id, copies, -1, () -> {});
  }

  @Test
  void theReplicaIsOnAnotherServerAndTakesReplicaFrames() throws Exception {
    List<ServerAddress> copies = place(1, 2);
    assertThat(copies).hasSize(2).doesNotHaveDuplicates();
    MapPartitionId id = new MapPartitionId(APP, 1, 0, 0);
    Expected expected = new Expected();
    try (ReplicatedMapPartitionWriter w = writer(id, copies)) {
      writeRegion(w, 0, expected);
      w.commit();
      assertThat(w.committedOn()).isEqualTo(copies);
    }
    assertThat(cluster.server(serverIndex(copies.get(1))).metrics().replicaBytesPushed().getCount())
        .isPositive();
    assertThat(cluster.server(serverIndex(copies.get(0))).metrics().replicaBytesPushed().getCount())
        .isZero();
    assertThat(readAll(id, copies)).isEqualTo(expected.asStrings());
    // the next partition's primary is the next server: round robin
    assertThat(place(1, 2).get(0)).isNotEqualTo(copies.get(0));
  }

  /**
   * One copy's server is cut off while the partition is written (between regions), before its
   * commit or after it: the writer goes on with the other copy and commits it, and the reader gets
   * everything, from whichever copy is left.
   */
  @ParameterizedTest(name = "{1} cut off {0}")
  @CsvSource({
    "before writing, primary",
    "before writing, replica",
    "while writing, primary",
    "while writing, replica",
    "before the commit, primary",
    "before the commit, replica",
    "after the commit, primary",
    "after the commit, replica"
  })
  void oneServerLostAtAnyStageLosesNothing(String stage, String which) throws Exception {
    List<ServerAddress> copies = place(2, 2);
    ServerAddress lost = copies.get(which.equals("primary") ? 0 : 1);
    ServerAddress survivor = copies.get(which.equals("primary") ? 1 : 0);
    MapPartitionId id = new MapPartitionId(APP, 2, 1, 0);
    Expected expected = new Expected();
    long waitsBefore = cluster.context().metrics().serverWaits();
    try (ReplicatedMapPartitionWriter w = writer(id, copies)) {
      if (stage.equals("before writing")) {
        kill(lost);
      }
      writeRegion(w, 0, expected);
      if (stage.equals("while writing")) {
        kill(lost);
      }
      writeRegion(w, 1, expected);
      if (stage.equals("before the commit")) {
        kill(lost);
      }
      w.commit();
      assertThat(w.committedOn())
          .isEqualTo(stage.equals("after the commit") ? copies : List.of(survivor));
    }
    if (stage.equals("after the commit")) {
      kill(lost);
    }
    if (stage.equals("before writing")) {
      // a copy with another to go on with is dropped at once, not waited for as if restarting
      assertThat(cluster.context().metrics().serverWaits()).isEqualTo(waitsBefore);
    }
    assertThat(readAll(id, copies)).isEqualTo(expected.asStrings());
    assertThat(readFrom).isEqualTo(which.equals("primary") ? copies.get(1) : copies.get(0));
  }

  /**
   * The primary is cut off after the reader handed out a few blocks: the read goes on from the
   * replica, where it stopped, with no block repeated or missed.
   */
  @Test
  void aPrimaryLostMidReadResumesOnTheReplicaWithoutRepeats() throws Exception {
    List<ServerAddress> copies = place(3, 2);
    MapPartitionId id = new MapPartitionId(APP, 3, 2, 0);
    Expected expected = new Expected();
    try (ReplicatedMapPartitionWriter w = writer(id, copies)) {
      for (int region = 0; region < 3; region++) {
        writeRegion(w, region, expected);
      }
      w.commit();
    }
    long replicaReads = cluster.server(serverIndex(copies.get(1))).metrics().mapReads().getCount();

    Map<Integer, String> read = readAll(id, copies, 7, () -> kill(copies.get(0)));

    assertThat(read).isEqualTo(expected.asStrings());
    assertThat(readFrom).isEqualTo(copies.get(1));
    assertThat(cluster.server(serverIndex(copies.get(1))).metrics().mapReads().getCount())
        .as("reads of the replica")
        .isGreaterThan(replicaReads);
    assertThat(cluster.context().metrics().readFailovers()).as("read failovers").isEqualTo(1);
  }

  /**
   * A copy's server goes silent (black-holed: connections open, nothing answered) while the
   * partition is written, or the primary while it is read: the writer goes on with the other copy
   * and the reader resumes on the replica after sluice.network.silentAfter, instead of waiting a
   * request timeout (120s; the read below fails after 30s).
   */
  @ParameterizedTest(name = "{0} silent")
  @CsvSource({"primary while writing", "replica while writing", "primary while reading"})
  void aCopyWhoseServerGoesSilentIsLeftAfterSilentAfter(String when) throws Exception {
    List<ServerAddress> copies = place(4, 2);
    MapPartitionId id = new MapPartitionId(APP, 4, 0, 0);
    ServerAddress silent = copies.get(when.startsWith("primary") ? 0 : 1);
    Expected expected = new Expected();
    try (ReplicatedMapPartitionWriter w = writer(id, copies)) {
      writeRegion(w, 0, expected);
      if (when.endsWith("writing")) {
        proxy(silent).blackHole();
      }
      writeRegion(w, 1, expected);
      assertTimeoutPreemptively(Duration.ofSeconds(30), w::commit);
    }
    Runnable then = when.endsWith("reading") ? () -> proxy(silent).blackHole() : () -> {};
    assertThat(readAll(id, copies, 3, then)).isEqualTo(expected.asStrings());
    assertThat(readFrom).isNotEqualTo(silent);
  }

  /** A block of the primary's file fails its checksum: the reader takes it from the replica. */
  @Test
  void aCorruptBlockOfThePrimaryIsReadFromTheReplica() throws Exception {
    List<ServerAddress> copies = place(4, 2);
    MapPartitionId id = new MapPartitionId(APP, 4, 3, 0);
    Expected expected = new Expected();
    try (ReplicatedMapPartitionWriter w = writer(id, copies)) {
      writeRegion(w, 0, expected);
      w.commit();
    }
    Path file = dataFile(serverIndex(copies.get(0)), "map-3-0.data");
    byte[] bytes = Files.readAllBytes(file);
    // the ninth block (the third of subpartition 1: subpartition 0 has six)
    ByteBuf blocks = Unpooled.wrappedBuffer(bytes);
    int offset = 0;
    for (int b = 0; b < 8; b++) {
      offset += MapBlockFormat.HEADER_SIZE + MapBlockFormat.length(blocks, offset);
    }
    assertThat(MapBlockFormat.subpartition(blocks, offset)).isEqualTo(1);
    bytes[offset + MapBlockFormat.HEADER_SIZE + 10] ^= 0x20;
    Files.write(file, bytes);

    long replicaReads = cluster.server(serverIndex(copies.get(1))).metrics().mapReads().getCount();

    assertThat(readAll(id, copies)).isEqualTo(expected.asStrings());
    assertThat(readFrom).isEqualTo(copies.get(1));
    assertThat(cluster.server(serverIndex(copies.get(1))).metrics().mapReads().getCount())
        .as("reads of the replica")
        .isGreaterThan(replicaReads);
  }

  /**
   * Copies that differ (written by two unrelated writers) are not mixed: when the read fails over
   * after some blocks, the replica's first blocks do not match those handed out, and the read fails
   * rather than deliver a stream made of both.
   */
  @Test
  void aReplicaThatDiffersFromWhatWasReadFailsTheRead() throws Exception {
    List<ServerAddress> copies = place(7, 2);
    MapPartitionId id = new MapPartitionId(APP, 7, 3, 0);
    for (int c = 0; c < 2; c++) {
      try (MapPartitionWriter w =
          c == 0
              ? MapPartitionWriter.open(cluster.context(), id, copies.get(0), SUBPARTITIONS, BLOCK)
              : MapPartitionWriter.openReplica(
                  cluster.context(), id, copies.get(1), SUBPARTITIONS, BLOCK)) {
        w.startRegion(false);
        for (int s = 0; s < SUBPARTITIONS; s++) {
          w.write(s, ByteBuffer.wrap(bytes(c, s, 5 * BLOCK)));
        }
        w.finishRegion();
        w.commit();
      }
    }
    Path file = dataFile(serverIndex(copies.get(0)), "map-3-0.data");
    byte[] bytes = Files.readAllBytes(file);
    ByteBuf blocks = Unpooled.wrappedBuffer(bytes);
    int offset = 0;
    for (int b = 0; b < 8; b++) {
      offset += MapBlockFormat.HEADER_SIZE + MapBlockFormat.length(blocks, offset);
    }
    bytes[offset + MapBlockFormat.HEADER_SIZE + 10] ^= 0x20;
    Files.write(file, bytes);

    assertThatThrownBy(() -> readAll(id, copies))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("after 8 blocks were read from the other copy")
        .hasMessageContaining("the copies are not the same");
  }

  private Path dataFile(int server, String name) throws IOException {
    try (Stream<Path> files = Files.walk(dir.resolve("server" + server))) {
      return files.filter(p -> p.getFileName().toString().equals(name)).findFirst().orElseThrow();
    }
  }

  /** With one copy the same loss after the commit fails the read: the engine reruns. */
  /**
   * With one copy, the server restarted in the middle of a read (down for a while, as a daemon's
   * restart is): the reader waits for it (sluice.client.serverRestartWait) and resumes where it
   * stopped, every block once.
   */
  @Test
  void withOneCopyAServerRestartedMidReadIsWaitedForAndTheReadResumes() throws Exception {
    List<ServerAddress> copies = place(6, 1);
    MapPartitionId id = new MapPartitionId(APP, 6, 0, 0);
    Expected expected = new Expected();
    try (ReplicatedMapPartitionWriter w = writer(id, copies)) {
      for (int region = 0; region < 3; region++) {
        writeRegion(w, region, expected);
      }
      w.commit();
    }
    int server = serverIndex(copies.get(0));
    CompletableFuture<ShuffleServer> restarted = new CompletableFuture<>();
    Map<Integer, String> read =
        readAll(
            id,
            copies,
            7,
            () ->
                new Thread(
                        () -> {
                          try {
                            restarted.complete(cluster.restartServer(server, root -> sleep(1000)));
                          } catch (IOException | RuntimeException e) {
                            restarted.completeExceptionally(e);
                          }
                        })
                    .start());

    assertThat(restarted.get(30, TimeUnit.SECONDS).recovery().mapPartitions()).isPositive();
    assertThat(read).isEqualTo(expected.asStrings());
    assertThat(cluster.context().metrics().serverWaits()).as("waits for the server").isPositive();
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Test
  void withOneCopyALostServerFailsTheRead() throws Exception {
    List<ServerAddress> copies = place(5, 1);
    assertThat(copies).hasSize(1);
    MapPartitionId id = new MapPartitionId(APP, 5, 0, 0);
    try (ReplicatedMapPartitionWriter w = writer(id, copies)) {
      writeRegion(w, 0, new Expected());
      w.commit();
    }
    kill(copies.get(0));
    assertThatThrownBy(() -> readAll(id, copies))
        .isInstanceOf(IOException.class)
        .hasMessageContaining(id.toString());
  }

  /** Both copies' servers lost while writing: the writer fails, naming the partition. */
  @Test
  void bothServersLostFailTheWriter() throws Exception {
    List<ServerAddress> copies = place(6, 2);
    MapPartitionId id = new MapPartitionId(APP, 6, 0, 0);
    try (ReplicatedMapPartitionWriter w = writer(id, copies)) {
      writeRegion(w, 0, new Expected());
      kill(copies.get(0));
      kill(copies.get(1));
      assertThatThrownBy(
              () -> {
                writeRegion(w, 1, new Expected());
                w.commit();
              })
          .isInstanceOf(IOException.class)
          .hasMessageContaining(id.toString());
    }
  }
}
