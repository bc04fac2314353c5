package io.sluice.client.read;

import io.sluice.client.ClientContext;
import io.sluice.client.ServerRequests;
import io.sluice.network.Message;
import io.sluice.network.TransportClient;
import io.sluice.protocol.MessageType;
import io.sluice.protocol.Messages;
import io.sluice.protocol.proto.CommittedSplit;
import io.sluice.protocol.proto.OpenStream;
import io.sluice.protocol.proto.Response;
import io.sluice.protocol.proto.StreamHandle;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The opens of one {@link PartitionReader}'s splits, for maps [startMapIndex, endMapIndex). A split
 * that comes whole with the answer to opening it (one chunk of at most {@code
 * sluice.read.inlineFirstChunk}, on a server) leaves no stream on the server, so it is opened ahead
 * of its turn: up to {@code sluice.read.prefetchChunks} such answers wait while the reader decodes
 * the splits before them, and a partition range of many small splits costs no round trip per split.
 * Not under TLS, where a server never sends a chunk with the open's answer (an open ahead would
 * hold a stream there until its turn). Not thread safe: the reader's thread only.
 */
final class SplitOpens {
  /**
   * A split opened ahead of its turn, with the answer that brings it whole and the connection that
   * opened it: a stream the answer leaves open is the connection's, fetched and closed on it.
   */
  static final class OpenedAhead {
    final CommittedSplit split;
    final TransportClient connection;
    final CompletableFuture<Message> answer;

    OpenedAhead(
        CommittedSplit split, TransportClient connection, CompletableFuture<Message> answer) {
      this.split = split;
      this.connection = connection;
      this.answer = answer;
    }
  }

  private final ClientContext context;
  private final String appId;
  private final int shuffleId;
  private final int startMapIndex;
  private final int endMapIndex;
  private final int inlineFirstChunk;
  private final int window;
  private final boolean ahead;

  /** In reading order: the first copies of the first {@code openedAhead.size()} splits to come. */
  private final Deque<OpenedAhead> openedAhead = new ArrayDeque<>();

  SplitOpens(
      ClientContext context, String appId, int shuffleId, int startMapIndex, int endMapIndex) {
    this.context = context;
    this.appId = appId;
    this.shuffleId = shuffleId;
    this.startMapIndex = startMapIndex;
    this.endMapIndex = endMapIndex;
    this.inlineFirstChunk = context.conf().inlineFirstChunk();
    this.window = context.conf().prefetchChunks();
    this.ahead = inlineFirstChunk > 0 && !context.networkConf().tls().enabled();
  }

  /** Asks split copy {@code s}'s server, on {@code on}, to open it now. */
  CompletableFuture<Message> open(TransportClient on, CommittedSplit s) {
    return context.callAsync(
        on,
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
                    .setInlineFirstChunk(inlineFirstChunk)
                    .build(),
                id));
  }

  /**
   * Opens ahead the next splits of {@code toCome} (each a split's copies, in reading order) that
   * come whole, their first copies, until {@code sluice.read.prefetchChunks} answers wait; stops at
   * the first that does not, so the answers are taken in turn.
   */
  void openAhead(Iterable<List<CommittedSplit>> toCome) {
    if (!ahead) {
      return;
    }
    Iterator<List<CommittedSplit>> next = toCome.iterator();
    for (int i = 0; i < openedAhead.size() && next.hasNext(); i++) {
      next.next();
    }
    while (openedAhead.size() < window && next.hasNext()) {
      CommittedSplit s = next.next().get(0);
      if (!comesWhole(s)) {
        return;
      }
      TransportClient on;
      try {
        on = context.connection(appId, s.getServer());
      } catch (IOException e) {
        return; // opened in its turn, where a failure fails over to its other copy
      }
      openedAhead.add(new OpenedAhead(s, on, open(on, s)));
    }
  }

  private boolean comesWhole(CommittedSplit s) {
    return s.getRemotePath().isEmpty()
        && s.getChunkOffsetsCount() == 2
        && s.getChunkOffsets(1) - s.getChunkOffsets(0) <= inlineFirstChunk;
  }

  /** The open sent ahead for split copy {@code s}, or null when none was. */
  OpenedAhead takeOpenedAhead(CommittedSplit s) {
    OpenedAhead first = openedAhead.peek();
    if (first == null || first.split != s) {
      return null;
    }
    return openedAhead.poll();
  }

  /**
   * Drops the answers to the opens sent ahead, closing a stream one of them left on its server (a
   * map range the split holds nothing of is answered with an empty stream).
   */
  void dropOpenedAhead() {
    for (OpenedAhead a : openedAhead) {
      a.answer.thenAccept(
          m -> {
            StreamHandle handle = m.header(Response.class).getStream();
            m.release();
            if (!handle.getClosed()) {
              context
                  .callAsync(a.connection, ServerRequests.closeStream(handle.getStreamId()))
                  .thenAccept(Message::release);
            }
          });
    }
    openedAhead.clear();
  }
}
