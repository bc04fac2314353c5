package io.sluice.client.read;

import io.netty.buffer.ByteBuf;
import io.sluice.client.ApplicationLimitException;
import io.sluice.client.BatchCodec;
import io.sluice.client.ChecksumBenchmarkSwitch;
import io.sluice.client.ClientContext;
import io.sluice.client.ServerRequests;
import io.sluice.common.Ids;
import io.sluice.network.Message;
import io.sluice.network.TransportClient;
import io.sluice.protocol.BatchFormat;
import io.sluice.protocol.IndexRanges;
import io.sluice.protocol.MapRanges;
import io.sluice.protocol.MessageType;
import io.sluice.protocol.Messages;
import io.sluice.protocol.PartitionRecords;
import io.sluice.protocol.RecordTally;
import io.sluice.protocol.proto.CommittedShuffle;
import io.sluice.protocol.proto.CommittedSplit;
import io.sluice.protocol.proto.FetchChunk;
import io.sluice.protocol.proto.MapRecords;
import io.sluice.protocol.proto.ReportChecksumFailure;
import io.sluice.protocol.proto.Response;
import io.sluice.protocol.proto.ServerAddress;
import io.sluice.protocol.proto.StreamHandle;
import java.io.Closeable;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Collections;
import java.util.Comparator;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads the committed data of partitions [start, end) of a shuffle for maps [startMapIndex,
 * endMapIndex): every split in turn, each as a stream of chunks with {@code
 * sluice.read.prefetchChunks} fetched ahead, and the next small splits opened ahead ({@link
 * SplitOpens}). Verifies every batch it receives ({@link BatchFormat}: header and CRC32C) before it
 * looks at its ids, so a corrupt batch is never handed out nor silently dropped as a duplicate: a
 * batch that fails fails the reader with an {@link IOException} naming the server, the split, its
 * file, the chunk, the byte offset and the checksums expected and found, and every later call
 * throws it again. Keeps only the winning attempt of each map and each batch once ({@link
 * BatchFilter}), and hands out decompressed batches. Splits whose map set has nothing in the range
 * are skipped. The server is sent the map range: a range that leaves out some maps of a split is
 * served from the split's sorted copy (sort-on-read), so only those maps' batches travel.
 *
 * <p>Completeness: for every map in range whose winning attempt reported integrity records ({@link
 * PartitionRecords}: per partition, the batches the servers acknowledged, their bytes and an
 * order-independent checksum), the reader sums the same record over the batches it keeps, per
 * (partition, map), and compares. A kept batch of a partition the map reported nothing for, or with
 * an id at or above the reported count, fails the reader before any of its records is handed out;
 * at the end of the read every reported record must equal what was read, so a batch missing
 * (deleted from a file, lost in a commit that looked complete), duplicated under a fresh id or
 * carrying another attempt's data fails the read like a checksum failure, naming the application,
 * shuffle, partition, map, attempt, the splits (server and file) and both records. Maps whose
 * winner reported no records (a writer that does not count) are read unchecked.
 *
 * <p>Replicas: a split with two committed copies (sluice.replication.factor 2) is read from one of
 * them (readers of different partitions start on different copies, readers of one partition on the
 * same one); when that copy fails, at opening, mid-stream or on a batch that fails its check, the
 * reader reads the other copy from its start, and the filter drops the batches it handed out
 * already, so nothing is skipped or duplicated. An error is thrown only when every copy failed, and
 * not before their servers had {@code sluice.client.serverRestartWait} to come back when they
 * refused or dropped the connection, as restarting servers do.
 *
 * <p>Distributed tier: a split whose server moved it to a Hadoop file system (its {@code
 * remote_path} is set) is read from that file chunk by chunk, never from a server, so it is read
 * whole after its server is gone; a map-range read of it reads only the runs of its maps ({@link
 * RemoteSplitChunks}), as the server would. Not thread safe; close it to release fetched chunks.
 */
public final class PartitionReader implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(PartitionReader.class);
  private final ClientContext context;
  private final String appId;
  private final int shuffleId;
  private final BatchCodec codec;

  /**
   * Where batches are decompressed, reused from batch to batch (a {@link ShuffleBatch}'s bytes are
   * valid until the next call to {@link #next}); a buffer past {@value #MAX_REUSED_BUFFER} bytes is
   * dropped after its batch.
   */
  private byte[] raw = new byte[0];

  static final int MAX_REUSED_BUFFER = 4 << 20;
  private final BatchFilter filter;
  // per (partition, epoch) to read, its copies in the order to try them (one, or two replicas)
  private final Deque<List<CommittedSplit>> splits = new ArrayDeque<>();
  // the copies of the split being read: which one a failure goes to next
  private final SplitCopies copies;
  private final int prefetch;
  private final SplitOpens opens;
  private final int startMapIndex;
  private final int endMapIndex;
  private final int numMaps;
  private final boolean checksums;

  // the split being read; a stream lives on the connection that opened it
  private CommittedSplit split;
  private TransportClient connection;
  private long streamId;

  /** False when the whole split came with the answer to opening it (no stream on the server). */
  private boolean streamOpen;

  /** The split being read when it is in the distributed tier: read from there, not a server. */
  private RemoteSplitChunks remote;

  // the answer to the last stream closed, and its server: the next open there and this reader's
  // close wait for it, so an application at sluice.app.maxOpenStreams is not refused because its
  // open overtook its close on another pooled connection
  private CompletableFuture<Void> closing;
  private ServerAddress closingOn;

  private int numChunks;
  private List<Long> chunkOffsets = List.of();
  private int nextChunkToFetch;
  private final Deque<CompletableFuture<Message>> fetches = new ArrayDeque<>();
  private ByteBuf chunk;
  private int chunkStart;
  private int chunkIndex = -1;
  // the first failure of next(); every later call throws it again
  private IOException failure;

  // integrity records, keyed (partition << 32 | map): what the winners reported, what was read
  private final BitSet recordedMaps = new BitSet();
  private final int[] winners;
  private final RecordTally expected = new RecordTally();
  private final RecordTally read = new RecordTally();
  private final List<CommittedSplit> readSplits = new ArrayList<>();
  private boolean recordsCompared;

  /**
   * @throws IOException when the committed data of a partition in the range is lost
   */
  public PartitionReader(
      ClientContext context,
      String appId,
      int shuffleId,
      CommittedShuffle committed,
      int startMapIndex,
      int endMapIndex)
      throws IOException {
    this.context = context;
    this.appId = appId;
    this.shuffleId = shuffleId;
    this.codec = context.conf().codec();
    this.prefetch = context.conf().prefetchChunks();
    this.opens = new SplitOpens(context, appId, shuffleId, startMapIndex, endMapIndex);
    this.copies = new SplitCopies(context.restarts());
    this.startMapIndex = startMapIndex;
    this.endMapIndex = endMapIndex;
    this.numMaps = committed.getWinningAttemptsCount();
    this.checksums = ChecksumBenchmarkSwitch.checksums();
    if (committed.getNumLostPartitions() > 0) {
      IndexRanges lost =
          IndexRanges.decode(
              committed.getLostRangesList(), "lost partitions of " + Ids.shuffle(appId, shuffleId));
      throw new IOException(
          "Data of "
              + committed.getNumLostPartitions()
              + " partition(s) of "
              + Ids.shuffle(appId, shuffleId)
              + " is lost ("
              + lost
              + (lost.size() < committed.getNumLostPartitions() ? ", ..." : "")
              + "): "
              + committed.getLostReason());
    }
    this.filter = new BatchFilter(committed.getWinningAttemptsList(), startMapIndex, endMapIndex);
    this.winners =
        committed.getWinningAttemptsList().stream().mapToInt(Integer::intValue).toArray();
    expectRecords(committed);
    List<CommittedSplit> ordered = new ArrayList<>(committed.getSplitsList());
    ordered.sort(
        Comparator.comparingInt(CommittedSplit::getPartitionId)
            .thenComparingInt(CommittedSplit::getEpoch));
    List<CommittedSplit> wanted = new ArrayList<>();
    for (CommittedSplit s : ordered) {
      if (s.getLength() > 0 && mayHold(s, startMapIndex, endMapIndex)) {
        wanted.add(s);
      }
    }
    readSplits.addAll(wanted);
    List<List<CommittedSplit>> groups = copiesOfEachSplit(wanted);
    // A map-range read makes the server sort each split the first time; readers of different
    // ranges start at different splits, so they do not all queue on the same sort.
    int rotation = groups.isEmpty() ? 0 : Math.floorMod(startMapIndex, groups.size());
    for (int i = 0; i < groups.size(); i++) {
      splits.add(groups.get((i + rotation) % groups.size()));
    }
  }

  /**
   * Groups the copies of each (partition, epoch) (two with sluice.replication.factor 2, on two
   * servers), ordered so that readers of different partitions start on different copies (the reads
   * of a replicated shuffle spread over both servers) while all readers of one partition start on
   * the same copy: map-range readers of a skewed partition then make one server sort it, not both.
   */
  private List<List<CommittedSplit>> copiesOfEachSplit(List<CommittedSplit> ordered) {
    List<List<CommittedSplit>> groups = new ArrayList<>();
    for (CommittedSplit s : ordered) {
      List<CommittedSplit> last = groups.isEmpty() ? null : groups.get(groups.size() - 1);
      if (last != null
          && last.get(0).getPartitionId() == s.getPartitionId()
          && last.get(0).getEpoch() == s.getEpoch()) {
        last.add(s);
      } else {
        List<CommittedSplit> copies = new ArrayList<>();
        copies.add(s);
        groups.add(copies);
      }
    }
    for (List<CommittedSplit> copies : groups) {
      if (copies.size() > 1) {
        copies.sort(Comparator.comparing(c -> ClientContext.format(c.getServer())));
        Collections.rotate(copies, Math.floorMod(copies.get(0).getPartitionId(), copies.size()));
      }
    }
    return groups;
  }

  private boolean mayHold(CommittedSplit s, int startMap, int endMap) throws IOException {
    try {
      return MapRanges.mayHold(s, startMap, endMap);
    } catch (IllegalArgumentException e) {
      throw new IOException(
          "The coordinator's record of " + describe(s) + " is malformed: " + e.getMessage(), e);
    }
  }

  /**
   * The next batch, or null when every split is read.
   *
   * @throws IOException when a split cannot be read or holds a batch that fails its check; once a
   *     read failed, every call throws that again (no batch after a failure ever comes out, not
   *     even of chunks fetched ahead)
   */
  public ShuffleBatch next() throws IOException {
    if (failure != null) {
      throw failure;
    }
    try {
      return readNext();
    } catch (IOException e) {
      failure = e;
      throw e;
    }
  }

  private ShuffleBatch readNext() throws IOException {
    while (true) {
      try {
        if (chunk != null && chunk.isReadable()) {
          ShuffleBatch batch = nextInChunk();
          if (batch != null) {
            return batch;
          }
          continue;
        }
        releaseChunk();
        if (split != null && chunkIndex + 1 < numChunks) {
          chunk = awaitChunk();
          chunkStart = chunk.readerIndex();
          continue;
        }
        closeStream();
        copies.clear();
        if (splits.isEmpty()) {
          compareRecords();
          return null;
        }
        CommittedSplit first = copies.start(splits.poll());
        openStream(first, opens.takeOpenedAhead(first));
        opens.openAhead(splits);
      } catch (IOException e) {
        failOver(e);
      }
    }
  }

  /**
   * After the copy being read failed (its server cannot be reached or answered an error, or a batch
   * of it failed its check): reads the split's other copy from its start instead, when it has one;
   * the batches already handed out come again and the filter drops them, so nothing is skipped or
   * duplicated. When every copy failed because its server refused or dropped the connection, as a
   * restarting server does, waits for them ({@link SplitCopies}) and reads the split again from its
   * start, the same way. Otherwise rethrows {@code e}.
   */
  private void failOver(IOException e) throws IOException {
    IOException last = e;
    while (true) {
      CommittedSplit failed = copies.current();
      int pauses = copies.pauses();
      CommittedSplit next = copies.next(last);
      if (next == null) {
        throw last;
      }
      if (copies.pauses() == 0) {
        LOG.warn(
            "Reading {} from its other copy on {}: {}",
            describe(failed),
            ClientContext.format(next.getServer()),
            last.getMessage());
        context.metrics().readFailedOver();
      } else if (pauses == 0) {
        LOG.warn(
            "Cannot read {}: waiting up to {} ms for its server to come back"
                + " (sluice.client.serverRestartWait): {}",
            describe(failed),
            context.restarts().waitMillis(),
            last.getMessage());
      }
      releaseChunk();
      closeStream();
      closing = null; // its server failed: nothing waits for its answer
      try {
        openStream(next, null);
        return;
      } catch (IOException again) {
        last = again;
      }
    }
  }

  /**
   * The batch at the chunk's reader index, once its header parses and its checksum verifies, or
   * null when the filter drops it.
   */
  private ShuffleBatch nextInChunk() throws IOException {
    int pos = chunk.readerIndex();
    String problem = BatchFormat.headerProblem(chunk, pos, chunk.readableBytes());
    // a benchmark run without checksums (checksums false) still checks batches that carry one
    if (problem == null && (checksums || !BatchFormat.withoutChecksum(chunk, pos))) {
      problem = BatchFormat.checksumProblem(chunk, pos);
    }
    if (problem != null) {
      throw corrupt(pos, problem);
    }
    int mapIndex = BatchFormat.mapIndex(chunk, pos);
    int attempt = BatchFormat.attempt(chunk, pos);
    int batchId = BatchFormat.batchId(chunk, pos);
    int length = BatchFormat.length(chunk, pos);
    if (batchId == Integer.MAX_VALUE) {
      throw corrupt(pos, "of map " + mapIndex + " has batch id " + batchId);
    }
    ByteBuf payload = chunk.slice(pos + BatchFormat.HEADER_SIZE, length);
    chunk.readerIndex(pos + BatchFormat.HEADER_SIZE + length);
    if (!filter.accept(split.getPartitionId(), mapIndex, attempt, batchId)) {
      return null;
    }
    if (recordedMaps.get(mapIndex)) {
      countRecord(pos, mapIndex, attempt, batchId, length);
    }
    int rawLength = codec.rawLength(payload);
    if (raw.length > MAX_REUSED_BUFFER && rawLength <= MAX_REUSED_BUFFER) {
      raw = new byte[0]; // a huge batch went by: do not hold its buffer for the rest of the read
    }
    raw = codec.decompress(payload, raw);
    return new ShuffleBatch(split.getPartitionId(), mapIndex, raw, rawLength);
  }

  /**
   * Takes the records the winners in range reported for the partitions read (see the class); other
   * attempts' records are left out.
   */
  private void expectRecords(CommittedShuffle committed) throws IOException {
    String shuffle = Ids.shuffle(appId, shuffleId);
    if (committed.getRecordedMapsCount() != committed.getRecordedAttemptsCount()) {
      throw new IOException(
          "the integrity records of "
              + shuffle
              + " from the coordinator are malformed: lists differ in length");
    }
    int map = 0;
    for (int i = 0; i < committed.getRecordedMapsCount(); i++) {
      map += committed.getRecordedMaps(i);
      if (isWinnerInRange(map, committed.getRecordedAttempts(i))) {
        recordedMaps.set(map);
      }
    }
    for (MapRecords m : committed.getMapRecordsList()) {
      if (!isWinnerInRange(m.getMapIndex(), m.getAttempt())) {
        continue;
      }
      PartitionRecords records = PartitionRecords.fromCoordinator(m, shuffle);
      for (int i = 0; i < records.size(); i++) {
        expected.put(
            key(records.partition(i), m.getMapIndex()),
            records.batches(i),
            records.bytes(i),
            records.checksum(i));
      }
    }
  }

  private boolean isWinnerInRange(int map, int attempt) {
    return map >= startMapIndex
        && map < endMapIndex
        && map < winners.length
        && winners[map] == attempt;
  }

  private static long key(int partition, int map) {
    return ((long) partition << 32) | (map & 0xFFFFFFFFL);
  }

  /**
   * Counts a kept batch of a map with records; fails when the map reported no batch of the
   * partition, or fewer than its id.
   */
  private void countRecord(int pos, int mapIndex, int attempt, int batchId, int length)
      throws IOException {
    long key = key(split.getPartitionId(), mapIndex);
    int reported = expected.batches(key);
    if (batchId >= reported) {
      throw corrupt(
          pos,
          "holds batch id "
              + batchId
              + " of map "
              + mapIndex
              + " attempt "
              + attempt
              + ", which reported "
              + (reported == 0
                  ? "no batch of partition " + split.getPartitionId()
                  : reported + " batches (ids 0 to " + (reported - 1) + ") of the partition")
              + " acknowledged: a batch it never wrote");
    }
    read.add(
        key, BatchFormat.HEADER_SIZE + length, batchId, BatchFormat.storedChecksum(chunk, pos));
  }

  /**
   * At the end of the read, every record the winners reported must equal what was read; fails the
   * reader naming the first one that does not.
   */
  private void compareRecords() throws IOException {
    if (recordsCompared) {
      return;
    }
    recordsCompared = true;
    for (long key : expected.sortedKeys()) {
      int batches = read.batches(key);
      long bytes = read.bytes(key);
      long checksum = read.checksum(key);
      if (batches == expected.batches(key)
          && bytes == expected.bytes(key)
          && checksum == expected.checksum(key)) {
        continue;
      }
      int partition = (int) (key >>> 32);
      int map = (int) key;
      List<String> files = new ArrayList<>();
      List<CommittedSplit> suspects = new ArrayList<>();
      for (CommittedSplit s : readSplits) {
        if (s.getPartitionId() == partition) {
          files.add(fileName(s) + " on " + ClientContext.format(s.getServer()));
          suspects.add(s);
        }
      }
      IOException incomplete =
          new IOException(
              "Map "
                  + map
                  + " attempt "
                  + winners[map]
                  + " of "
                  + Ids.shuffle(appId, shuffleId)
                  + " partition "
                  + partition
                  + " reported "
                  + describeRecord(
                      expected.batches(key), expected.bytes(key), expected.checksum(key))
                  + " acknowledged, but its reader of maps ["
                  + startMapIndex
                  + ", "
                  + endMapIndex
                  + ") read "
                  + describeRecord(batches, bytes, checksum)
                  + " from "
                  + (files.isEmpty() ? "no split" : String.join(", ", files))
                  + ": a batch is missing, duplicated or from another attempt; the partition's"
                  + " data is incomplete");
      for (CommittedSplit s : suspects) {
        reportToServer(s, incomplete.getMessage());
      }
      throw incomplete;
    }
  }

  private static String describeRecord(int batches, long bytes, long checksum) {
    return batches
        + " batches of "
        + bytes
        + " bytes (checksum "
        + Long.toHexString(checksum)
        + ")";
  }

  /**
   * The failure of the batch at {@code pos} of the current chunk; the reader stays failed. Names
   * the server, the split, the file (as the server names it under its data directory), the chunk
   * and the byte offset in the file.
   */
  private IOException corrupt(int pos, String what) {
    long inChunk = pos - chunkStart;
    long offset =
        chunkIndex >= 0 && chunkIndex < chunkOffsets.size()
            ? chunkOffsets.get(chunkIndex) + inChunk
            : -1;
    IOException corruption =
        new IOException(
            "The batch at byte offset "
                + offset
                + " of "
                + fileName(split)
                + " (byte "
                + inChunk
                + " of chunk "
                + chunkIndex
                + ") of "
                + describe(split)
                + " "
                + what
                + "; the split is corrupt");
    reportToServer(split, corruption.getMessage());
    return corruption;
  }

  /**
   * The split's file as the server names it under its data directory; a read of some maps only is
   * served from the split's sorted copy when the split holds maps outside them.
   */
  private String fileName(CommittedSplit s) {
    if (!s.getRemotePath().isEmpty()) {
      return s.getRemotePath();
    }
    String file = appId + "/" + shuffleId + "/" + s.getPartitionId() + "-" + s.getEpoch() + ".data";
    if (startMapIndex <= 0 && endMapIndex >= numMaps) {
      return file;
    }
    return file + " (or its sorted copy " + file + ".sorted, which serves map-range reads)";
  }

  /**
   * Tells the split's server that its file failed a check, so it counts the failure against the
   * file's data directory (ReportChecksumFailure); best effort, without waiting for the answer.
   */
  private void reportToServer(CommittedSplit s, String reason) {
    if (!s.getRemotePath().isEmpty()) {
      return; // not in the server's data directories: nothing for it to count
    }
    context
        .callAsync(
            appId,
            s.getServer(),
            id ->
                Messages.request(
                    MessageType.REPORT_CHECKSUM_FAILURE,
                    ReportChecksumFailure.newBuilder()
                        .setRequestId(id)
                        .setAppId(appId)
                        .setShuffleId(shuffleId)
                        .setPartitionId(s.getPartitionId())
                        .setEpoch(s.getEpoch())
                        .setReason(reason.length() > 1000 ? reason.substring(0, 1000) : reason)
                        .build(),
                    id))
        .whenComplete(
            (m, e) -> {
              if (m != null) {
                m.release();
              }
            });
  }

  /**
   * Opens split copy {@code s} for reading: with the open sent ahead when {@code ahead} is not null
   * (on its connection, which holds the stream if the answer leaves one), else by asking its server
   * now.
   */
  private void openStream(CommittedSplit s, SplitOpens.OpenedAhead ahead) throws IOException {
    if (!s.getRemotePath().isEmpty()) {
      openRemote(s);
      return;
    }
    if (ahead == null) {
      awaitClosed(s.getServer());
      connection = context.connection(appId, s.getServer());
    } else {
      connection = ahead.connection;
    }
    split = s;
    Response r;
    try {
      Message m =
          awaitResponse(ahead != null ? ahead.answer : opens.open(connection, s), "opening");
      r = m.header(Response.class);
      if (r.getStream().getFirstChunkInline()) {
        // its body is chunk 0: read as if fetched
        fetches.add(CompletableFuture.completedFuture(m));
      } else {
        m.release();
      }
    } catch (IOException e) {
      split = null;
      throw e;
    }
    StreamHandle handle = r.getStream();
    streamId = handle.getStreamId();
    streamOpen = !handle.getClosed();
    chunkOffsets = handle.getChunkOffsetsList();
    numChunks = handle.getChunkOffsetsCount() - 1;
    nextChunkToFetch = handle.getFirstChunkInline() ? 1 : 0;
    chunkIndex = -1;
    while (nextChunkToFetch < numChunks && fetches.size() < prefetch) {
      fetchNext();
    }
  }

  /**
   * Opens a split of the distributed tier: its chunks are read from its file, without its server
   * (which may be gone).
   */
  private void openRemote(CommittedSplit s) throws IOException {
    split = s;
    try {
      remote =
          RemoteSplitChunks.open(
              s,
              startMapIndex,
              endMapIndex,
              numMaps,
              context.hadoopSettings(),
              context.metrics(),
              describe(s));
    } catch (IOException e) {
      split = null;
      throw e;
    }
    streamOpen = false;
    chunkOffsets = remote.chunkOffsets();
    numChunks = remote.numChunks();
    nextChunkToFetch = numChunks;
    chunkIndex = -1;
  }

  private void fetchNext() {
    int index = nextChunkToFetch++;
    long sid = streamId;
    fetches.add(
        context.callAsync(
            connection,
            id ->
                Messages.request(
                    MessageType.FETCH_CHUNK,
                    FetchChunk.newBuilder()
                        .setRequestId(id)
                        .setStreamId(sid)
                        .setChunkIndex(index)
                        .build(),
                    id)));
  }

  private ByteBuf awaitChunk() throws IOException {
    if (remote != null) {
      return remote.read(++chunkIndex);
    }
    CompletableFuture<Message> next = fetches.poll();
    chunkIndex++;
    if (nextChunkToFetch < numChunks) {
      fetchNext();
    }
    return awaitResponse(next, "fetching chunk " + chunkIndex + " of").body();
  }

  private Message awaitResponse(CompletableFuture<Message> answer, String what) throws IOException {
    // a silent server fails the read after silentAfter, not requestTimeout: the other copy goes on
    CompletableFuture<Message> future =
        context.silentServers().watch(appId, split.getServer(), answer, Message::release);
    try {
      return future.get(context.networkConf().requestTimeoutMillis() + 1000, TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      String message = what + " " + describe(split) + " failed: " + e.getCause().getMessage();
      if (ApplicationLimitException.isQuotaAnswer(e.getCause())) {
        throw new ApplicationLimitException(message, e.getCause());
      }
      throw new IOException(message, e.getCause());
    } catch (TimeoutException e) {
      throw new IOException(what + " " + describe(split) + " timed out", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("Interrupted while reading " + describe(split), e);
    }
  }

  private String describe(CommittedSplit s) {
    String where =
        s.getRemotePath().isEmpty()
            ? " on " + ClientContext.format(s.getServer())
            : " in the distributed tier (" + s.getRemotePath() + ")";
    return Ids.split(appId, shuffleId, s.getPartitionId(), s.getEpoch()) + where;
  }

  private void releaseChunk() {
    if (chunk != null) {
      chunk.release();
      chunk = null;
    }
  }

  private void closeStream() {
    if (remote != null) {
      remote.close();
      remote = null;
    }
    if (split == null || connection == null) {
      split = null;
      return;
    }
    for (CompletableFuture<Message> f : fetches) {
      f.thenAccept(Message::release);
    }
    fetches.clear();
    if (!streamOpen) {
      // the whole split came with the answer to opening it: the server kept no stream
      split = null;
      connection = null;
      return;
    }
    CompletableFuture<Void> answer =
        context
            .callAsync(connection, ServerRequests.closeStream(streamId))
            .thenAccept(Message::release);
    // a silent server fails the wait after silentAfter: its streams go with its connections
    closingOn = split.getServer();
    closing = context.silentServers().watch(appId, closingOn, answer);
    split = null;
    connection = null;
  }

  /**
   * Waits for the answer to the last stream closed when it was on {@code server} (any server when
   * null). Its failure is not this reader's: a server that lost the connection dropped the stream.
   */
  private void awaitClosed(ServerAddress server) {
    CompletableFuture<Void> c = closing;
    if (c == null || (server != null && !server.equals(closingOn))) {
      return;
    }
    closing = null;
    try {
      c.get(context.networkConf().requestTimeoutMillis() + 1000, TimeUnit.MILLISECONDS);
    } catch (ExecutionException | TimeoutException e) {
      LOG.debug("Closing a stream on {} failed", ClientContext.format(closingOn), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** The server the split being read comes from now (null between splits). */
  public ServerAddress server() {
    CommittedSplit s = split;
    return s == null ? null : s.getServer();
  }

  @Override
  public void close() {
    releaseChunk();
    closeStream();
    opens.dropOpenedAhead();
    splits.clear();
    awaitClosed(null);
  }
}
