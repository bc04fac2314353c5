package io.sluice.client.coordinator;

import io.netty.channel.Channel;
import io.sluice.network.Message;
import io.sluice.network.RequestHandler;
import io.sluice.protocol.MessageType;
import io.sluice.protocol.Messages;
import io.sluice.protocol.PartitionRecords;
import io.sluice.protocol.SplitPages;
import io.sluice.protocol.StatusException;
import io.sluice.protocol.proto.CommittedShuffle;
import io.sluice.protocol.proto.GetCommittedSplits;
import io.sluice.protocol.proto.GetShuffleLocations;
import io.sluice.protocol.proto.MapperEnd;
import io.sluice.protocol.proto.PartitionLocation;
import io.sluice.protocol.proto.RecordCursor;
import io.sluice.protocol.proto.Response;
import io.sluice.protocol.proto.RevivePartition;
import io.sluice.protocol.proto.SplitCursor;
import io.sluice.protocol.proto.Status;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decodes requests to the coordinator's endpoint, delegates them, on the coordinator's threads
 * rather than the endpoint's event loop, and answers. A request for committed splits is answered
 * when the commit completes or its bound passes ({@link ShuffleCoordinator#awaitCommit}), never
 * later.
 */
final class CoordinatorRequestHandler implements RequestHandler {
  private static final Logger LOG = LoggerFactory.getLogger(CoordinatorRequestHandler.class);

  private final ShuffleCoordinator coordinator;

  CoordinatorRequestHandler(ShuffleCoordinator coordinator) {
    this.coordinator = coordinator;
  }

  @Override
  public void handle(Channel channel, Message request) {
    long id = request.requestId();
    request.release(); // coordinator requests carry no body
    MessageType type = MessageType.of(request.type());
    // the work may call servers (registering a generation, moving a partition, committing), which
    // must not hold up this event loop: it runs on the coordinator's own threads
    coordinator.run(() -> answer(channel, id, type, request));
  }

  private void answer(Channel channel, long id, MessageType type, Message request) {
    try {
      switch (type) {
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
                h.getShuffleId(),
                h.getMapIndex(),
                h.getAttempt(),
                h.getServersWrittenList(),
                h.getWithRecords()
                    ? PartitionRecords.decode(
                        h.getRecords(), "map " + h.getMapIndex() + " attempt " + h.getAttempt())
                    : null,
                h.getWithRecords() && h.getMoreRecords());
            channel.writeAndFlush(Messages.ok(id));
            return;
          }
        case GET_COMMITTED_SPLITS:
          committedSplits(channel, id, request.header(GetCommittedSplits.class));
          return;
        case REVIVE_PARTITION:
          {
            RevivePartition h = request.header(RevivePartition.class);
            if (h.getServerFailed()) {
              channel.writeAndFlush(
                  Messages.response(
                      ok(id)
                          .setLocations(
                              coordinator
                                  .reviveAfterServerFailure(
                                      h.getShuffleId(),
                                      h.getPartitionId(),
                                      h.getFailedEpoch(),
                                      h.getReason(),
                                      h.getReplicaFailed())
                                  .toProto())
                          .build()));
              return;
            }
            PartitionLocation next =
                coordinator.revive(
                    h.getShuffleId(), h.getPartitionId(), h.getFailedEpoch(), h.getReason());
            channel.writeAndFlush(Messages.response(ok(id).setLocation(next).build()));
            return;
          }
        default:
          channel.writeAndFlush(
              Messages.error(
                  id, Status.BAD_REQUEST, type + " is not a request the coordinator answers"));
      }
    } catch (IllegalArgumentException e) {
      channel.writeAndFlush(Messages.error(id, Status.BAD_REQUEST, e.getMessage()));
    } catch (ServersAwayException e) {
      // the servers are restarting, most likely: the writer asks again
      channel.writeAndFlush(Messages.error(id, Status.CONGESTED, e.getMessage()));
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
    RecordCursor recordsResume = h.hasRecordsResume() ? h.getRecordsResume() : null;
    int startMap = Math.max(0, h.getStartMapIndex());
    int endMap = h.getEndMapIndex() == 0 ? Integer.MAX_VALUE : h.getEndMapIndex();
    CompletableFuture<ShuffleCommit> committed =
        coordinator.awaitCommit(h.getShuffleId(), start, end, h.getCommit());
    committed.whenComplete(
        (commit, error) -> {
          if (error != null) {
            Throwable cause =
                error instanceof CompletionException && error.getCause() != null
                    ? error.getCause()
                    : error;
            channel.writeAndFlush(
                cause instanceof StatusException
                    ? Messages.error(id, ((StatusException) cause).status(), cause.getMessage())
                    : Messages.error(id, Status.INTERNAL_ERROR, cause.toString()));
            return;
          }
          CommittedShuffle page;
          try {
            page =
                commit.answer(
                    start, end, startMap, endMap, resume, recordsResume, SplitPages.MAX_PAGE_BYTES);
          } catch (IllegalArgumentException e) {
            channel.writeAndFlush(
                Messages.error(
                    id, Status.BAD_REQUEST, "shuffle " + h.getShuffleId() + ": " + e.getMessage()));
            return;
          } catch (RuntimeException e) {
            // a callback's exception goes nowhere: unanswered, the reader would wait out
            // sluice.coordinator.commitTimeout
            LOG.error("Coordinator failed to page the commit of shuffle {}", h.getShuffleId(), e);
            channel.writeAndFlush(Messages.error(id, Status.INTERNAL_ERROR, e.toString()));
            return;
          }
          channel.writeAndFlush(Messages.response(ok(id).setCommitted(page).build()));
        });
  }

  private static Response.Builder ok(long id) {
    return Messages.okBuilder(id);
  }
}
