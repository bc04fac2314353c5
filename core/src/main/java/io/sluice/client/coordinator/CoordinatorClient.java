package io.sluice.client.coordinator;

import io.sluice.client.ClientContext;
import io.sluice.client.PartitionLocations;
import io.sluice.network.Message;
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
import io.sluice.protocol.proto.PartitionRecordList;
import io.sluice.protocol.proto.RecordCursor;
import io.sluice.protocol.proto.Response;
import io.sluice.protocol.proto.RevivePartition;
import io.sluice.protocol.proto.ServerAddress;
import io.sluice.protocol.proto.SplitCursor;
import io.sluice.protocol.proto.Status;
import java.io.IOException;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongFunction;

/**
 * How tasks reach their application's coordinator, in whatever JVM it runs. Thread safe; calls
 * block until answered and fail with {@link IOException} or {@link StatusException}.
 */
public final class CoordinatorClient {
  private final ClientContext context;
  private final String appId;
  private final ServerAddress coordinator;

  /**
   * The moves asked for and not answered yet, by what failed (shuffle, partition, epoch, and
   * whether a server failed under it): every push of a partition that failed the same way shares
   * one request, so a server that goes away under thousands of pushes costs its coordinator a
   * request per partition, not per push.
   */
  private final Map<String, CompletableFuture<Response>> movesAsked = new ConcurrentHashMap<>();

  /** A client of {@code appId}'s coordinator at {@code coordinator}. */
  public CoordinatorClient(ClientContext context, String appId, ServerAddress coordinator) {
    this.context = context;
    this.appId = appId;
    this.coordinator = coordinator;
  }

  /** The application whose coordinator this is. */
  public String appId() {
    return appId;
  }

  /** The current location of every partition of the shuffle. */
  public PartitionLocations locations(int shuffleId) throws IOException, StatusException {
    return locationsOf(
        ask(
            "the locations of shuffle " + shuffleId,
            id ->
                Messages.request(
                    MessageType.GET_SHUFFLE_LOCATIONS,
                    GetShuffleLocations.newBuilder()
                        .setRequestId(id)
                        .setShuffleId(shuffleId)
                        .build(),
                    id)));
  }

  /**
   * Sends a request and waits up to {@code sluice.network.requestTimeout} for its answer.
   *
   * @throws IOException naming the coordinator and {@code what} was asked for when no answer came
   */
  private Response ask(String what, LongFunction<Message> request)
      throws IOException, StatusException {
    try {
      return context.call(appId, coordinator, request);
    } catch (IOException e) {
      throw new IOException(
          "The Sluice coordinator at "
              + ClientContext.format(coordinator)
              + " gave no answer about "
              + what
              + ": "
              + e.getMessage(),
          e);
    }
  }

  private static PartitionLocations locationsOf(Response answer) throws StatusException {
    try {
      return PartitionLocations.fromProto(answer.getLocations());
    } catch (IllegalArgumentException e) {
      throw new StatusException(
          Status.INTERNAL_ERROR, "the coordinator answered " + e.getMessage());
    }
  }

  /**
   * The open generation of a shuffle (see {@link ShuffleCoordinator#openGeneration}) and the
   * current location of each of its partitions: {@link PartitionLocations#shuffleId()} is the id to
   * push to and to report map ends to.
   */
  public PartitionLocations openGeneration(int shuffleId) throws IOException, StatusException {
    return locationsOf(
        ask(
            "the open generation of shuffle " + shuffleId,
            id ->
                Messages.request(
                    MessageType.GET_SHUFFLE_LOCATIONS,
                    GetShuffleLocations.newBuilder()
                        .setRequestId(id)
                        .setShuffleId(shuffleId)
                        .setOpenGeneration(true)
                        .build(),
                    id)));
  }

  /**
   * The most records one MapperEnd carries (at most 28 bytes each on the wire, so a page stays far
   * below the coordinator's 1 MiB request bound); an attempt with more sends them in several.
   */
  static final int MAX_RECORDS_PER_MAPPER_END = 16_384;

  /**
   * Reports that a map attempt pushed all its data, to the servers listed, and what the servers
   * acknowledged of it per partition ({@link PartitionRecords}), which readers compare with what
   * they read. The records go in pages of at most {@link #MAX_RECORDS_PER_MAPPER_END}, the last one
   * ending the map. The first attempt to report wins.
   */
  public void mapperEnd(
      int shuffleId,
      int mapIndex,
      int attempt,
      Collection<ServerAddress> serversWritten,
      PartitionRecords records)
      throws IOException, StatusException {
    int from = 0;
    do {
      int to = Math.min(records.size(), from + MAX_RECORDS_PER_MAPPER_END);
      boolean more = to < records.size();
      PartitionRecordList page = records.encode(from, to);
      reportEnd(
          MapperEnd.newBuilder()
              .setShuffleId(shuffleId)
              .setMapIndex(mapIndex)
              .setAttempt(attempt)
              .addAllServersWritten(serversWritten)
              .setWithRecords(true)
              .setRecords(page)
              .setMoreRecords(more));
      from = to;
    } while (from < records.size());
  }

  /**
   * Reports that a map attempt pushed all its data, to the servers listed, without records: readers
   * do not compare what they read of it (a writer that does not count what it pushed). The first
   * attempt to report wins.
   */
  public void mapperEnd(
      int shuffleId, int mapIndex, int attempt, Collection<ServerAddress> serversWritten)
      throws IOException, StatusException {
    reportEnd(
        MapperEnd.newBuilder()
            .setShuffleId(shuffleId)
            .setMapIndex(mapIndex)
            .setAttempt(attempt)
            .addAllServersWritten(serversWritten));
  }

  /** Sends one MapperEnd (its request id set here) and waits for the answer. */
  private void reportEnd(MapperEnd.Builder end) throws IOException, StatusException {
    ask(
        "the end of map "
            + end.getMapIndex()
            + " attempt "
            + end.getAttempt()
            + " of shuffle "
            + end.getShuffleId(),
        id -> Messages.request(MessageType.MAPPER_END, end.setRequestId(id).build(), id));
  }

  /**
   * The committed splits of partitions [startPartition, endPartition) and the winning attempt of
   * every map; waits for the commit (up to {@code sluice.coordinator.commitTimeout}).
   *
   * @throws StatusException {@code NOT_READY} naming the application, shuffle, partitions and what
   *     the commit still waited for (maps that never reported their end, servers that did not
   *     answer the commit) when the bound passed; {@code SHUFFLE_NOT_REGISTERED} when the shuffle
   *     was unregistered
   * @throws IOException naming the coordinator when it gave no answer at all
   */
  public CommittedShuffle committedSplits(int shuffleId, int startPartition, int endPartition)
      throws IOException, StatusException {
    return committedSplits(shuffleId, startPartition, endPartition, false);
  }

  /**
   * Like {@link #committedSplits(int, int, int)}; with {@code commitNow} the caller vouches that
   * every map attempt it reads has ended, and the shuffle is committed now if its commit has not
   * started (a generation some of whose maps never run).
   *
   * <p>The coordinator answers in pages (see {@link ShuffleCommit#answer}); this asks for every
   * page of the range and returns them as one: the first page's maps, winners and lost partitions,
   * every page's splits, no {@code next}.
   */
  public CommittedShuffle committedSplits(
      int shuffleId, int startPartition, int endPartition, boolean commitNow)
      throws IOException, StatusException {
    return committedSplits(
        shuffleId, startPartition, endPartition, commitNow, 0, Integer.MAX_VALUE);
  }

  /**
   * Like {@link #committedSplits(int, int, int, boolean)}, with the records ({@link
   * CommittedShuffle#getMapRecordsList}) of maps [startMapIndex, endMapIndex) only: a reader of
   * some maps (a skew split) gets no records of the others.
   */
  public CommittedShuffle committedSplits(
      int shuffleId,
      int startPartition,
      int endPartition,
      boolean commitNow,
      int startMapIndex,
      int endMapIndex)
      throws IOException, StatusException {
    Range range = new Range(shuffleId, startPartition, endPartition, startMapIndex, endMapIndex);
    CommittedShuffle first = committedPage(range, commitNow, null, null);
    if (!first.hasNext() && !first.hasRecordsNext()) {
      return first;
    }
    CommittedShuffle.Builder all = first.toBuilder().clearNext().clearRecordsNext();
    SplitCursor next = first.hasNext() ? first.getNext() : null;
    RecordCursor recordsNext = first.hasRecordsNext() ? first.getRecordsNext() : null;
    while (next != null || recordsNext != null) {
      CommittedShuffle page = committedPage(range, false, next, recordsNext);
      all.addAllSplits(page.getSplitsList());
      all.addAllMapRecords(page.getMapRecordsList());
      if (page.hasNext() && (next == null || SplitPages.key(page.getNext()) <= SplitPages.key(next))
          || page.hasRecordsNext()
              && recordsNext != null
              && !after(page.getRecordsNext(), recordsNext)) {
        throw new StatusException(
            Status.INTERNAL_ERROR,
            "the coordinator's answer for shuffle "
                + shuffleId
                + " partitions ["
                + startPartition
                + ", "
                + endPartition
                + ") did not advance past "
                + (next != null
                    ? "partition " + next.getPartitionId() + " epoch " + next.getEpoch()
                    : "the records of map " + recordsNext.getMapIndex()));
      }
      next = page.hasNext() ? page.getNext() : null;
      recordsNext = page.hasRecordsNext() ? page.getRecordsNext() : null;
    }
    return all.build();
  }

  private static boolean after(RecordCursor a, RecordCursor b) {
    if (a.getMapIndex() != b.getMapIndex()) {
      return a.getMapIndex() > b.getMapIndex();
    }
    if (a.getAttempt() != b.getAttempt()) {
      return a.getAttempt() > b.getAttempt();
    }
    return a.getPartitionId() > b.getPartitionId();
  }

  /** What a reader asks the commit for. */
  private static final class Range {
    final int shuffleId;
    final int startPartition;
    final int endPartition;
    final int startMapIndex;
    final int endMapIndex;

    Range(int shuffleId, int startPartition, int endPartition, int startMap, int endMap) {
      this.shuffleId = shuffleId;
      this.startPartition = startPartition;
      this.endPartition = endPartition;
      this.startMapIndex = Math.max(0, startMap);
      this.endMapIndex = Math.max(this.startMapIndex, endMap);
    }
  }

  /**
   * One page of the answer. The coordinator answers within {@code sluice.coordinator.commitTimeout}
   * (naming what the commit waits for when it gives up); this waits a request timeout longer, so
   * that its own error, naming the coordinator, comes only when the coordinator does not answer.
   */
  private CommittedShuffle committedPage(
      Range range, boolean commitNow, SplitCursor resume, RecordCursor recordsResume)
      throws IOException, StatusException {
    long waitMillis =
        context.conf().commitTimeoutMillis() + context.networkConf().requestTimeoutMillis();
    try {
      return answerPage(range, commitNow, resume, recordsResume, waitMillis);
    } catch (IOException e) {
      throw new IOException(
          "The coordinator at "
              + ClientContext.format(coordinator)
              + " gave no answer for the commit of shuffle "
              + range.shuffleId
              + " partitions ["
              + range.startPartition
              + ", "
              + range.endPartition
              + ") within "
              + waitMillis
              + " ms (sluice.coordinator.commitTimeout plus sluice.network.requestTimeout): "
              + e.getMessage(),
          e);
    }
  }

  private CommittedShuffle answerPage(
      Range range,
      boolean commitNow,
      SplitCursor resume,
      RecordCursor recordsResume,
      long waitMillis)
      throws IOException, StatusException {
    return context
        .call(
            appId,
            coordinator,
            id -> {
              GetCommittedSplits.Builder request =
                  GetCommittedSplits.newBuilder()
                      .setRequestId(id)
                      .setShuffleId(range.shuffleId)
                      .setStartPartition(range.startPartition)
                      .setEndPartition(range.endPartition)
                      .setCommit(commitNow)
                      .setStartMapIndex(range.startMapIndex)
                      .setEndMapIndex(range.endMapIndex);
              if (resume != null) {
                request.setResume(resume);
              }
              if (recordsResume != null) {
                request.setRecordsResume(recordsResume);
              }
              return Messages.request(MessageType.GET_COMMITTED_SPLITS, request.build(), id);
            },
            waitMillis)
        .getCommitted();
  }

  /**
   * Asks for a new location of a partition whose split refused more data (full, or a hard split):
   * see {@link ShuffleCoordinator#revive}. Never waits; fails with an {@link IOException} naming
   * the coordinator when it gives no answer.
   */
  public CompletableFuture<PartitionLocation> reviveAsync(
      int shuffleId, int partitionId, int failedEpoch, String reason) {
    String what =
        "a new location for shuffle "
            + shuffleId
            + " partition "
            + partitionId
            + " after epoch "
            + failedEpoch;
    return askMove(what, reviveRequest(shuffleId, partitionId, failedEpoch, reason, false, false))
        .thenApply(Response::getLocation);
  }

  /**
   * Reports that the server under a partition's location failed ({@code replicaFailed}: its
   * replica) and gets every location of the shuffle after the coordinator moved all the partitions
   * that server held (see {@link ShuffleCoordinator#reviveAfterServerFailure}). Never waits.
   */
  public CompletableFuture<PartitionLocations> reviveAfterServerFailureAsync(
      int shuffleId, int partitionId, int failedEpoch, String reason, boolean replicaFailed) {
    return askMove(
            "new locations for shuffle "
                + shuffleId
                + " after a server failed under partition "
                + partitionId
                + " epoch "
                + failedEpoch
                + (replicaFailed ? " (its replica)" : ""),
            reviveRequest(shuffleId, partitionId, failedEpoch, reason, true, replicaFailed))
        .thenApply(
            answer -> {
              try {
                return locationsOf(answer);
              } catch (StatusException e) {
                throw new CompletionException(e);
              }
            });
  }

  /**
   * Asks for a move ({@code what} names it, and the request it makes shares one answer with the
   * same request in flight: see {@link #movesAsked}), and asks again while the coordinator answers
   * that every server that could take the partition is away or stopping ({@code CONGESTED}, {@link
   * ServersAwayException}): restarting servers come back within {@code
   * sluice.client.serverRestartWait}, so the writer waits for them instead of failing its task.
   * Never blocks.
   */
  private CompletableFuture<Response> askMove(String what, LongFunction<Message> request) {
    CompletableFuture<Response> asked = new CompletableFuture<>();
    CompletableFuture<Response> shared = movesAsked.putIfAbsent(what, asked);
    if (shared != null) {
      return shared;
    }
    context
        .restarts()
        .retryAsync(
            coordinator,
            "asking the coordinator for " + what,
            failure ->
                failure instanceof StatusException
                    && ((StatusException) failure).status() == Status.CONGESTED,
            () -> askAsync(what, request))
        .whenComplete(
            (answer, error) -> {
              movesAsked.remove(what, asked);
              if (error != null) {
                asked.completeExceptionally(error);
              } else {
                asked.complete(answer);
              }
            });
    return asked;
  }

  private static LongFunction<Message> reviveRequest(
      int shuffleId,
      int partitionId,
      int failedEpoch,
      String reason,
      boolean serverFailed,
      boolean replicaFailed) {
    return id ->
        Messages.request(
            MessageType.REVIVE_PARTITION,
            RevivePartition.newBuilder()
                .setRequestId(id)
                .setShuffleId(shuffleId)
                .setPartitionId(partitionId)
                .setFailedEpoch(failedEpoch)
                .setReason(reason)
                .setServerFailed(serverFailed)
                .setReplicaFailed(replicaFailed)
                .build(),
            id);
  }

  /**
   * Like {@link #ask} without waiting: the answer's header, or the failure naming the coordinator.
   */
  private CompletableFuture<Response> askAsync(String what, LongFunction<Message> request) {
    return context
        .callAsync(appId, coordinator, request)
        .handle(
            (message, error) -> {
              if (error != null) {
                Throwable cause = error instanceof CompletionException ? error.getCause() : error;
                if (cause instanceof StatusException) {
                  throw new CompletionException(cause);
                }
                throw new CompletionException(
                    new IOException(
                        "The Sluice coordinator at "
                            + ClientContext.format(coordinator)
                            + " gave no answer about "
                            + what
                            + ": "
                            + cause.getMessage(),
                        cause));
              }
              try {
                return message.header(Response.class);
              } finally {
                message.release();
              }
            });
  }
}
