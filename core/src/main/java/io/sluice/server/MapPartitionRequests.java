package io.sluice.server;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.sluice.common.Ids;
import io.sluice.network.Message;
import io.sluice.protocol.MapBlockFormat;
import io.sluice.protocol.MapPartitionId;
import io.sluice.protocol.Messages;
import io.sluice.protocol.PartitionRecords;
import io.sluice.protocol.RequestLimits;
import io.sluice.protocol.proto.CommitMapPartition;
import io.sluice.protocol.proto.MapPartitionCommitted;
import io.sluice.protocol.proto.MapPartitionRef;
import io.sluice.protocol.proto.MapStreamOpened;
import io.sluice.protocol.proto.OpenMapStream;
import io.sluice.protocol.proto.ReadMapBuffer;
import io.sluice.protocol.proto.RegionData;
import io.sluice.protocol.proto.RegionFinish;
import io.sluice.protocol.proto.RegionStart;
import io.sluice.protocol.proto.ReleaseMapPartition;
import io.sluice.protocol.proto.Status;
import io.sluice.protocol.proto.WriteCredit;
import io.sluice.server.memory.MemoryBudget;
import io.sluice.server.read.MapReadStream;
import io.sluice.server.read.MapStreams;
import io.sluice.server.storage.CommittedMapPartition;
import io.sluice.server.storage.MapPartitionFile;
import io.sluice.server.storage.QuotaExceededException;
import io.sluice.server.storage.ServerShuffle;
import io.sluice.server.storage.ShuffleRegistry;
import io.sluice.server.storage.StorageUnavailableException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The map partition (Flink) requests: writing regions, committing, releasing, and credit-based
 * reads. Every answer that is not OK names the partition. Runs on network threads; commits and
 * reads answer from flusher and IO scheduler threads.
 */
final class MapPartitionRequests {
  private static final Logger LOG = LoggerFactory.getLogger(MapPartitionRequests.class);

  private final ShuffleRegistry registry;
  private final MemoryBudget memory;
  private final ServerMetrics metrics;
  private final FlowControl flowControl;
  private final MapStreams streams;
  private final int writeCredits;
  private final boolean verifyOnPush;
  private final ApplicationLimits limits;

  /**
   * @param verifyOnPush whether every block's checksum is verified before a frame is taken
   * @param limits what one application may store here
   */
  MapPartitionRequests(
      ShuffleRegistry registry,
      MemoryBudget memory,
      ServerMetrics metrics,
      FlowControl flowControl,
      MapStreams streams,
      int writeCredits,
      boolean verifyOnPush,
      ApplicationLimits limits) {
    this.limits = limits;
    this.registry = registry;
    this.memory = memory;
    this.metrics = metrics;
    this.flowControl = flowControl;
    this.streams = streams;
    this.writeCredits = writeCredits;
    this.verifyOnPush = verifyOnPush;
  }

  private ServerShuffle shuffle(MapPartitionRef ref) {
    MapPartitionId key = MapPartitionId.of(ref);
    ServerShuffle shuffle = registry.get(key.appId(), key.shuffleId());
    if (shuffle == null) {
      throw new StatusError(
          Status.SHUFFLE_NOT_REGISTERED,
          Ids.shuffle(key.appId(), key.shuffleId())
              + " is not registered on this server; cannot serve "
              + key);
    }
    return shuffle;
  }

  /** Checks the map index and attempt of {@code ref} against the shuffle's shape. */
  private static void checkRef(ServerShuffle shuffle, MapPartitionRef ref) {
    String problem = shuffle.shape().checkMap(ref.getMapIndex());
    if (problem == null && ref.getAttempt() < 0) {
      problem = "attempt " + ref.getAttempt() + " is negative";
    }
    if (problem != null) {
      throw new IllegalArgumentException(problem + " in " + MapPartitionId.of(ref));
    }
  }

  private MapPartitionFile existing(MapPartitionRef ref) {
    return existing(shuffle(ref), ref);
  }

  private static MapPartitionFile existing(ServerShuffle shuffle, MapPartitionRef ref) {
    checkRef(shuffle, ref);
    MapPartitionFile file = shuffle.mapPartition(ref.getMapIndex(), ref.getAttempt());
    if (file == null) {
      throw new StatusError(
          Status.NOT_FOUND,
          MapPartitionId.of(ref)
              + " is not on this server (never written here, released, or lost in a restart)");
    }
    return file;
  }

  private Message credit(long requestId) {
    int credits = memory.state() == MemoryBudget.State.ACCEPTING ? writeCredits : 1;
    return Messages.response(
        Messages.okBuilder(requestId)
            .setWriteCredit(WriteCredit.newBuilder().setCredits(credits))
            .build());
  }

  Message regionStart(RegionStart h) {
    MapPartitionRef ref = h.getPartition();
    ServerShuffle shuffle = shuffle(ref);
    checkRef(shuffle, ref);
    int subpartitions = h.getNumSubpartitions();
    int most = Math.min(shuffle.shape().numPartitions(), RequestLimits.MAX_SUBPARTITIONS);
    if (subpartitions < 1 || subpartitions > most) {
      throw new IllegalArgumentException(
          "num_subpartitions "
              + subpartitions
              + " of "
              + MapPartitionId.of(ref)
              + " is outside [1, "
              + most
              + "] (the shuffle's num_partitions, at most RequestLimits.MAX_SUBPARTITIONS)");
    }
    if (h.getRegionIndex() < 0 || h.getRegionIndex() >= RequestLimits.MAX_REGIONS) {
      throw new IllegalArgumentException(
          RequestLimits.checkIndex(
              "region_index",
              h.getRegionIndex(),
              RequestLimits.MAX_REGIONS,
              "RequestLimits.MAX_REGIONS"));
    }
    MapPartitionFile file;
    try {
      file =
          shuffle.mapPartitionForRegion(
              ref.getMapIndex(), ref.getAttempt(), h.getNumSubpartitions(), h.getRegionIndex());
    } catch (StorageUnavailableException e) {
      return Messages.error(h.getRequestId(), Status.HARD_SPLIT, e.getMessage());
    } catch (QuotaExceededException e) {
      return Messages.error(h.getRequestId(), Status.QUOTA_EXCEEDED, e.getMessage());
    }
    file.startRegion(h.getRegionIndex(), h.getNumSubpartitions(), h.getBroadcast());
    return credit(h.getRequestId());
  }

  /**
   * Appends the body of {@code request}, reserved in the memory budget by the decoder; the
   * partition takes the body and its reservation ({@link Message#handOver()}) when it keeps them,
   * else they stay with the request.
   */
  Message regionData(Channel channel, RegionData h, Message request) {
    ByteBuf body = request.body();
    int bytes = body.readableBytes();
    ServerShuffle shuffle = shuffle(h.getPartition());
    MapPartitionFile file = existing(shuffle, h.getPartition());
    if (!file.isNextFrame(h.getSequence())) {
      return Messages.error(
          h.getRequestId(),
          Status.CONGESTED,
          "an earlier frame of " + file.key() + " was refused; send again from there");
    }
    String overLimit = limits.storeRefusal(file.key().appId(), bytes);
    if (overLimit != null) {
      return Messages.error(h.getRequestId(), Status.QUOTA_EXCEEDED, overLimit);
    }
    if (request.reservedBytes() != bytes || memory.congestFirst(file.key().appId())) {
      // the frame arrived whole while the budget was full (the decoder could not reserve it), or
      // the budget is nearly full and this application holds more than its share
      metrics.pushesCongested().mark();
      return Messages.error(
          h.getRequestId(),
          Status.CONGESTED,
          memory.congestedMessage("region data of " + file.key()));
    }
    if (verifyOnPush) {
      String problem = MapBlockFormat.checksumProblems(body);
      if (problem != null) {
        metrics.checksumFailures().inc();
        throw new IllegalArgumentException(
            "corrupt region data for "
                + file.key()
                + " (frame "
                + h.getSequence()
                + " of region "
                + h.getRegionIndex()
                + "): "
                + problem
                + " (sluice.integrity.verifyOnPush); the data changed between the producer and"
                + " this server");
      }
    }
    if (!file.append(h.getRegionIndex(), h.getSequence(), body)) {
      metrics.pushesCongested().mark();
      return Messages.error(
          h.getRequestId(),
          Status.CONGESTED,
          memory.congestedMessage("the index of region data of " + file.key()));
    }
    request.handOver();
    metrics.bytesPushed().mark(bytes);
    metrics.batchesPushed().mark();
    registry.countPushed(shuffle, bytes);
    if (h.getReplica()) {
      metrics.replicaBytesPushed().mark(bytes);
    }
    flowControl.pushedOn(channel, file.key().appId(), h.getReplica());
    return credit(h.getRequestId());
  }

  Message regionFinish(RegionFinish h) {
    existing(h.getPartition()).finishRegion(h.getRegionIndex());
    return Messages.ok(h.getRequestId());
  }

  void commit(Channel channel, CommitMapPartition h) {
    MapPartitionRef ref = h.getPartition();
    ServerShuffle shuffle = shuffle(ref);
    MapPartitionFile file = existing(ref);
    if (h.getWithRecords()) {
      PartitionRecords records =
          PartitionRecords.decode(h.getSubpartitionRecords(), "the commit of " + file.key());
      if (records.size() > 0 && records.partition(records.size() - 1) >= file.numSubpartitions()) {
        throw new IllegalArgumentException(
            "the commit of "
                + file.key()
                + " has records of subpartition "
                + records.partition(records.size() - 1)
                + " of "
                + file.numSubpartitions());
      }
      file.setRecords(records);
    }
    shuffle
        .commitMapPartition(file, h.getNumRegions())
        .whenComplete(
            (c, error) -> {
              if (error == null) {
                channel.writeAndFlush(
                    Messages.response(
                        Messages.okBuilder(h.getRequestId())
                            .setMapCommitted(
                                MapPartitionCommitted.newBuilder()
                                    .setLength(c.length())
                                    .setNumRegions(c.numRegions()))
                            .build()));
                return;
              }
              Throwable cause = error instanceof CompletionException ? error.getCause() : error;
              LOG.error("Commit of {} failed: {}", file.key(), cause.getMessage());
              channel.writeAndFlush(
                  Messages.error(
                      h.getRequestId(),
                      cause instanceof IllegalArgumentException
                          ? Status.BAD_REQUEST
                          : Status.INTERNAL_ERROR,
                      "commit of " + file.key() + " failed: " + cause.getMessage()));
            });
  }

  CompletableFuture<Void> release(ReleaseMapPartition h) {
    MapPartitionRef ref = h.getPartition();
    MapPartitionId key = MapPartitionId.of(ref);
    ServerShuffle shuffle = registry.get(key.appId(), key.shuffleId());
    return shuffle == null
        ? CompletableFuture.completedFuture(null)
        : shuffle.releaseMapPartition(ref.getMapIndex(), ref.getAttempt());
  }

  /**
   * Opens a read stream; the answer is sent from an opener thread once the partition's index is
   * read (never on the event loop). Returns null then, or an error answered at once.
   */
  Message openStream(Channel channel, OpenMapStream h) {
    MapPartitionFile file = existing(h.getPartition());
    CommittedMapPartition committed = file.committed();
    if (committed == null) {
      return Messages.error(
          h.getRequestId(),
          Status.NOT_FOUND,
          file.key() + " is not committed on this server; its producer has not finished");
    }
    streams
        .openAsync(channel, committed, h.getStartSubpartition(), h.getEndSubpartition())
        .whenComplete((stream, error) -> channel.writeAndFlush(opened(h, file, stream, error)));
    return null;
  }

  private Message opened(
      OpenMapStream h, MapPartitionFile file, MapReadStream stream, Throwable error) {
    if (error instanceof IllegalArgumentException) {
      metrics.badRequests().mark();
      return Messages.error(h.getRequestId(), Status.BAD_REQUEST, error.getMessage());
    }
    if (error instanceof QuotaExceededException) {
      return Messages.error(h.getRequestId(), Status.QUOTA_EXCEEDED, error.getMessage());
    }
    if (error != null) {
      return Messages.error(
          h.getRequestId(),
          Status.NOT_FOUND,
          "cannot read " + file.key() + ": " + error.getMessage());
    }
    if (stream == null) {
      return Messages.error(
          h.getRequestId(),
          Status.BAD_REQUEST,
          "cannot read "
              + file.key()
              + ": the connection holds too many open streams"
              + " (sluice.read.maxStreamsPerConnection)");
    }
    MapStreamOpened.Builder answer =
        MapStreamOpened.newBuilder().setStreamId(stream.id()).setBacklog(stream.backlog());
    PartitionRecords records = file.records();
    if (records != null) {
      answer
          .setWithRecords(true)
          .setRecords(
              records.encode(
                  records.firstAtOrAfter(h.getStartSubpartition()),
                  records.firstAtOrAfter(h.getEndSubpartition() + 1)));
    }
    return Messages.response(Messages.okBuilder(h.getRequestId()).setMapStream(answer).build());
  }

  /** Returns null: the IO scheduler answers the credit. */
  Message read(Channel channel, ReadMapBuffer h) {
    if (!streams.credit(channel, h.getStreamId(), h.getRequestId())) {
      return Messages.error(
          h.getRequestId(), Status.NOT_FOUND, "no open map stream " + h.getStreamId());
    }
    return null;
  }

  /** A request refused with a status other than BAD_REQUEST; the message names what and why. */
  static final class StatusError extends RuntimeException {
    private static final long serialVersionUID = 1L;
    final Status status;

    StatusError(Status status, String message) {
      super(message, null, false, false);
      this.status = status;
    }
  }
}
