package io.sluice.client.mappartition;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.sluice.client.Backoff;
import io.sluice.client.BatchCodec;
import io.sluice.client.ClientContext;
import io.sluice.client.ServerRequests;
import io.sluice.client.ServerRestartWait;
import io.sluice.client.SilentServerWatch;
import io.sluice.network.Message;
import io.sluice.network.TransportClient;
import io.sluice.protocol.MapBlockFormat;
import io.sluice.protocol.MapPartitionId;
import io.sluice.protocol.MessageType;
import io.sluice.protocol.Messages;
import io.sluice.protocol.PartitionRecords;
import io.sluice.protocol.RecordTally;
import io.sluice.protocol.StatusException;
import io.sluice.protocol.proto.CommitMapPartition;
import io.sluice.protocol.proto.MapPartitionRef;
import io.sluice.protocol.proto.PartitionRecordList;
import io.sluice.protocol.proto.RegionData;
import io.sluice.protocol.proto.RegionFinish;
import io.sluice.protocol.proto.RegionStart;
import io.sluice.protocol.proto.Response;
import io.sluice.protocol.proto.ServerAddress;
import io.sluice.protocol.proto.Status;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongFunction;
import net.jpountz.lz4.LZ4Compressor;
import net.jpountz.lz4.LZ4Factory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes one map partition to one server as regions. A region is whole records, in non-decreasing
 * subpartition order: {@link #startRegion}, any number of {@link #write}/{@link #writeEvent},
 * {@link #finishRegion}. {@link #commit} ends the partition: once it returns, the file is complete,
 * on disk and readable. Data is cut into blocks of at most {@code maxBlockSize} uncompressed bytes
 * (a reader hands each block over as one buffer), compressed with {@code sluice.push.compression},
 * sealed with the CRC32C of header and payload ({@link MapBlockFormat}), and sent in frames of
 * about {@code sluice.mapPartition.pushSize}.
 *
 * <p>Frames are sent asynchronously under the server's write credit: a call blocks only while the
 * credit is used up. A frame refused CONGESTED (server memory full) is sent again, with the frames
 * after it, after a backoff, so the server stores them in order. Any other failure fails the
 * writer: every later call throws it, naming the partition and server, and the engine reruns the
 * producer.
 *
 * <p>The commit carries the partition's integrity records ({@link PartitionRecords}): per
 * subpartition, the blocks its readers will get (a broadcast region's for every subpartition),
 * their bytes and the sum of {@code PartitionRecords.mix(0, crc32c)} over them. Blocks are counted
 * as they are sealed; the commit is sent only once the server took every frame, so they are what it
 * acknowledged. Readers compare what they read with them ({@link MapPartitionReader}). Not thread
 * safe: one producer thread.
 */
public final class MapPartitionWriter implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(MapPartitionWriter.class);
  private static final LZ4Compressor LZ4 = LZ4Factory.fastestInstance().fastCompressor();

  private final ClientContext context;
  private final MapPartitionId id;
  private boolean waitsForRestart = true;
  private final ServerAddress server;
  private final boolean replica;
  private final MapPartitionRef ref;
  private final int numSubpartitions;
  private final int maxBlockSize;
  private final boolean compress;
  private final int pushSize;
  private final Backoff backoff;
  private final long[] bytesPerSubpartition;
  // blocks sealed, per subpartition (key) and in broadcast regions (key 0 of its own tally)
  private final RecordTally blocks = new RecordTally();
  private final RecordTally broadcastBlocks = new RecordTally();
  private TransportClient connection;

  // producer thread only
  private ByteBuf frame;
  private int regionsStarted;
  private boolean regionOpen;
  private boolean broadcast;
  private int nextSequence;
  private long storedBytes;
  private boolean committed;
  private boolean closed;

  // guarded by this: the frames sent and not yet taken, oldest first
  private final ArrayDeque<Frame> unacked = new ArrayDeque<>();
  private int inFlight;
  private int credits = 1;
  private boolean resendPending;
  private int congestedRounds;
  private long lastProgressNanos = System.nanoTime();
  private IOException failure;

  private static final class Frame {
    final int sequence;
    final int region;
    final ByteBuf body;

    Frame(int sequence, int region, ByteBuf body) {
      this.sequence = sequence;
      this.region = region;
      this.body = body;
    }
  }

  private MapPartitionWriter(
      ClientContext context,
      MapPartitionId id,
      ServerAddress server,
      int numSubpartitions,
      int maxBlockSize,
      boolean replica) {
    if (numSubpartitions < 1 || maxBlockSize < 1) {
      throw new IllegalArgumentException(
          id
              + ": need at least one subpartition and a positive block size, got "
              + numSubpartitions
              + " and "
              + maxBlockSize);
    }
    this.context = context;
    this.id = id;
    this.server = server;
    this.replica = replica;
    this.ref = id.ref();
    this.numSubpartitions = numSubpartitions;
    this.maxBlockSize = maxBlockSize;
    this.compress = context.conf().codec() == BatchCodec.LZ4;
    this.pushSize = context.conf().mapPushSize();
    this.backoff =
        new Backoff(context.conf().retryWaitMillis(), context.conf().retryMaxWaitMillis());
    this.bytesPerSubpartition = new long[numSubpartitions];
  }

  /**
   * Opens a writer. Nothing is sent until the first region.
   *
   * @param maxBlockSize the largest block, uncompressed (e.g. Flink's memory segment size)
   */
  public static MapPartitionWriter open(
      ClientContext context,
      MapPartitionId id,
      String host,
      int port,
      int numSubpartitions,
      int maxBlockSize) {
    return new MapPartitionWriter(
        context, id, ClientContext.address(host, port), numSubpartitions, maxBlockSize, false);
  }

  /**
   * Opens a writer of the second copy ({@code sluice.replication.factor} 2): like {@link #open},
   * but its frames travel on replica connections and are marked as replica data, which the server
   * pauses only at its replica watermark. Fed the same calls as the first copy's writer, it writes
   * the same blocks in the same order (block cutting and compression are deterministic).
   */
  public static MapPartitionWriter openReplica(
      ClientContext context,
      MapPartitionId id,
      ServerAddress server,
      int numSubpartitions,
      int maxBlockSize) {
    return new MapPartitionWriter(context, id, server, numSubpartitions, maxBlockSize, true);
  }

  /** Like {@link #open}, for a server given as an address. */
  public static MapPartitionWriter open(
      ClientContext context,
      MapPartitionId id,
      ServerAddress server,
      int numSubpartitions,
      int maxBlockSize) {
    return new MapPartitionWriter(context, id, server, numSubpartitions, maxBlockSize, false);
  }

  /** The server this writer writes to. */
  public ServerAddress server() {
    return server;
  }

  public MapPartitionId id() {
    return id;
  }

  /**
   * Starts a region; a broadcast region's data belongs to every subpartition and is stored once.
   */
  public void startRegion(boolean broadcast) throws IOException {
    checkUsable();
    if (regionOpen) {
      throw new IllegalStateException("region " + (regionsStarted - 1) + " of " + id + " is open");
    }
    int region = regionsStarted;
    LongFunction<Message> start =
        rid ->
            Messages.request(
                MessageType.REGION_START,
                RegionStart.newBuilder()
                    .setRequestId(rid)
                    .setPartition(ref)
                    .setNumSubpartitions(numSubpartitions)
                    .setRegionIndex(region)
                    .setBroadcast(broadcast)
                    .build(),
                rid);
    Response r;
    if (region == 0) {
      r = startFirstRegion(start);
    } else {
      r = call(start, "start region " + region);
    }
    synchronized (this) {
      credits = Math.max(1, r.getWriteCredit().getCredits());
    }
    regionsStarted++;
    regionOpen = true;
    this.broadcast = broadcast;
  }

  /**
   * Makes {@link #startRegion} fail at once when the server cannot be reached, instead of waiting
   * for a restart: for a copy of a partition that has another copy to go on with.
   */
  void doNotWaitForRestart() {
    waitsForRestart = false;
  }

  /**
   * Starts region 0, waiting for a server that refuses or drops the connection while it may be
   * restarting ({@code sluice.client.serverRestartWait}; not for a copy with another, {@link
   * #doNotWaitForRestart}): nothing was written yet, so the partition starts on the restarted
   * server as on the old one, and the producer does not run again.
   */
  private Response startFirstRegion(LongFunction<Message> start) throws IOException {
    ServerRestartWait.Wait wait = null;
    while (true) {
      try {
        if (connection == null) {
          connection =
              replica
                  ? context.replicaPushConnection(id.appId(), server)
                  : context.pushConnection(id.appId(), server);
        }
        return call(start, "start region 0");
      } catch (IOException e) {
        if (!waitsForRestart) {
          throw e;
        }
        if (wait == null) {
          wait = context.restarts().start();
          if (ServerRestartWait.mayBeRestarting(e)) {
            LOG.warn(
                "Writing {}: its server {} does not take connections; waiting up to {} ms for it"
                    + " to come back (sluice.client.serverRestartWait): {}",
                id,
                ClientContext.format(server),
                context.restarts().waitMillis(),
                e.getMessage());
          }
        }
        if (!wait.pauseBeforeRetry(e)) {
          throw e;
        }
        synchronized (this) {
          failure = null;
        }
        connection = null;
      }
    }
  }

  /**
   * Appends serialized record bytes of {@code subpartition} (ignored in a broadcast region) to the
   * current region. Consumes {@code data} (its position moves to its limit); the caller may reuse
   * it on return.
   */
  public void write(int subpartition, ByteBuffer data) throws IOException {
    checkRegion(subpartition);
    int count = data.remaining();
    while (data.hasRemaining()) {
      int n = Math.min(maxBlockSize, data.remaining());
      appendBlock(broadcast ? 0 : subpartition, data, n);
    }
    count(subpartition, count);
  }

  /** Appends one serialized engine event; a reader hands it over as an event block. */
  public void writeEvent(int subpartition, ByteBuffer event) throws IOException {
    checkRegion(subpartition);
    int n = event.remaining();
    ByteBuf f = frame(MapBlockFormat.HEADER_SIZE + n);
    int headerAt = f.writerIndex();
    MapBlockFormat.writeHeader(f, broadcast ? 0 : subpartition, MapBlockFormat.KIND_EVENT, n, n);
    f.writeBytes(event);
    MapBlockFormat.seal(f, headerAt);
    countBlock(subpartition, f, headerAt);
    sendIfFull();
  }

  private void count(int subpartition, long bytes) {
    if (broadcast) {
      for (int i = 0; i < numSubpartitions; i++) {
        bytesPerSubpartition[i] += bytes;
      }
    } else {
      bytesPerSubpartition[subpartition] += bytes;
    }
  }

  private void countBlock(int subpartition, ByteBuf f, int headerAt) {
    (broadcast ? broadcastBlocks : blocks)
        .add(
            broadcast ? 0 : subpartition,
            MapBlockFormat.HEADER_SIZE + MapBlockFormat.length(f, headerAt),
            0,
            MapBlockFormat.storedChecksum(f, headerAt));
  }

  /**
   * The integrity records of the partition: per subpartition its own blocks plus, when there were
   * broadcast regions, theirs.
   */
  private PartitionRecords records() {
    if (broadcastBlocks.size() == 0) {
      return blocks.toRecords();
    }
    int[] subs = new int[numSubpartitions];
    int[] count = new int[numSubpartitions];
    long[] bytes = new long[numSubpartitions];
    long[] sums = new long[numSubpartitions];
    for (int s = 0; s < numSubpartitions; s++) {
      subs[s] = s;
      count[s] = blocks.batches(s) + broadcastBlocks.batches(0);
      bytes[s] = blocks.bytes(s) + broadcastBlocks.bytes(0);
      sums[s] = blocks.checksum(s) + broadcastBlocks.checksum(0);
    }
    return PartitionRecords.of(subs, count, bytes, sums);
  }

  private void checkRegion(int subpartition) throws IOException {
    checkUsable();
    if (!regionOpen) {
      throw new IllegalStateException("no open region in " + id + "; call startRegion first");
    }
    if (!broadcast && (subpartition < 0 || subpartition >= numSubpartitions)) {
      throw new IllegalArgumentException(
          "subpartition " + subpartition + " is not in " + id + " (" + numSubpartitions + ")");
    }
  }

  /** Compresses {@code n} bytes of {@code data} into the frame as one block. */
  private void appendBlock(int subpartition, ByteBuffer data, int n) throws IOException {
    int max = compress ? LZ4.maxCompressedLength(n) : n;
    ByteBuf f = frame(MapBlockFormat.HEADER_SIZE + max);
    int headerAt = f.writerIndex();
    int payloadAt = headerAt + MapBlockFormat.HEADER_SIZE;
    int kind = MapBlockFormat.KIND_DATA;
    int length = n;
    if (compress) {
      ByteBuffer out = f.nioBuffer(payloadAt, max);
      int c = LZ4.compress(data, data.position(), n, out, out.position(), max);
      if (c < n) {
        kind = MapBlockFormat.KIND_DATA_LZ4;
        length = c;
      }
    }
    if (kind == MapBlockFormat.KIND_DATA) {
      f.setBytes(payloadAt, data.duplicate().limit(data.position() + n));
    }
    data.position(data.position() + n);
    MapBlockFormat.setHeader(f, headerAt, subpartition, kind, n, length);
    f.writerIndex(payloadAt + length);
    MapBlockFormat.seal(f, headerAt);
    countBlock(subpartition, f, headerAt);
    sendIfFull();
  }

  /** The frame being filled, with room for {@code bytes} more. */
  private ByteBuf frame(int bytes) {
    if (frame == null) {
      frame = PooledByteBufAllocator.DEFAULT.directBuffer(Math.max(pushSize, bytes) + 1024);
    }
    frame.ensureWritable(bytes);
    return frame;
  }

  private void sendIfFull() throws IOException {
    if (frame.readableBytes() >= pushSize) {
      sendFrame();
    }
  }

  public void finishRegion() throws IOException {
    checkUsable();
    if (!regionOpen) {
      throw new IllegalStateException("no open region in " + id);
    }
    if (frame != null && frame.isReadable()) {
      sendFrame();
    }
    awaitAllTaken();
    int region = regionsStarted - 1;
    call(
        rid ->
            Messages.request(
                MessageType.REGION_FINISH,
                RegionFinish.newBuilder()
                    .setRequestId(rid)
                    .setPartition(ref)
                    .setRegionIndex(region)
                    .build(),
                rid),
        "finish region " + region);
    regionOpen = false;
  }

  /** Sends the filled frame once a credit is free. */
  private void sendFrame() throws IOException {
    ByteBuf body = frame;
    frame = null;
    Frame f = new Frame(nextSequence++, regionsStarted - 1, body);
    synchronized (this) {
      while (inFlight >= credits || resendPending) {
        waitForAnswers();
      }
      unacked.add(f);
      storedBytes += body.readableBytes();
      send(f);
    }
  }

  /** Caller holds the lock. */
  private void send(Frame f) {
    inFlight++;
    watched(
            context.callAsync(
                connection,
                rid ->
                    Messages.request(
                        MessageType.REGION_DATA,
                        RegionData.newBuilder()
                            .setRequestId(rid)
                            .setPartition(ref)
                            .setRegionIndex(f.region)
                            .setSequence(f.sequence)
                            .setReplica(replica)
                            .build(),
                        rid,
                        f.body.retainedDuplicate())))
        .whenComplete((response, error) -> answered(f, response, error));
  }

  /** {@code answer} failing early when the server is silent ({@link SilentServerWatch}). */
  private CompletableFuture<Message> watched(CompletableFuture<Message> answer) {
    return context.silentServers().watch(id.appId(), server, answer, Message::release);
  }

  private synchronized void answered(Frame f, Message response, Throwable error) {
    inFlight--;
    if (error == null) {
      Response r = response.header(Response.class);
      response.release();
      if (unacked.remove(f)) {
        f.body.release();
      }
      credits = Math.max(1, r.getWriteCredit().getCredits());
      lastProgressNanos = System.nanoTime();
      congestedRounds = 0;
    } else {
      Throwable cause = error instanceof CompletionException ? error.getCause() : error;
      if (cause instanceof StatusException
          && ((StatusException) cause).status() == Status.CONGESTED) {
        resendPending = true;
      } else if (failure == null) {
        failure = failure("frame " + f.sequence + " of region " + f.region + " failed", cause);
      }
    }
    notifyAll();
  }

  /**
   * Caller holds the lock. Waits for an answer; when every frame in flight is answered and some
   * were refused, sends the refused ones again after a backoff.
   */
  private void waitForAnswers() throws IOException {
    if (failure != null) {
      throw failure;
    }
    if (resendPending && inFlight == 0) {
      long waited = System.nanoTime() - lastProgressNanos;
      if (waited > TimeUnit.MILLISECONDS.toNanos(context.conf().pushTimeoutMillis())) {
        failure =
            new IOException(
                "Sluice server "
                    + ClientContext.format(server)
                    + " refused "
                    + id
                    + " for lack of memory for longer than sluice.push.timeout ("
                    + context.conf().pushTimeoutMillis()
                    + " ms)");
        throw failure;
      }
      long delay = backoff.delayMillis(++congestedRounds);
      sleep(delay);
      resendPending = false;
      for (Frame f : unacked) {
        send(f);
      }
      return;
    }
    try {
      wait(1000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while writing " + id, e);
    }
  }

  private void sleep(long millis) throws IOException {
    try {
      wait(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while writing " + id, e);
    }
  }

  private synchronized void awaitAllTaken() throws IOException {
    while (!unacked.isEmpty() || inFlight > 0) {
      waitForAnswers();
    }
    if (failure != null) {
      throw failure;
    }
  }

  /**
   * Waits for every frame, then commits the partition on the server.
   *
   * @return bytes stored (after compression, with block headers)
   * @throws IOException naming the partition and server when any frame or the commit failed
   */
  public long commit() throws IOException {
    checkUsable();
    if (regionOpen) {
      finishRegion();
    }
    awaitAllTaken();
    if (connection == null) {
      // no region at all: an empty partition still exists for its readers
      startRegion(false);
      finishRegion();
    }
    int regions = regionsStarted;
    PartitionRecordList records = records().encode();
    call(
        rid ->
            Messages.request(
                MessageType.COMMIT_MAP_PARTITION,
                CommitMapPartition.newBuilder()
                    .setRequestId(rid)
                    .setPartition(ref)
                    .setNumRegions(regions)
                    .setWithRecords(true)
                    .setSubpartitionRecords(records)
                    .build(),
                rid),
        "commit");
    committed = true;
    LOG.debug("Committed {} on {}: {} regions, {} bytes", id, format(), regions, storedBytes);
    return storedBytes;
  }

  /** Uncompressed bytes written per subpartition so far (broadcast data counts for each). */
  public long[] bytesPerSubpartition() {
    return bytesPerSubpartition.clone();
  }

  private void checkUsable() throws IOException {
    if (closed || committed) {
      throw new IllegalStateException(id + " is " + (committed ? "committed" : "closed"));
    }
    synchronized (this) {
      if (failure != null) {
        throw failure;
      }
    }
  }

  /** Sends a control request on the partition's connection and waits for OK. */
  private Response call(LongFunction<Message> request, String what) throws IOException {
    long timeout = context.networkConf().requestTimeoutMillis();
    try {
      Message m =
          watched(context.callAsync(connection, request))
              .get(timeout + 1000, TimeUnit.MILLISECONDS);
      m.release();
      return m.header(Response.class);
    } catch (ExecutionException e) {
      IOException f = failure("cannot " + what, e.getCause());
      synchronized (this) {
        if (failure == null) {
          failure = f;
        }
      }
      throw f;
    } catch (TimeoutException e) {
      throw failure("no answer to " + what, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while writing " + id, e);
    }
  }

  private IOException failure(String what, Throwable cause) {
    return new IOException(
        "Writing " + id + " to Sluice server " + format() + ": " + what + ": " + cause.getMessage(),
        cause);
  }

  private String format() {
    return ClientContext.format(server);
  }

  /**
   * Frees what the writer holds. Unless committed, drops the partition on the server (best effort).
   * Idempotent.
   */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (frame != null) {
      frame.release();
      frame = null;
    }
    synchronized (this) {
      for (Frame f : unacked) {
        f.body.release();
      }
      unacked.clear();
    }
    if (!committed && connection != null) {
      context
          .callAsync(id.appId(), server, ServerRequests.releaseMapPartition(ref))
          .whenComplete(
              (m, e) -> {
                if (m != null) {
                  m.release();
                } else {
                  LOG.debug("Could not drop {} on {}: {}", id, format(), e.toString());
                }
              });
    }
  }
}
