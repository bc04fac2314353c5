package io.sluice.client.push;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.sluice.client.Backoff;
import io.sluice.client.BatchCodec;
import io.sluice.client.ChecksumBenchmarkSwitch;
import io.sluice.client.ClientContext;
import io.sluice.client.PartitionLocations;
import io.sluice.client.SilentServerWatch.SilentServerException;
import io.sluice.client.coordinator.CoordinatorClient;
import io.sluice.common.Futures;
import io.sluice.common.Ids;
import io.sluice.network.TransportClient;
import io.sluice.protocol.BatchFormat;
import io.sluice.protocol.BatchLimits;
import io.sluice.protocol.MessageType;
import io.sluice.protocol.Messages;
import io.sluice.protocol.PartitionRecords;
import io.sluice.protocol.RecordTally;
import io.sluice.protocol.StatusException;
import io.sluice.protocol.proto.PartitionLocation;
import io.sluice.protocol.proto.PushData;
import io.sluice.protocol.proto.Response;
import io.sluice.protocol.proto.ServerAddress;
import io.sluice.protocol.proto.Status;
import java.io.Closeable;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pushes the output of one map attempt. Buffers records per partition; a full buffer becomes a
 * compressed batch, sealed with its CRC32C ({@link io.sluice.protocol.BatchFormat}), pushed
 * asynchronously, within the JVM's in-flight bounds. CONGESTED and connection failures are retried
 * with jittered backoff; a location that refuses data (HARD_SPLIT) or keeps failing is replaced
 * through the coordinator and the batch resent there (with the same batch id, so readers drop a
 * duplicate). {@link #finish} pushes what is left, waits for every acknowledgement and reports the
 * map to the coordinator, with its integrity records: per partition it wrote to, the batches the
 * servers acknowledged, their bytes and an order-independent checksum of them ({@link
 * io.sluice.protocol.PartitionRecords}), which readers compare with what they read.
 *
 * <p>Not thread safe: one task thread calls {@link #write} and {@link #finish}; responses are
 * handled on network threads.
 */
public final class MapOutputPusher implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(MapOutputPusher.class);

  /**
   * First size of a partition's buffer; it doubles up to {@code sluice.push.bufferSize}, or less
   * when that would not always fit in a batch ({@link BatchEncoder#maxRawAlwaysFits}).
   */
  static final int INITIAL_BUFFER_SIZE = 4096;

  private final ClientContext context;
  private final CoordinatorClient coordinator;
  private final String appId;
  private final int shuffleId;
  private final int mapIndex;
  private final int attempt;
  private final BatchCodec codec;
  private final BatchEncoder batches;
  private final Backoff backoff;
  private final int bufferSize;
  // the shuffle's locations as last read from the coordinator (a server failure answers all)
  private volatile PartitionLocations placement;

  /**
   * Partitions moved since {@link #placement} was read (the coordinator answered a revive), with
   * their newest location: O(moves), where a copy per partition would cost more than the shuffle's
   * data when it has millions of partitions.
   */
  private final Map<Integer, PartitionLocation> moved = new ConcurrentHashMap<>();

  private final byte[][] buffers;
  private final int[] fill;
  private final long[] bytesPushed;

  /**
   * The next batch id of each partition: ids count densely from 0 per (map attempt, partition), so
   * a reader of one partition remembers the ids it saw as one run per map ({@code BatchFilter}).
   */
  private final int[] nextBatchIds;

  private final Object lock = new Object();
  // guarded by lock
  private int outstanding;

  /**
   * Per partition, the batches acknowledged so far (each batch id once: a batch is counted when its
   * push is first answered OK, and a push is answered once): only partitions written to.
   */
  private final RecordTally acknowledged = new RecordTally();

  private volatile IOException failure;
  private long lastProgressNanos = System.nanoTime();
  private final Set<ServerAddress> serversWritten = new HashSet<>();
  private final Map<ServerAddress, TransportClient> connections = new ConcurrentHashMap<>();
  // replica pushes travel on connections of their own (see PushData.replica)
  private final Map<ServerAddress, TransportClient> replicaConnections = new ConcurrentHashMap<>();

  /**
   * Partitions whose location answered SOFT_SPLIT (it took the data but is full): the next batch of
   * the partition first asks the coordinator for the next location, on the task thread.
   */
  private final Map<Integer, PartitionLocation> softSplits = new ConcurrentHashMap<>();

  // batches for the same server travel together, up to MergedPushes.MAX_BYTES a request (task
  // thread only; sent whenever the task waits, flushes, finishes or closes)
  private final MergedPushes merging;

  // the record a RecordStream is writing (task thread only): its partition, -1 when none, and
  // where it starts in the partition's buffer
  private int recordPartition = -1;
  private int recordStart;

  public MapOutputPusher(
      ClientContext context,
      CoordinatorClient coordinator,
      String appId,
      int shuffleId,
      int mapIndex,
      int attempt,
      PartitionLocations locations) {
    this.context = context;
    this.coordinator = coordinator;
    this.appId = appId;
    this.shuffleId = shuffleId;
    this.mapIndex = mapIndex;
    this.attempt = attempt;
    this.codec = context.conf().codec();
    this.backoff =
        new Backoff(context.conf().retryWaitMillis(), context.conf().retryMaxWaitMillis());
    this.batches =
        new BatchEncoder(
            codec,
            PooledByteBufAllocator.DEFAULT,
            BatchLimits.maxBatchSize(
                context.networkConf().maxFrameSize(), BatchLimits.maxPushHeaderSize(appId)),
            BatchLimits.MAX_RAW_SIZE,
            ChecksumBenchmarkSwitch.checksums());
    this.bufferSize = Math.min(context.conf().pushBufferSize(), batches.maxRawAlwaysFits());
    this.placement = locations;
    this.buffers = new byte[locations.numPartitions()][];
    this.fill = new int[locations.numPartitions()];
    this.bytesPushed = new long[locations.numPartitions()];
    this.nextBatchIds = new int[locations.numPartitions()];
    this.merging = new MergedPushes(context, appId, shuffleId, this::connectionTo);
  }

  /** Where {@code partition} is written now. */
  private PartitionLocation location(int partition) {
    PartitionLocation l = moved.get(partition);
    if (l == null) {
      return placement.location(partition);
    }
    PartitionLocations now = placement;
    return now.epoch(partition) > l.getEpoch() ? now.location(partition) : l;
  }

  /** Takes every location the coordinator answered after a server failed. */
  private void relocate(PartitionLocations locations) {
    placement = locations;
    moved.entrySet().removeIf(e -> e.getValue().getEpoch() <= locations.epoch(e.getKey()));
  }

  /**
   * Adds {@code len} bytes of whole, serialized records to a partition. A write is never split
   * across batches, so each batch payload decodes on its own.
   *
   * @throws IOException naming the map, the partition, the size and the setting to change when the
   *     write does not fit in one batch ({@link BatchLimits}): more than 1 GiB, or more than half
   *     of {@code sluice.network.maxFrameSize} once compressed; or when an earlier push failed
   */
  public void write(int partition, byte[] bytes, int off, int len) throws IOException {
    if (len >= bufferSize) {
      checkFailure();
      flushPartition(partition);
      pushBatch(partition, bytes, off, len); // a batch of its own, from the caller's array
      return;
    }
    startRecord(partition);
    appendToRecord(bytes, off, len);
    endRecord();
  }

  /** A stream that writes whole records straight into their partition's buffer. */
  public RecordStream recordStream() {
    return new RecordStream(this);
  }

  /** {@link RecordStream}: a record of {@code partition} starts at the end of its buffer. */
  void startRecord(int partition) throws IOException {
    checkFailure();
    if (recordPartition >= 0) {
      throw new IllegalStateException(
          "a record of " + describe(recordPartition) + " is still open; end it first");
    }
    recordPartition = partition;
    recordStart = fill[partition];
  }

  /** {@link RecordStream}: appends bytes of the record in progress. */
  void appendToRecord(byte[] bytes, int off, int len) throws IOException {
    byte[] buffer = recordRoom(len);
    System.arraycopy(bytes, off, buffer, fill[recordPartition], len);
    fill[recordPartition] += len;
  }

  /** {@link RecordStream}: appends a byte of the record in progress. */
  void appendToRecord(int b) throws IOException {
    byte[] buffer = recordRoom(1);
    buffer[fill[recordPartition]++] = (byte) b;
  }

  /** The open record's partition buffer with room for {@code len} more bytes. */
  private byte[] recordRoom(int len) throws IOException {
    int partition = openRecord();
    byte[] buffer = buffers[partition];
    long needed = (long) fill[partition] + len;
    if (needed > bufferSize && recordStart > 0) {
      // the records before this one make a batch now, as write() does: no growing, no copying
      flushBeforeOpenRecord();
      buffer = buffers[partition];
      needed = (long) fill[partition] + len;
    }
    if (buffer != null && buffer.length >= needed) {
      return buffer;
    }
    if (needed > batches.maxRawSize()) {
      throw tooLarge(partition, (int) Math.min(Integer.MAX_VALUE, needed));
    }
    // past the buffer size a record in progress doubles it: O(its size) copies in all
    int size = (int) Math.min(batches.maxRawSize(), Math.max(needed, 2L * fill[partition]));
    byte[] grown =
        needed <= bufferSize
            ? grow(buffer, fill[partition], (int) needed)
            : buffer == null ? new byte[size] : Arrays.copyOf(buffer, size);
    buffers[partition] = grown;
    return grown;
  }

  /**
   * {@link RecordStream}: the open record is complete; one of at least the buffer size goes as a
   * batch of its own (the records before it went when it outgrew the buffer, see {@link
   * #recordRoom}, so it starts the buffer).
   *
   * @return the record's length
   */
  int endRecord() throws IOException {
    int partition = openRecord();
    recordPartition = -1;
    int len = fill[partition] - recordStart;
    if (len >= bufferSize) {
      pushBatch(partition, buffers[partition], 0, len);
      fill[partition] = 0;
      if (buffers[partition].length > bufferSize) {
        buffers[partition] = null;
      }
    }
    return len;
  }

  private int openRecord() {
    if (recordPartition < 0) {
      throw new IllegalStateException(
          "bytes written outside a record: call startRecord(partition) first");
    }
    return recordPartition;
  }

  /**
   * A partition buffer starts small and doubles up to {@code sluice.push.bufferSize}: with
   * thousands of partitions and little data in each, full-size buffers would cost a map task
   * partitions x bufferSize bytes of garbage.
   */
  private byte[] grow(byte[] buffer, int used, int needed) {
    int size = buffer == null ? INITIAL_BUFFER_SIZE : buffer.length * 2;
    size = Math.min(bufferSize, Math.max(size, needed));
    byte[] grown = new byte[size];
    if (used > 0) {
      System.arraycopy(buffer, 0, grown, 0, used);
    }
    return grown;
  }

  /** Pushes the whole records before the open one; the open record stays, at the start. */
  private void flushBeforeOpenRecord() throws IOException {
    int p = recordPartition;
    if (recordStart > 0) {
      pushBatch(p, buffers[p], 0, recordStart);
      System.arraycopy(buffers[p], recordStart, buffers[p], 0, fill[p] - recordStart);
      fill[p] -= recordStart;
      recordStart = 0;
    }
  }

  private void flushPartition(int partition) throws IOException {
    if (fill[partition] > 0) {
      pushBatch(partition, buffers[partition], 0, fill[partition]);
      fill[partition] = 0;
    }
  }

  private void pushBatch(int partition, byte[] raw, int off, int len) throws IOException {
    ByteBuf body = batches.encode(mapIndex, attempt, nextBatchIds[partition], raw, off, len);
    if (body == null) {
      throw tooLarge(partition, len);
    }
    nextBatchIds[partition]++;
    bytesPushed[partition] += body.readableBytes();
    PendingPush push = new PendingPush(partition, body);
    PartitionLocation full = softSplits.remove(partition);
    if (full != null) {
      reviveAfterSoftSplit(partition, full);
    }
    ServerAddress server = location(partition).getServer();
    try {
      if (!context.inFlight().tryAcquire(server, push.bytes)) {
        merging.sendAll(); // batches waiting to be merged hold room: send them before waiting
        context.inFlight().acquire(server, push.bytes);
      }
    } catch (InterruptedException e) {
      body.release();
      Thread.currentThread().interrupt();
      throw new IOException("Interrupted while waiting to push " + describe(partition), e);
    } catch (IOException e) {
      body.release();
      throw e;
    }
    push.permitServer = server;
    synchronized (lock) {
      outstanding++;
    }
    send(push, merging);
  }

  private IOException tooLarge(int partition, int len) {
    String what = "A record of " + len + " bytes for " + describe(partition);
    if (len > batches.maxRawSize()) {
      return new IOException(
          what
              + " is larger than a batch holds uncompressed ("
              + batches.maxRawSize()
              + " bytes, no setting raises it); write smaller records");
    }
    return new IOException(
        what
            + " does not fit in one batch: compressed with "
            + codec
            + " it takes more than "
            + batches.maxBatchSize()
            + " bytes, the largest batch a frame of sluice.network.maxFrameSize ("
            + context.networkConf().maxFrameSize()
            + " bytes) carries, half of it. Raise sluice.network.maxFrameSize on the Sluice"
            + " servers and in the application to more than twice the record's size, or write"
            + " smaller records");
  }

  /** One batch on its way; owns {@link #body} until acknowledged or failed. */
  private final class PendingPush {
    final int partition;
    final ByteBuf body;
    final int bytes;
    ServerAddress permitServer;
    int attempts;
    int failures;
    int congestedRetries;
    private long congestedSince;

    /** When this push was first answered CONGESTED in its current run of congestion. */
    long firstCongestedNanos() {
      if (congestedRetries == 1) {
        congestedSince = System.nanoTime();
      }
      return congestedSince;
    }

    PendingPush(int partition, ByteBuf body) {
      this.partition = partition;
      this.body = body;
      this.bytes = body.readableBytes();
    }
  }

  /**
   * The connection this map task uses for {@code server}: one per server for the whole task, so a
   * partition's batches reach the server in the order they were pushed (only a retry can reorder
   * them). Reopened from the pool when it closed. Replica pushes use connections of their own.
   */
  private CompletableFuture<TransportClient> connectionTo(ServerAddress server, boolean replica) {
    Map<ServerAddress, TransportClient> open = replica ? replicaConnections : connections;
    TransportClient c = open.get(server);
    if (c != null && c.isActive()) {
      return CompletableFuture.completedFuture(c);
    }
    return (replica
            ? context.replicaPushConnectionAsync(appId, server)
            : context.pushConnectionAsync(appId, server))
        .thenApply(
            opened -> {
              open.put(server, opened);
              return opened;
            });
  }

  /** Pushes the batch to one server; completes with the answer's status (OK or SOFT_SPLIT). */
  private CompletableFuture<Status> pushTo(
      PendingPush push,
      PartitionLocation location,
      ServerAddress server,
      boolean replica,
      MergedPushes window) {
    CompletableFuture<Status> answer =
        window != null && window.takes(push.bytes)
            ? window.add(server, replica, push.partition, location.getEpoch(), push.body)
            : pushAlone(push, location, server, replica);
    return context.silentServers().watch(appId, server, answer);
  }

  /** Pushes the batch to one server in a request of its own. */
  private CompletableFuture<Status> pushAlone(
      PendingPush push, PartitionLocation location, ServerAddress server, boolean replica) {
    return connectionTo(server, replica)
        .thenCompose(
            connection ->
                context.callAsync(
                    connection,
                    id ->
                        Messages.request(
                            MessageType.PUSH_DATA,
                            PushData.newBuilder()
                                .setRequestId(id)
                                .setAppId(appId)
                                .setShuffleId(shuffleId)
                                .setPartitionId(push.partition)
                                .setEpoch(location.getEpoch())
                                .setReplica(replica)
                                .build(),
                            id,
                            push.body.retainedDuplicate())))
        .thenApply(
            response -> {
              Status status = response.header(Response.class).getStatus();
              response.release();
              return status;
            });
  }

  /**
   * Pushes the batch to its location: to the primary and, when the location has one, to the replica
   * at the same time. The batch is acknowledged once every copy is.
   */
  private void send(PendingPush push) {
    send(push, null);
  }

  /** {@link #send(PendingPush)}, merged with other small batches when {@code window} is given. */
  private void send(PendingPush push, MergedPushes window) {
    PartitionLocation location = location(push.partition);
    push.attempts++;
    CompletableFuture<Status> primary = pushTo(push, location, location.getServer(), false, window);
    if (!location.hasReplica()) {
      primary.whenComplete(
          (status, error) ->
              answered(push, location, status, Futures.cause(error), Status.OK, null));
      return;
    }
    // when each copy answered: the later one's lag is the replica lag
    long[] answeredAt = new long[2];
    CompletableFuture<Status> first =
        primary.whenComplete((status, e) -> answeredAt[0] = System.nanoTime());
    CompletableFuture<Status> second =
        pushTo(push, location, location.getReplica(), true, window)
            .whenComplete((status, e) -> answeredAt[1] = System.nanoTime());
    CompletableFuture.allOf(first, second)
        .whenComplete(
            (v, ignored) -> {
              Throwable primaryError = failureOf(first);
              Throwable replicaError = failureOf(second);
              if (primaryError == null && replicaError == null) {
                context.metrics().replicaAckLag(Math.abs(answeredAt[1] - answeredAt[0]));
              }
              answered(
                  push,
                  location,
                  primaryError == null ? first.join() : null,
                  primaryError,
                  replicaError == null ? second.join() : null,
                  replicaError);
            });
  }

  /**
   * Every copy of the push answered: acknowledges it when all took it, else hands the failure on (a
   * failed primary decides; a replica alone failing moves the replica).
   */
  private void answered(
      PendingPush push,
      PartitionLocation location,
      Status primary,
      Throwable primaryError,
      Status replica,
      Throwable replicaError) {
    if (primaryError != null || replicaError != null) {
      boolean replicaOnly = primaryError == null;
      onFailure(push, location, replicaOnly ? replicaError : primaryError, replicaOnly);
      return;
    }
    if (primary == Status.SOFT_SPLIT || replica == Status.SOFT_SPLIT) {
      softSplits.putIfAbsent(push.partition, location);
    }
    int header = push.body.readerIndex();
    synchronized (lock) {
      serversWritten.add(location.getServer());
      if (location.hasReplica()) {
        serversWritten.add(location.getReplica());
      }
      acknowledged.add(
          push.partition,
          push.bytes,
          BatchFormat.batchId(push.body, header),
          BatchFormat.storedChecksum(push.body, header));
    }
    done(push, null);
  }

  private static Throwable failureOf(CompletableFuture<?> f) {
    if (!f.isCompletedExceptionally()) {
      return null;
    }
    try {
      f.join();
      return null;
    } catch (CompletionException e) {
      return Futures.cause(e);
    } catch (RuntimeException e) {
      return e;
    }
  }

  /**
   * Decides what a failed push does next, by status: CONGESTED waits (jittered, capped backoff) and
   * retries the same location for as long as {@code sluice.push.timeout}; HARD_SPLIT moves the
   * partition at once; a failed connection or INTERNAL_ERROR retries twice, then reports the server
   * failed (the coordinator moves every partition it held, in one round), and a silent server
   * ({@link SilentServerWatch}) is reported failed at once; after {@code sluice.push.maxRetries}
   * failures that are not congestion, on any other status, or once the client is closed, the map
   * task fails. {@code replicaFailed}: the location's replica failed, its primary took the batch.
   * No thread waits: the retry and the coordinator's answer run as callbacks.
   */
  private void onFailure(
      PendingPush push, PartitionLocation location, Throwable cause, boolean replicaFailed) {
    Status status = cause instanceof StatusException ? ((StatusException) cause).status() : null;
    boolean congested = status == Status.CONGESTED;
    boolean transientFailure = status == null || status == Status.INTERNAL_ERROR;
    // a silent server is not retried: its partitions move at once
    boolean silent = cause instanceof SilentServerException;
    boolean moveOn =
        status == Status.HARD_SPLIT || (transientFailure && (push.failures >= 2 || silent));
    if (congested) {
      push.congestedRetries++;
    } else {
      push.failures++;
    }
    long congestedNanos = congested ? System.nanoTime() - push.firstCongestedNanos() : 0;
    boolean giveUp =
        !(congested || transientFailure || moveOn)
            || push.failures > context.conf().maxRetries()
            || congestedNanos > TimeUnit.MILLISECONDS.toNanos(context.conf().pushTimeoutMillis());
    ServerAddress failedServer = replicaFailed ? location.getReplica() : location.getServer();
    if (!giveUp) {
      long delay =
          moveOn ? 0 : backoff.delayMillis(congested ? push.congestedRetries : push.failures);
      LOG.debug(
          "Retrying {} in {} ms after {}{}: {}",
          describe(push.partition),
          delay,
          ClientContext.format(failedServer),
          replicaFailed ? " (replica)" : "",
          cause.getMessage());
      Runnable retry =
          () -> {
            if (!moveOn || location(push.partition).getEpoch() > location.getEpoch()) {
              send(push); // not moving, or moved already
              return;
            }
            String reason = cause.getMessage() == null ? cause.toString() : cause.getMessage();
            CompletableFuture<?> moving =
                transientFailure
                    ? coordinator
                        .reviveAfterServerFailureAsync(
                            shuffleId, push.partition, location.getEpoch(), reason, replicaFailed)
                        .thenAccept(this::relocate)
                    : coordinator
                        .reviveAsync(shuffleId, push.partition, location.getEpoch(), reason)
                        .thenAccept(this::moved);
            moving.whenComplete(
                (ok, error) -> {
                  if (error == null) {
                    send(push);
                    return;
                  }
                  Throwable why = Futures.cause(error);
                  done(
                      push,
                      new IOException(
                          "Cannot move "
                              + describe(push.partition)
                              + " off "
                              + ClientContext.format(failedServer)
                              + ": "
                              + why.getMessage(),
                          why));
                });
          };
      String closed = " given up: the Sluice client closed before its retry";
      context.scheduleRetry(
          retry,
          () -> done(push, new IOException(describe(push.partition) + closed, cause)),
          delay);
      return;
    }
    done(
        push,
        new IOException(
            "Push of "
                + describe(push.partition)
                + " to "
                + ClientContext.format(failedServer)
                + (replicaFailed ? " (its replica)" : "")
                + " failed after "
                + (push.failures + push.congestedRetries)
                + " attempt(s): "
                + cause.getMessage(),
            cause));
  }

  private void moved(PartitionLocation next) {
    moved.merge(next.getPartitionId(), next, (now, n) -> n.getEpoch() > now.getEpoch() ? n : now);
  }

  /**
   * The data was taken; moving on keeps one split from growing without bound, but a failure to move
   * only gets logged and the partition stays where it is. Runs on the task thread, which may wait.
   */
  private void reviveAfterSoftSplit(int partition, PartitionLocation full) {
    if (location(partition).getEpoch() > full.getEpoch()) {
      return;
    }
    try {
      moved(coordinator.reviveAsync(shuffleId, partition, full.getEpoch(), "soft split").join());
    } catch (CompletionException e) {
      LOG.warn(
          "Cannot move {} off its full split on {}: {}",
          describe(partition),
          ClientContext.format(full.getServer()),
          e.getCause() != null ? e.getCause().getMessage() : e.getMessage());
    }
  }

  private void done(PendingPush push, IOException error) {
    push.body.release();
    context.inFlight().release(push.permitServer, push.bytes);
    synchronized (lock) {
      outstanding--;
      lastProgressNanos = System.nanoTime();
      if (error != null && failure == null) {
        failure = error;
      }
      lock.notifyAll();
    }
  }

  /** Per record on the task thread: a volatile read, no lock (failures are set under the lock). */
  private void checkFailure() throws IOException {
    IOException f = failure;
    if (f != null) {
      throw new IOException(f.getMessage(), f);
    }
  }

  /**
   * Pushes every buffered record now, without waiting for acknowledgements, and drops the buffers
   * (the engine's memory budget for the task ran out). Writing may go on afterwards.
   *
   * @throws IOException when an earlier push failed
   */
  public void flush() throws IOException {
    // every partition's last batch at once: those for the same server travel merged
    try {
      for (int p = 0; p < buffers.length; p++) {
        checkFailure();
        if (p == recordPartition) {
          flushBeforeOpenRecord();
          continue;
        }
        flushPartition(p);
        buffers[p] = null;
      }
    } finally {
      merging.sendAll();
    }
  }

  /**
   * Pushes every buffered record, waits for all acknowledgements, then reports the map attempt to
   * the coordinator.
   *
   * @return the bytes pushed per partition (compressed, with batch headers)
   * @throws IOException naming the partition and server when a push failed or made no progress for
   *     {@code sluice.push.timeout}
   */
  public long[] finish() throws IOException {
    flush();
    awaitAcknowledged();
    try {
      List<ServerAddress> written;
      PartitionRecords records;
      synchronized (lock) {
        written = new ArrayList<>(serversWritten);
        records = acknowledged.toRecords();
      }
      coordinator.mapperEnd(shuffleId, mapIndex, attempt, written, records);
    } catch (StatusException e) {
      throw new IOException(
          "Coordinator refused the end of map "
              + mapIndex
              + " attempt "
              + attempt
              + " of "
              + Ids.shuffle(appId, shuffleId)
              + ": "
              + e.getMessage(),
          e);
    }
    return bytesPushed.clone();
  }

  private void awaitAcknowledged() throws IOException {
    long timeoutNanos = TimeUnit.MILLISECONDS.toNanos(context.conf().pushTimeoutMillis());
    synchronized (lock) {
      while (outstanding > 0 && failure == null) {
        long idle = System.nanoTime() - lastProgressNanos;
        if (idle > timeoutNanos) {
          throw new IOException(
              "Pushes of map "
                  + mapIndex
                  + " of "
                  + Ids.shuffle(appId, shuffleId)
                  + " made no progress for "
                  + context.conf().pushTimeoutMillis()
                  + " ms (sluice.push.timeout); "
                  + outstanding
                  + " batches unacknowledged");
        }
        try {
          TimeUnit.NANOSECONDS.timedWait(lock, Math.min(timeoutNanos - idle, 1_000_000_000L));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IOException("Interrupted while waiting for pushes to be acknowledged", e);
        }
      }
    }
    checkFailure();
  }

  private String describe(int partition) {
    PartitionLocation l = location(partition);
    return "map "
        + mapIndex
        + " attempt "
        + attempt
        + " of "
        + Ids.split(appId, shuffleId, partition, l.getEpoch());
  }

  /** Drops buffered records (a failed or killed task). Pushes in flight finish on their own. */
  @Override
  public void close() {
    merging.sendAll(); // none is left once finished; a failed task's go out as they would have
    for (int p = 0; p < buffers.length; p++) {
      buffers[p] = null;
      fill[p] = 0;
    }
  }
}
