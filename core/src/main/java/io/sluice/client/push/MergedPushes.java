package io.sluice.client.push;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.sluice.client.ClientContext;
import io.sluice.common.Futures;
import io.sluice.common.Ids;
import io.sluice.network.TransportClient;
import io.sluice.protocol.MessageType;
import io.sluice.protocol.Messages;
import io.sluice.protocol.RequestLimits;
import io.sluice.protocol.StatusException;
import io.sluice.protocol.proto.MergedPushResult;
import io.sluice.protocol.proto.PushMerged;
import io.sluice.protocol.proto.Response;
import io.sluice.protocol.proto.ServerAddress;
import io.sluice.protocol.proto.Status;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;

/**
 * Merges the batches a map task pushes to the same server into one {@code PushMerged} request per
 * server and kind of copy, instead of a request, a response, a server-side reservation and a wakeup
 * of the connection's event loop per batch: at the task's end or a spill of every buffer under
 * memory pressure (many reducers, little data each), and while it writes (full batches). Each batch
 * still gets its own answer (a future completing with its part's status, as a {@code PushData}
 * answer would), so retries, moves and acknowledgements stay per batch: a part that fails is
 * retried alone, as a plain push.
 *
 * <p>A request is sent once it holds {@link #MAX_BYTES} (at most a quarter of {@code
 * sluice.push.maxInFlightBytesPerServer}: what waits holds room other tasks may need) or {@link
 * RequestLimits#MAX_MERGED_PARTS} parts, and the rest ({@link #sendAll}) before the task waits for
 * room to push, and when it flushes, finishes or closes: a batch waits at most until one of those.
 * Batches of a quarter of a request or more are not worth merging and go alone ({@link #takes}).
 * Used by the task thread only.
 */
final class MergedPushes {
  /** Bytes one merged request carries at most. */
  static final int MAX_BYTES = 1 << 20;

  /** The batches waiting for one server, as first copies or as replicas. */
  private static final class Group {
    final ServerAddress server;
    final boolean replica;
    final PushMerged.Builder header = PushMerged.newBuilder();
    final List<ByteBuf> bodies = new ArrayList<>();
    final List<CompletableFuture<Status>> answers = new ArrayList<>();
    int bytes;

    Group(ServerAddress server, boolean replica) {
      this.server = server;
      this.replica = replica;
    }
  }

  private final ClientContext context;
  private final String appId;
  private final int shuffleId;
  private final BiFunction<ServerAddress, Boolean, CompletableFuture<TransportClient>> connections;
  private final Map<String, Group> groups = new LinkedHashMap<>();
  private final int maxBytes;

  /**
   * @param connections the map task's connection to a server, for first copies or ({@code true})
   *     replicas
   */
  MergedPushes(
      ClientContext context,
      String appId,
      int shuffleId,
      BiFunction<ServerAddress, Boolean, CompletableFuture<TransportClient>> connections) {
    this.context = context;
    this.appId = appId;
    this.shuffleId = shuffleId;
    this.connections = connections;
    this.maxBytes = (int) Math.min(MAX_BYTES, context.conf().maxInFlightPerServer() / 4);
  }

  /**
   * Whether a batch of {@code bytes} is merged: below a quarter of a request (256 KiB by default,
   * so a full batch of the default 64k buffer is); larger ones travel alone.
   */
  boolean takes(int bytes) {
    return bytes < maxBytes / 4;
  }

  /**
   * Adds a batch for {@code partition} at {@code epoch} on {@code server}.
   *
   * @param body the batch; this keeps a retained duplicate until the request is written
   * @return its answer: the part's status (OK or SOFT_SPLIT), or a {@link StatusException} with the
   *     part's status and message, or the failure of the whole request
   */
  CompletableFuture<Status> add(
      ServerAddress server, boolean replica, int partition, int epoch, ByteBuf body) {
    String key = (replica ? "r " : "p ") + ClientContext.format(server);
    Group g = groups.computeIfAbsent(key, k -> new Group(server, replica));
    CompletableFuture<Status> answer = new CompletableFuture<>();
    g.header.addPartitionIds(partition).addEpochs(epoch).addLengths(body.readableBytes());
    g.bodies.add(body.retainedDuplicate());
    g.answers.add(answer);
    g.bytes += body.readableBytes();
    if (g.bytes >= maxBytes || g.answers.size() >= RequestLimits.MAX_MERGED_PARTS) {
      groups.remove(key);
      send(g);
    }
    return answer;
  }

  /** Sends every request not sent yet. */
  void sendAll() {
    List<Group> waiting = new ArrayList<>(groups.values());
    groups.clear();
    for (Group g : waiting) {
      send(g);
    }
  }

  private void send(Group g) {
    CompositeByteBuf body = PooledByteBufAllocator.DEFAULT.compositeBuffer(g.bodies.size());
    body.addComponents(true, g.bodies);
    PushMerged.Builder header =
        g.header.setAppId(appId).setShuffleId(shuffleId).setReplica(g.replica);
    connections
        .apply(g.server, g.replica)
        .thenCompose(
            connection ->
                context.callAsync(
                    connection,
                    id ->
                        Messages.request(
                            MessageType.PUSH_MERGED,
                            header.setRequestId(id).build(),
                            id,
                            body.retainedDuplicate())))
        .whenComplete(
            (response, error) -> {
              body.release();
              if (error != null) {
                Throwable cause = Futures.cause(error);
                for (CompletableFuture<Status> a : g.answers) {
                  a.completeExceptionally(cause);
                }
                return;
              }
              MergedPushResult result = response.header(Response.class).getMerged();
              response.release();
              answer(g, result);
            });
  }

  /** Completes each part's answer from the server's result. */
  private void answer(Group g, MergedPushResult result) {
    int parts = g.answers.size();
    if (result.getStatusesCount() != parts || result.getMessagesCount() != parts) {
      IOException malformed =
          new IOException(
              "Sluice server "
                  + ClientContext.format(g.server)
                  + " answered a merged push of "
                  + parts
                  + " parts of "
                  + Ids.shuffle(appId, shuffleId)
                  + " with "
                  + result.getStatusesCount()
                  + " outcomes");
      g.answers.forEach(a -> a.completeExceptionally(malformed));
      return;
    }
    for (int i = 0; i < parts; i++) {
      Status status = result.getStatuses(i);
      if (status == Status.OK || status == Status.SOFT_SPLIT) {
        g.answers.get(i).complete(status);
      } else {
        g.answers.get(i).completeExceptionally(new StatusException(status, result.getMessages(i)));
      }
    }
  }
}
