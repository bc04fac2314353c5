package io.sluice.client.coordinator;

import io.netty.channel.Channel;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.sluice.network.Message;
import io.sluice.network.RequestHandler;
import io.sluice.protocol.MessageType;
import io.sluice.protocol.Messages;
import io.sluice.protocol.SplitPages;
import io.sluice.protocol.proto.CommittedShuffle;
import io.sluice.protocol.proto.GetCommittedSplits;
import io.sluice.protocol.proto.GetShuffleLocations;
import io.sluice.protocol.proto.MapperEnd;
import io.sluice.protocol.proto.PartitionLocation;
import io.sluice.protocol.proto.Response;
import io.sluice.protocol.proto.RevivePartition;
import io.sluice.protocol.proto.SplitCursor;
import io.sluice.protocol.proto.Status;
import java.io.IOException;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decodes requests to the coordinator's endpoint, delegates them and answers. Requests run on the
 * coordinator's own pool ({@link #THREADS} threads, at most {@link #QUEUED} waiting), never on the
 * endpoint's event loop: placing a moved partition or a new generation calls servers, and one slow
 * server must not stall every task's requests. A request that finds the queue full is answered
 * CONGESTED (the task retries).
 */
final class CoordinatorRequestHandler implements RequestHandler, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(CoordinatorRequestHandler.class);
  static final int THREADS = 8;
  static final int QUEUED = 65_536;

  private final ShuffleCoordinator coordinator;
  private final ExecutorService workers;

  CoordinatorRequestHandler(ShuffleCoordinator coordinator) {
    this.coordinator = coordinator;
    this.workers =
        new ThreadPoolExecutor(
            THREADS,
            THREADS,
            60,
            TimeUnit.SECONDS,
            new ArrayBlockingQueue<>(QUEUED),
            new DefaultThreadFactory("sluice-coordinator-" + coordinator.appId(), true));
  }

  @Override
  public void handle(Channel channel, Message request) {
    try {
      workers.execute(() -> handleNow(channel, request));
    } catch (RejectedExecutionException e) {
      long id = request.requestId();
      request.release();
      channel.writeAndFlush(
          Messages.error(
              id,
              Status.CONGESTED,
              "the coordinator of application "
                  + coordinator.appId()
                  + " has "
                  + QUEUED
                  + " requests waiting; retry later"));
    }
  }

  @Override
  public void close() {
    workers.shutdownNow();
  }

  private void handleNow(Channel channel, Message request) {
    long id = request.requestId();
    request.release(); // coordinator requests carry no body
    try {
      switch (MessageType.of(request.type())) {
        case GET_SHUFFLE_LOCATIONS:
          {
            GetShuffleLocations h = request.header(GetShuffleLocations.class);
            int shuffleId =
                h.getOpenGeneration()
                    ? coordinator.openGeneration(h.getShuffleId())
                    : h.getShuffleId();
            channel.writeAndFlush(
                Messages.response(
                    ok(id).setLocations(coordinator.locations(shuffleId).toProto()).build()));
            return;
          }
        case MAPPER_END:
          {
            MapperEnd h = request.header(MapperEnd.class);
            coordinator.mapperEnd(
                h.getShuffleId(), h.getMapIndex(), h.getAttempt(), h.getServersWrittenList());
            channel.writeAndFlush(Messages.ok(id));
            return;
          }
        case GET_COMMITTED_SPLITS:
          committedSplits(channel, id, request.header(GetCommittedSplits.class));
          return;
        case REVIVE_PARTITION:
          {
            RevivePartition h = request.header(RevivePartition.class);
            PartitionLocation next =
                coordinator.revive(
                    h.getShuffleId(),
                    h.getPartitionId(),
                    h.getFailedEpoch(),
                    h.getReason(),
                    h.getServerFailed());
            channel.writeAndFlush(Messages.response(ok(id).setLocation(next).build()));
            return;
          }
        default:
          channel.writeAndFlush(
              Messages.error(
                  id,
                  Status.BAD_REQUEST,
                  MessageType.of(request.type()) + " is not a request the coordinator answers"));
      }
    } catch (IllegalArgumentException e) {
      channel.writeAndFlush(Messages.error(id, Status.BAD_REQUEST, e.getMessage()));
    } catch (IOException e) {
      channel.writeAndFlush(Messages.error(id, Status.INTERNAL_ERROR, e.getMessage()));
    } catch (RuntimeException e) {
      LOG.error("Coordinator failed to handle {}", request, e);
      channel.writeAndFlush(Messages.error(id, Status.INTERNAL_ERROR, e.toString()));
    }
  }

  private void committedSplits(Channel channel, long id, GetCommittedSplits h) {
    int start = h.getStartPartition();
    int end = h.getEndPartition();
    if (start < 0 || end < start) {
      throw new IllegalArgumentException(
          "invalid partition range [" + start + ", " + end + ") for shuffle " + h.getShuffleId());
    }
    SplitCursor resume = h.hasResume() ? h.getResume() : null;
    CompletableFuture<ShuffleCommit> committed =
        h.getCommit()
            ? coordinator.commit(h.getShuffleId())
            : coordinator.committed(h.getShuffleId());
    committed.whenComplete(
        (commit, error) -> {
          if (error != null) {
            channel.writeAndFlush(Messages.error(id, Status.INTERNAL_ERROR, error.toString()));
            return;
          }
          CommittedShuffle page;
          try {
            page = commit.answer(start, end, resume, SplitPages.MAX_PAGE_BYTES);
          } catch (IllegalArgumentException e) {
            channel.writeAndFlush(
                Messages.error(
                    id, Status.BAD_REQUEST, "shuffle " + h.getShuffleId() + ": " + e.getMessage()));
            return;
          }
          channel.writeAndFlush(Messages.response(ok(id).setCommitted(page).build()));
        });
  }

  private static Response.Builder ok(long id) {
    return Messages.okBuilder(id);
  }
}
