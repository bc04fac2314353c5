package io.sluice.client.read;

import io.netty.buffer.ByteBuf;
import io.sluice.client.BatchCodec;
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
 * sluice.read.prefetchChunks} fetched ahead. Keeps only the winning attempt of each map and each
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

  // the split being read; a stream lives on the connection that opened it
  private CommittedSplit split;
  private TransportClient connection;
  private long streamId;
  private int numChunks;
  private int nextChunkToFetch;
  private final Deque<CompletableFuture<Message>> fetches = new ArrayDeque<>();
  private ByteBuf chunk;
  private int chunkIndex = -1;

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

  /** The next batch, or null when every split is read. */
  public ShuffleBatch next() throws IOException {
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
        continue;
      }
      closeStream();
      if (splits.isEmpty()) {
        return null;
      }
      openStream(splits.poll());
    }
  }

  private ShuffleBatch nextInChunk() throws IOException {
    if (chunk.readableBytes() < BatchFormat.HEADER_SIZE) {
      throw corrupt("a truncated batch header");
    }
    int mapIndex = chunk.readInt();
    int attempt = chunk.readInt();
    int batchId = chunk.readInt();
    int length = chunk.readInt();
    if (length < 0 || length > chunk.readableBytes()) {
      throw corrupt("a batch of map " + mapIndex + " claiming " + length + " bytes");
    }
    if (batchId < 0 || batchId == Integer.MAX_VALUE) {
      throw corrupt("a batch of map " + mapIndex + " with batch id " + batchId);
    }
    ByteBuf payload = chunk.readSlice(length);
    if (!filter.accept(split.getPartitionId(), mapIndex, attempt, batchId)) {
      return null;
    }
    return new ShuffleBatch(split.getPartitionId(), mapIndex, codec.decompress(payload));
  }

  private IOException corrupt(String what) {
    return new IOException(
        "Chunk "
            + chunkIndex
            + " of "
            + describe(split)
            + " holds "
            + what
            + "; the split is corrupt");
  }

  private void openStream(CommittedSplit s) throws IOException {
    connection = context.connection(s.getServer());
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
