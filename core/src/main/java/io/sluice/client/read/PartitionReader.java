package io.sluice.client.read;

import io.netty.buffer.ByteBuf;
import io.sluice.client.BatchCodec;
import io.sluice.client.ChecksumBenchmarkSwitch;
import io.sluice.client.ClientContext;
import io.sluice.common.Ids;
import io.sluice.network.Message;
import io.sluice.network.TransportClient;
import io.sluice.protocol.BatchFormat;
import io.sluice.protocol.IndexRanges;
import io.sluice.protocol.MapRanges;
import io.sluice.protocol.MessageType;
import io.sluice.protocol.Messages;
import io.sluice.protocol.proto.CloseStream;
import io.sluice.protocol.proto.CommittedShuffle;
import io.sluice.protocol.proto.CommittedSplit;
import io.sluice.protocol.proto.FetchChunk;
import io.sluice.protocol.proto.OpenStream;
import io.sluice.protocol.proto.Response;
import io.sluice.protocol.proto.StreamHandle;
import java.io.Closeable;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Reads the committed data of partitions [start, end) of a shuffle for maps [startMapIndex,
 * endMapIndex): every split in turn, each as a stream of chunks with {@code
 * sluice.read.prefetchChunks} fetched ahead. Verifies every batch it receives ({@link BatchFormat}:
 * header and CRC32C) before it looks at its ids, so a corrupt batch is never handed out nor
 * silently dropped as a duplicate: a batch that fails fails the reader with an {@link IOException}
 * naming the server, the split, its file, the chunk, the byte offset and the checksums expected and
 * found, and every later call throws it again. Keeps only the winning attempt of each map and each
 * batch once ({@link BatchFilter}), and hands out decompressed batches. Splits whose map set has
 * nothing in the range are skipped. The server is sent the map range: a range that leaves out some
 * maps of a split is served from the split's sorted copy (sort-on-read), so only those maps'
 * batches travel. Not thread safe; close it to release fetched chunks.
 */
public final class PartitionReader implements Closeable {
  private final ClientContext context;
  private final String appId;
  private final int shuffleId;
  private final BatchCodec codec;
  private final BatchFilter filter;
  private final Deque<CommittedSplit> splits = new ArrayDeque<>();
  private final int prefetch;
  private final int startMapIndex;
  private final int endMapIndex;
  private final int numMaps;
  private final boolean checksums;

  // the split being read; a stream lives on the connection that opened it
  private CommittedSplit split;
  private TransportClient connection;
  private long streamId;
  private int numChunks;
  private List<Long> chunkOffsets = List.of();
  private int nextChunkToFetch;
  private final Deque<CompletableFuture<Message>> fetches = new ArrayDeque<>();
  private ByteBuf chunk;
  private int chunkStart;
  private int chunkIndex = -1;
  private IOException corruption;

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
    // A map-range read makes the server sort each split the first time; readers of different
    // ranges start at different splits, so they do not all queue on the same sort.
    int rotation = wanted.isEmpty() ? 0 : Math.floorMod(startMapIndex, wanted.size());
    for (int i = 0; i < wanted.size(); i++) {
      splits.add(wanted.get((i + rotation) % wanted.size()));
    }
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
   *     batch failed, every call throws that again
   */
  public ShuffleBatch next() throws IOException {
    if (corruption != null) {
      throw corruption;
    }
    while (true) {
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
      if (splits.isEmpty()) {
        return null;
      }
      openStream(splits.poll());
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
    return new ShuffleBatch(split.getPartitionId(), mapIndex, codec.decompress(payload));
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
    corruption =
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
    return corruption;
  }

  /**
   * The split's file as the server names it under its data directory; a read of some maps only is
   * served from the split's sorted copy when the split holds maps outside them.
   */
  private String fileName(CommittedSplit s) {
    String file = appId + "/" + shuffleId + "/" + s.getPartitionId() + "-" + s.getEpoch() + ".data";
    if (startMapIndex <= 0 && endMapIndex >= numMaps) {
      return file;
    }
    return file + " (or its sorted copy " + file + ".sorted, which serves map-range reads)";
  }

  private void openStream(CommittedSplit s) throws IOException {
    connection = context.connection(appId, s.getServer());
    split = s;
    Response r;
    try {
      Message m =
          awaitResponse(
              context.callAsync(
                  connection,
                  id ->
                      Messages.request(
                          MessageType.OPEN_STREAM,
                          OpenStream.newBuilder()
                              .setRequestId(id)
                              .setAppId(appId)
                              .setShuffleId(shuffleId)
                              .setPartitionId(s.getPartitionId())
                              .setEpoch(s.getEpoch())
                              .setStartMapIndex(startMapIndex)
                              .setEndMapIndex(endMapIndex)
                              .build(),
                          id)),
              "opening");
      m.release();
      r = m.header(Response.class);
    } catch (IOException e) {
      split = null;
      throw e;
    }
    StreamHandle handle = r.getStream();
    streamId = handle.getStreamId();
    chunkOffsets = handle.getChunkOffsetsList();
    numChunks = handle.getChunkOffsetsCount() - 1;
    nextChunkToFetch = 0;
    chunkIndex = -1;
    while (nextChunkToFetch < numChunks && fetches.size() < prefetch) {
      fetchNext();
    }
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
    CompletableFuture<Message> next = fetches.poll();
    chunkIndex++;
    if (nextChunkToFetch < numChunks) {
      fetchNext();
    }
    return awaitResponse(next, "fetching chunk " + chunkIndex + " of").body();
  }

  private Message awaitResponse(CompletableFuture<Message> future, String what) throws IOException {
    try {
      return future.get(context.networkConf().requestTimeoutMillis() + 1000, TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      throw new IOException(
          what + " " + describe(split) + " failed: " + e.getCause().getMessage(), e.getCause());
    } catch (TimeoutException e) {
      throw new IOException(what + " " + describe(split) + " timed out", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("Interrupted while reading " + describe(split), e);
    }
  }

  private String describe(CommittedSplit s) {
    return Ids.split(appId, shuffleId, s.getPartitionId(), s.getEpoch())
        + " on "
        + ClientContext.format(s.getServer());
  }

  private void releaseChunk() {
    if (chunk != null) {
      chunk.release();
      chunk = null;
    }
  }

  private void closeStream() {
    if (split == null || connection == null) {
      split = null;
      return;
    }
    for (CompletableFuture<Message> f : fetches) {
      f.thenAccept(Message::release);
    }
    fetches.clear();
    long sid = streamId;
    context
        .callAsync(
            connection,
            id ->
                Messages.request(
                    MessageType.CLOSE_STREAM,
                    CloseStream.newBuilder().setRequestId(id).setStreamId(sid).build(),
                    id))
        .thenAccept(Message::release);
    split = null;
    connection = null;
  }

  @Override
  public void close() {
    releaseChunk();
    closeStream();
    splits.clear();
  }
}
