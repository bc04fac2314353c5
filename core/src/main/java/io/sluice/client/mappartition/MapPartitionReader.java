package io.sluice.client.mappartition;

import io.netty.buffer.ByteBuf;
import io.sluice.client.ApplicationLimitException;
import io.sluice.client.ClientContext;
import io.sluice.client.ServerRequests;
import io.sluice.network.Message;
import io.sluice.network.TransportClient;
import io.sluice.protocol.MapBlockFormat;
import io.sluice.protocol.MapPartitionId;
import io.sluice.protocol.MessageType;
import io.sluice.protocol.Messages;
import io.sluice.protocol.PartitionRecords;
import io.sluice.protocol.RecordTally;
import io.sluice.protocol.proto.MapBuffer;
import io.sluice.protocol.proto.MapPartitionRef;
import io.sluice.protocol.proto.OpenMapStream;
import io.sluice.protocol.proto.ReadMapBuffer;
import io.sluice.protocol.proto.ReportChecksumFailure;
import io.sluice.protocol.proto.Response;
import io.sluice.protocol.proto.ServerAddress;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.LongFunction;
import net.jpountz.lz4.LZ4Exception;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4SafeDecompressor;

/**
 * Reads subpartitions {@code [start, end]} of one committed map partition, with credits: the server
 * announces its backlog and answers each credit with at most one buffer; the reader grants credits
 * as the caller consumes what it received, keeping at most {@code sluice.mapPartition.readCredits}
 * buffers granted or queued. Blocks come out in order: for each region, subpartition by
 * subpartition. Every block is verified ({@link MapBlockFormat}: header and CRC32C) before it is
 * handed out; one that fails fails the reader with an {@link IOException} naming the server, the
 * partition and the block's offset in the data file.
 *
 * <p>Completeness: when the writer reported integrity records with its commit ({@link
 * PartitionRecords}, handed over by the server when the stream opens), the reader sums the same
 * record per subpartition over the blocks it hands out and compares at the end of the stream: a
 * block missing, duplicated, or from another attempt's file fails the reader like a checksum
 * failure, naming the server, the partition, its data file, the subpartition and both records.
 *
 * <p>One consuming thread calls {@link #poll}; {@code onAvailable} runs on a network thread
 * whenever a buffer, the end or an error arrives.
 */
public final class MapPartitionReader implements Closeable {
  /**
   * Bounded by the block's stored length: a stream that claims more than the block holds fails
   * instead of reading on into the blocks after it (a checksum covers stored bytes, so a faulty
   * writer's block passes it).
   */
  private static final LZ4SafeDecompressor LZ4 = LZ4Factory.fastestInstance().safeDecompressor();

  /** One block: record bytes (or an event) of one subpartition. Valid until the next poll. */
  public interface Block {
    int subpartition();

    boolean isEvent();

    /** Uncompressed length. */
    int length();

    /** The CRC32C the writer sealed the block with ({@link MapBlockFormat}), verified. */
    int storedChecksum();

    /**
     * Decompresses into {@code target} at its position (which moves by {@link #length()}). {@code
     * target} may be heap or direct.
     */
    void readInto(ByteBuffer target) throws IOException;
  }

  private final ClientContext context;
  private final MapPartitionId id;
  private final ServerAddress server;
  private final Runnable onAvailable;
  private final int maxCredits;
  private final TransportClient connection;
  private final CurrentBlock block = new CurrentBlock();

  // guarded by this
  private final ArrayDeque<Received> queue = new ArrayDeque<>();
  private long streamId = -1;
  private int outstanding;
  private long backlog = 1;
  private boolean endSeen;
  private boolean closed;
  // a CLOSE_STREAM was sent: its answer completes closedOnServer
  private boolean closeSent;
  private IOException failure;
  // the writer's records of the stream's subpartitions, or null when it reported none
  private PartitionRecords expected;
  private int startSubpartition;
  private int endSubpartition;
  private boolean recordsCompared;

  // completes once this reader holds no stream on its server after close()
  private final CompletableFuture<Void> closedOnServer = new CompletableFuture<>();

  // consumer thread only: what the blocks handed out add up to, per subpartition
  private final RecordTally read = new RecordTally();

  // consumer thread only
  private Received head;

  private static final class Received {
    final ByteBuf data;
    final int subpartition;

    /** Offset in the partition's data file of {@link #data}'s first byte. */
    final long fileOffset;

    /** {@link #data}'s reader index when it arrived. */
    final int start;

    Received(ByteBuf data, int subpartition, long fileOffset) {
      this.data = data;
      this.subpartition = subpartition;
      this.fileOffset = fileOffset;
      this.start = data.readerIndex();
    }
  }

  private MapPartitionReader(
      ClientContext context,
      MapPartitionId id,
      ServerAddress server,
      TransportClient connection,
      Runnable onAvailable) {
    this.context = context;
    this.id = id;
    this.server = server;
    this.connection = connection;
    this.onAvailable = onAvailable;
    this.maxCredits = context.conf().mapReadCredits();
  }

  /** Opens the read stream at once; blocks arrive asynchronously. */
  public static MapPartitionReader open(
      ClientContext context,
      MapPartitionId id,
      String host,
      int port,
      int startSubpartition,
      int endSubpartition,
      Runnable onAvailable) {
    return open(
        context,
        id,
        ClientContext.address(host, port),
        startSubpartition,
        endSubpartition,
        onAvailable);
  }

  /** Like {@link #open(ClientContext, MapPartitionId, String, int, int, int, Runnable)}. */
  public static MapPartitionReader open(
      ClientContext context,
      MapPartitionId id,
      ServerAddress server,
      int startSubpartition,
      int endSubpartition,
      Runnable onAvailable) {
    TransportClient connection;
    try {
      connection = context.connection(id.appId(), server);
    } catch (IOException e) {
      MapPartitionReader failed = new MapPartitionReader(context, id, server, null, onAvailable);
      failed.fail(e);
      return failed;
    }
    MapPartitionReader reader =
        new MapPartitionReader(context, id, server, connection, onAvailable);
    reader.startSubpartition = startSubpartition;
    reader.endSubpartition = endSubpartition;
    MapPartitionRef ref = id.ref();
    reader
        .call(
            rid ->
                Messages.request(
                    MessageType.OPEN_MAP_STREAM,
                    OpenMapStream.newBuilder()
                        .setRequestId(rid)
                        .setPartition(ref)
                        .setStartSubpartition(startSubpartition)
                        .setEndSubpartition(endSubpartition)
                        .build(),
                    rid))
        .whenComplete(
            (m, e) -> {
              if (e != null) {
                reader.fail(e);
                return;
              }
              m.release();
              reader.opened(m.header(Response.class));
            });
    return reader;
  }

  private void opened(Response r) {
    boolean closeNow;
    PartitionRecords records = null;
    if (r.getMapStream().getWithRecords()) {
      try {
        records = PartitionRecords.decode(r.getMapStream().getRecords(), "the records of " + id);
      } catch (IllegalArgumentException e) {
        // the server opened the stream all the same: close it there, or it counts against the
        // application's open streams until the connection closes
        synchronized (this) {
          streamId = r.getMapStream().getStreamId();
        }
        closeStream();
        fail(new IOException("the server sent malformed records: " + e.getMessage(), e));
        return;
      }
    }
    synchronized (this) {
      expected = records;
      streamId = r.getMapStream().getStreamId();
      backlog = r.getMapStream().getBacklog();
      closeNow = closed;
      if (!closeNow) {
        grantCredits();
      }
    }
    if (closeNow) {
      closeStream();
    }
  }

  /**
   * Caller holds the lock. Grants credits up to the bound, and no more than the backlog (plus one,
   * which brings the end of the stream).
   */
  private void grantCredits() {
    if (streamId < 0 || endSeen || closed || failure != null) {
      return;
    }
    long wanted = Math.min(maxCredits, backlog + 1);
    // a request on a connection already closed fails at once, on this thread (fail() clears
    // its credit): stop granting then, or this loops forever
    while (failure == null && outstanding + queue.size() + (head != null ? 1 : 0) < wanted) {
      outstanding++;
      long sid = streamId;
      call(rid ->
              Messages.request(
                  MessageType.READ_MAP_BUFFER,
                  ReadMapBuffer.newBuilder().setRequestId(rid).setStreamId(sid).build(),
                  rid))
          .whenComplete(this::received);
    }
  }

  /**
   * Sends a request on the stream's connection; a silent server fails it after {@code
   * sluice.network.silentAfter}, not the request timeout ({@link
   * io.sluice.client.SilentServerWatch}).
   */
  private CompletableFuture<Message> call(LongFunction<Message> request) {
    return context
        .silentServers()
        .watch(id.appId(), server, context.callAsync(connection, request), Message::release);
  }

  private void received(Message m, Throwable error) {
    if (error != null) {
      fail(error);
      return;
    }
    MapBuffer b = m.header(Response.class).getMapBuffer();
    synchronized (this) {
      outstanding--;
      if (closed || endSeen) {
        m.release();
        return;
      }
      if (b.getEndOfStream()) {
        m.release();
        endSeen = true;
      } else {
        // the response's body now belongs to the queue; poll() or close() releases it
        queue.add(new Received(m.body(), b.getSubpartition(), b.getOffset()));
        backlog = b.getBacklog();
      }
    }
    onAvailable.run();
  }

  private void fail(Throwable error) {
    Throwable cause = error instanceof CompletionException ? error.getCause() : error;
    boolean wasClosed;
    synchronized (this) {
      // with a close in flight, its answer says when the stream is gone
      wasClosed = closed && !closeSent;
      outstanding = Math.max(0, outstanding - 1);
      if (failure == null) {
        String message =
            "Reading "
                + id
                + " from Sluice server "
                + ClientContext.format(server)
                + " failed: "
                + cause.getMessage();
        failure =
            ApplicationLimitException.isQuotaAnswer(cause)
                ? new ApplicationLimitException(message, cause)
                : new IOException(message, cause);
      }
    }
    if (wasClosed) {
      // an open that failed after close(): the server keeps no stream of it
      closedOnServer.complete(null);
    }
    onAvailable.run();
  }

  /**
   * The next block, or null when none is available yet or the stream is finished.
   *
   * @throws IOException naming the partition and server when the stream failed (for example the
   *     server lost the data); every later call throws it too
   */
  public Block poll() throws IOException {
    while (true) {
      if (head != null && head.data.isReadable()) {
        return block.at(head);
      }
      synchronized (this) {
        if (failure != null) {
          throw failure;
        }
        if (head != null) {
          head.data.release();
          head = null;
        }
        head = queue.poll();
        grantCredits();
        if (head == null) {
          if (endSeen) {
            compareRecords();
          }
          return null;
        }
      }
    }
  }

  /**
   * True once every block was polled and what was read equals the writer's records; when it does
   * not, false, and the next {@link #poll} throws the failure.
   */
  public synchronized boolean isFinished() {
    if (!(endSeen && queue.isEmpty() && (head == null || !head.data.isReadable()))) {
      return false;
    }
    if (!recordsCompared) {
      try {
        compareRecords();
      } catch (IOException e) {
        onAvailable.run();
        return false;
      }
    }
    return failure == null;
  }

  /**
   * Caller holds the lock; the stream has ended and every block was handed out. Compares what was
   * read of each subpartition with the writer's records, once; a difference fails the reader.
   */
  private void compareRecords() throws IOException {
    if (recordsCompared) {
      if (failure != null) {
        throw failure;
      }
      return;
    }
    recordsCompared = true;
    if (expected == null) {
      return;
    }
    int e = 0;
    for (int s = startSubpartition; s <= endSubpartition; s++) {
      while (e < expected.size() && expected.partition(e) < s) {
        e++;
      }
      boolean has = e < expected.size() && expected.partition(e) == s;
      int blocks = has ? expected.batches(e) : 0;
      long bytes = has ? expected.bytes(e) : 0;
      long checksum = has ? expected.checksum(e) : 0;
      if (read.batches(s) == blocks && read.bytes(s) == bytes && read.checksum(s) == checksum) {
        continue;
      }
      failure =
          new IOException(
              "Reading "
                  + id
                  + " from Sluice server "
                  + ClientContext.format(server)
                  + ": subpartition "
                  + s
                  + " of its data file "
                  + fileName()
                  + " was written as "
                  + blocks
                  + " blocks of "
                  + bytes
                  + " bytes (checksum "
                  + Long.toHexString(checksum)
                  + "), but the reader got "
                  + read.batches(s)
                  + " blocks of "
                  + read.bytes(s)
                  + " bytes (checksum "
                  + Long.toHexString(read.checksum(s))
                  + "): a block is missing, duplicated or from another attempt; the partition is"
                  + " corrupt");
      reportToServer(failure.getMessage());
      throw failure;
    }
  }

  /**
   * Tells the server that the partition's data file failed a check, so it counts the failure
   * against the file's data directory (ReportChecksumFailure); best effort, without waiting.
   */
  private void reportToServer(String reason) {
    if (connection == null) {
      return;
    }
    MapPartitionRef ref = id.ref();
    context
        .callAsync(
            connection,
            rid ->
                Messages.request(
                    MessageType.REPORT_CHECKSUM_FAILURE,
                    ReportChecksumFailure.newBuilder()
                        .setRequestId(rid)
                        .setAppId(ref.getAppId())
                        .setShuffleId(ref.getShuffleId())
                        .setMapPartition(ref)
                        .setReason(reason.length() > 1000 ? reason.substring(0, 1000) : reason)
                        .build(),
                    rid))
        .whenComplete(
            (m, e) -> {
              if (m != null) {
                m.release();
              }
            });
  }

  private String fileName() {
    return id.appId()
        + "/"
        + id.shuffleId()
        + "/map-"
        + id.mapIndex()
        + "-"
        + id.attempt()
        + ".data";
  }

  /**
   * Closes the stream on the server and frees queued buffers; idempotent. Never waits: {@link
   * #closedOnServer} says when the server let the stream go.
   */
  @Override
  public void close() {
    boolean closeNow;
    boolean opening;
    boolean closing;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      for (Received r : queue) {
        r.data.release();
      }
      queue.clear();
      if (head != null) {
        head.data.release();
        head = null;
      }
      // also after a failure: one found here (a bad block, records that differ) leaves the
      // stream open on the server, and one the server answered is closed there already (the
      // close is then answered NOT_FOUND) or its connection is gone (the close fails at once)
      closeNow = streamId >= 0 && !endSeen && !closeSent;
      // the answer to the open is on its way: opened() closes the stream, or fail() hears why not
      opening = streamId < 0 && failure == null;
      closing = closeSent;
    }
    if (closeNow) {
      closeStream();
    } else if (!opening && !closing) {
      // ended (the server closed it), or its open failed
      closedOnServer.complete(null);
    }
  }

  /**
   * Completes, never exceptionally, once the stream is gone from the server after {@link #close}:
   * the server answered the close, or it had ended, or it failed or was never opened, or the server
   * fell silent. A task that opens streams again on the same server waits for it, so that the new
   * opens are not refused at {@code sluice.app.maxOpenStreams} while the server has not yet
   * processed the closes (they may travel on another pooled connection than the opens).
   */
  public CompletableFuture<Void> closedOnServer() {
    return closedOnServer;
  }

  private void closeStream() {
    long sid;
    synchronized (this) {
      sid = streamId;
      closeSent = true;
    }
    context
        .silentServers()
        .watch(id.appId(), server, closeStream(context, connection, sid))
        .whenComplete((v, e) -> closedOnServer.complete(null));
  }

  /** Closes read stream {@code streamId} on {@code connection}'s server; never waits. */
  static CompletableFuture<Void> closeStream(
      ClientContext context, TransportClient connection, long streamId) {
    return context
        .callAsync(connection, ServerRequests.closeStream(streamId))
        .handle(
            (m, e) -> {
              if (m != null) {
                m.release();
              }
              return null;
            });
  }

  @Override
  public String toString() {
    return "reader of " + id + " on " + ClientContext.format(server);
  }

  /** The block at the head buffer's reader index; reading it moves the index past it. */
  private final class CurrentBlock implements Block {
    private ByteBuf buf;
    private int subpartition;
    private int kind;
    private int rawLength;
    private int length;
    private int storedChecksum;
    private long fileOffset;

    /**
     * The block at the head of {@code r}, once its header parses and its checksum verifies: a block
     * that fails fails the reader, naming the server, the partition and the block's offset in the
     * data file.
     */
    Block at(Received r) throws IOException {
      buf = r.data;
      subpartition = r.subpartition;
      int pos = buf.readerIndex();
      String problem = MapBlockFormat.headerProblem(buf, pos, buf.readableBytes());
      if (problem == null) {
        problem = MapBlockFormat.checksumProblem(buf, pos);
      }
      if (problem != null) {
        throw corrupt(r.fileOffset + (pos - r.start), problem);
      }
      kind = MapBlockFormat.kind(buf, pos);
      rawLength = MapBlockFormat.uncompressedLength(buf, pos);
      length = MapBlockFormat.length(buf, pos);
      fileOffset = r.fileOffset + (pos - r.start);
      storedChecksum = MapBlockFormat.storedChecksum(buf, pos);
      read.add(subpartition, MapBlockFormat.HEADER_SIZE + length, 0, storedChecksum);
      buf.skipBytes(MapBlockFormat.HEADER_SIZE + length);
      return this;
    }

    private IOException corrupt(long offset, String what) {
      IOException e =
          new IOException(
              "Reading "
                  + id
                  + " from Sluice server "
                  + ClientContext.format(server)
                  + ": the block of subpartition "
                  + subpartition
                  + " at byte offset "
                  + offset
                  + " of its data file "
                  + id.appId()
                  + "/"
                  + id.shuffleId()
                  + "/map-"
                  + id.mapIndex()
                  + "-"
                  + id.attempt()
                  + ".data "
                  + what
                  + "; the partition is corrupt");
      synchronized (MapPartitionReader.this) {
        failure = e;
      }
      reportToServer(e.getMessage());
      return e;
    }

    @Override
    public int subpartition() {
      return subpartition;
    }

    @Override
    public boolean isEvent() {
      return kind == MapBlockFormat.KIND_EVENT;
    }

    @Override
    public int length() {
      return rawLength;
    }

    @Override
    public int storedChecksum() {
      return storedChecksum;
    }

    @Override
    public void readInto(ByteBuffer target) throws IOException {
      int payload = buf.readerIndex() - length;
      if (target.remaining() < rawLength) {
        throw new IllegalArgumentException(
            "a block of " + rawLength + " bytes does not fit in " + target.remaining());
      }
      if (kind == MapBlockFormat.KIND_DATA_LZ4) {
        ByteBuffer src = buf.nioBuffer(payload, length);
        int written;
        try {
          written =
              LZ4.decompress(src, src.position(), length, target, target.position(), rawLength);
        } catch (LZ4Exception e) {
          throw corrupt(fileOffset, "does not decompress (" + e.getMessage() + ")");
        }
        if (written != rawLength) {
          throw corrupt(
              fileOffset,
              "does not decompress (" + written + " bytes, its header says " + rawLength + ")");
        }
        target.position(target.position() + rawLength);
      } else {
        ByteBuffer src = buf.nioBuffer(payload, length);
        target.put(src);
      }
    }
  }
}
