package io.sluice.server;

import io.netty.buffer.ByteBuf;
import io.sluice.common.Ids;
import io.sluice.network.FrameDecoder;
import io.sluice.network.Message;
import io.sluice.protocol.BatchFormat;
import io.sluice.protocol.RequestLimits;
import io.sluice.protocol.proto.PushData;
import io.sluice.protocol.proto.PushMerged;
import io.sluice.protocol.proto.Status;
import io.sluice.server.memory.MemoryBudget;
import io.sluice.server.storage.QuotaExceededException;
import io.sluice.server.storage.ReducePartitionSplit;
import io.sluice.server.storage.ServerShuffle;
import io.sluice.server.storage.ShuffleRegistry;
import io.sluice.server.storage.ShuffleShape;
import io.sluice.server.storage.SplitKey;
import io.sluice.server.storage.StorageUnavailableException;
import java.util.Arrays;

/**
 * Takes a pushed body into its split, or says why not: the shuffle is unknown, the body is
 * malformed, a batch fails its CRC32C check ({@code sluice.integrity.verifyOnPush} on), the split
 * is committed or moved on, or the body does not fit in memory. Every answer names the application,
 * shuffle and partition. Thread safe.
 */
final class PushIntake {
  /** What became of a push: its status and, unless OK, a message a person can act on. */
  static final class Outcome {
    final Status status;
    final String message;

    private Outcome(Status status, String message) {
      this.status = status;
      this.message = message;
    }

    /** True when the server took the body (OK or SOFT_SPLIT). */
    boolean taken() {
      return status == Status.OK || status == Status.SOFT_SPLIT;
    }
  }

  private static final Outcome OK = new Outcome(Status.OK, "");

  private final ShuffleRegistry registry;
  private final MemoryBudget memory;
  private final ServerMetrics metrics;
  private final boolean verifyOnPush;
  private final ApplicationLimits limits;

  /**
   * @param verifyOnPush whether every batch's checksum is verified before the body is taken
   * @param limits what one application may store here
   */
  PushIntake(
      ShuffleRegistry registry,
      MemoryBudget memory,
      ServerMetrics metrics,
      boolean verifyOnPush,
      ApplicationLimits limits) {
    this.limits = limits;
    this.registry = registry;
    this.memory = memory;
    this.metrics = metrics;
    this.verifyOnPush = verifyOnPush;
  }

  /**
   * Takes the body of {@code request}, a push whose body the decoder reserved in the memory budget
   * ({@link Message#reservedBytes()}). When the outcome is taken, the split owns the body and its
   * reservation ({@link Message#handOver()}); otherwise both stay with the request, whose owner
   * releases them.
   */
  Outcome accept(PushData h, Message request) {
    ByteBuf body = request.body();
    ServerShuffle shuffle = registry.get(h.getAppId(), h.getShuffleId());
    if (shuffle == null) {
      return notRegistered(h.getAppId(), h.getShuffleId());
    }
    // read before the split takes the body: once taken, a flusher may write and release it
    int bytes = body.readableBytes();
    String overLimit = limits.storeRefusal(h.getAppId(), bytes);
    if (overLimit != null) {
      return new Outcome(Status.QUOTA_EXCEEDED, overLimit);
    }
    Outcome outcome =
        tryAccept(
            shuffle,
            h.getPartitionId(),
            h.getEpoch(),
            body,
            request.reservedBytes() == bytes,
            false);
    if (outcome.taken()) {
      countPushed(shuffle, bytes, 1);
      request.handOver();
    }
    return outcome;
  }

  /**
   * Takes each part of a merged push ({@code PushMerged}, whose body the decoder reserved whole)
   * into its split, as {@link #accept(PushData, Message)} takes one push: a part that is taken
   * takes its share of the reservation, and a large part its piece of the body ({@link
   * FrameDecoder#retainedPart}; a small one is copied from a {@link FrameDecoder#borrowedPart});
   * the rest stays with the request, whose owner releases it. The request must be well formed
   * ({@link #mergedProblem}).
   *
   * @return the outcome of each part, in order
   */
  Outcome[] acceptMerged(PushMerged h, Message request) {
    Outcome[] outcomes = new Outcome[h.getPartitionIdsCount()];
    // every part is of one shuffle: looked up, and its bytes counted, once per request
    ServerShuffle shuffle = registry.get(h.getAppId(), h.getShuffleId());
    if (shuffle == null) {
      Arrays.fill(outcomes, notRegistered(h.getAppId(), h.getShuffleId()));
      return outcomes;
    }
    ByteBuf body = request.body();
    String overLimit = limits.storeRefusal(h.getAppId(), body.readableBytes());
    if (overLimit != null) {
      Arrays.fill(outcomes, new Outcome(Status.QUOTA_EXCEEDED, overLimit));
      return outcomes;
    }
    boolean reserved = request.reservedBytes() == body.readableBytes();
    long taken = 0;
    int parts = 0;
    int offset = body.readerIndex();
    for (int i = 0; i < outcomes.length; i++) {
      int length = h.getLengths(i);
      // a small part is copied by its split: a view of it will do, without a reference count
      // taken and dropped on the request's buffer for every part
      boolean small = length <= FrameDecoder.SHARED_PART_MAX;
      ByteBuf part =
          small
              ? FrameDecoder.borrowedPart(body, offset, length)
              : FrameDecoder.retainedPart(body, offset, length);
      offset += length;
      outcomes[i] = tryAccept(shuffle, h.getPartitionIds(i), h.getEpochs(i), part, reserved, small);
      if (outcomes[i].taken()) {
        request.handOverReservation(length);
        taken += length;
        parts++;
      } else if (!small) {
        part.release();
      }
    }
    countPushed(shuffle, taken, parts);
    return outcomes;
  }

  /**
   * What is wrong with the shape of a merged push (list lengths, part count, part lengths against
   * the body), or null.
   */
  static String mergedProblem(PushMerged h, long bodyLength) {
    int parts = h.getPartitionIdsCount();
    if (parts == 0 || h.getEpochsCount() != parts || h.getLengthsCount() != parts) {
      return "a merged push needs equally long, non-empty partition_ids, epochs and lengths; got "
          + parts
          + ", "
          + h.getEpochsCount()
          + " and "
          + h.getLengthsCount();
    }
    if (parts > RequestLimits.MAX_MERGED_PARTS) {
      return "a merged push has "
          + parts
          + " parts, more than RequestLimits.MAX_MERGED_PARTS ("
          + RequestLimits.MAX_MERGED_PARTS
          + ")";
    }
    long sum = 0;
    for (int i = 0; i < parts; i++) {
      if (h.getLengths(i) <= 0) {
        return "part " + i + " of a merged push has length " + h.getLengths(i) + ", not > 0";
      }
      sum += h.getLengths(i);
    }
    if (sum != bodyLength) {
      return "the parts of a merged push add up to "
          + sum
          + " bytes but its body has "
          + bodyLength;
    }
    return null;
  }

  private static Outcome notRegistered(String appId, int shuffleId) {
    return new Outcome(
        Status.SHUFFLE_NOT_REGISTERED,
        Ids.shuffle(appId, shuffleId) + " is not registered on this server");
  }

  /**
   * Counts bytes taken from one request, in the server's and the application's totals, and the
   * batches they came in.
   */
  private void countPushed(ServerShuffle shuffle, long bytes, int batches) {
    if (bytes > 0) {
      metrics.bytesPushed().mark(bytes);
      metrics.batchesPushed().mark(batches);
      registry.countPushed(shuffle, bytes);
    }
  }

  /**
   * Takes a push's body into split {@code (partitionId, epoch)} of {@code shuffle}; the caller
   * counts the bytes of a body taken.
   *
   * @param copy whether the split copies the body, which then stays the caller's (a borrowed small
   *     part); else the split takes the body itself
   */
  private Outcome tryAccept(
      ServerShuffle shuffle,
      int partitionId,
      int epoch,
      ByteBuf body,
      boolean reserved,
      boolean copy) {
    ShuffleShape shape = shuffle.shape();
    String problem = shape.checkPartition(partitionId);
    if (problem == null) {
      problem =
          RequestLimits.checkIndex(
              "epoch", epoch, RequestLimits.MAX_EPOCHS, "RequestLimits.MAX_EPOCHS");
    }
    if (problem == null) {
      problem = BatchFormat.check(body, (m, a, b, l) -> {}, shape.numMaps());
    }
    if (problem != null) {
      return bad("malformed push for " + splitOf(shuffle, partitionId, epoch) + ": " + problem);
    }
    if (verifyOnPush) {
      problem = BatchFormat.checksumProblems(body);
      if (problem != null) {
        metrics.checksumFailures().inc();
        return bad(
            "corrupt push for "
                + splitOf(shuffle, partitionId, epoch)
                + ": "
                + problem
                + " (sluice.integrity.verifyOnPush); the data changed between the map task and"
                + " this server");
      }
    }
    if (!reserved || memory.congestFirst(shuffle.appId())) {
      // the body arrived whole while the budget was full (the decoder could not reserve it), or
      // the budget is nearly full and this application holds more than its share: the last of it
      // goes to the others
      metrics.pushesCongested().mark();
      return new Outcome(
          Status.CONGESTED,
          memory.congestedMessage(splitOf(shuffle, partitionId, epoch).toString()));
    }
    ReducePartitionSplit target;
    try {
      target = shuffle.splitForPush(partitionId, epoch);
    } catch (StorageUnavailableException e) {
      return new Outcome(Status.HARD_SPLIT, e.getMessage());
    } catch (QuotaExceededException e) {
      return new Outcome(Status.QUOTA_EXCEEDED, e.getMessage());
    }
    if (target == null) {
      return new Outcome(Status.STAGE_ENDED, shuffle + " is committed; no more pushes");
    }
    Status result = copy ? target.appendCopy(body) : target.append(body);
    switch (result) {
      case OK:
        return OK;
      case SOFT_SPLIT:
        metrics.softSplits().mark();
        return new Outcome(
            Status.SOFT_SPLIT, target.key() + " took the data; move the partition to a new split");
      case STAGE_ENDED:
        return new Outcome(result, target.key() + " is committed; no more pushes");
      default:
        return new Outcome(
            result,
            target.key()
                + " takes no more data (a write failed, it was dropped or the server is"
                + " stopping); push to a new location");
    }
  }

  /** The split a push names, for its error message. */
  private static SplitKey splitOf(ServerShuffle shuffle, int partitionId, int epoch) {
    return new SplitKey(shuffle.appId(), shuffle.shuffleId(), partitionId, epoch);
  }

  private Outcome bad(String message) {
    metrics.badRequests().mark();
    return new Outcome(Status.BAD_REQUEST, message);
  }
}
