package io.sluice.server;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.FileRegion;
import io.sluice.common.CrashPoints;
import io.sluice.common.Ids;
import io.sluice.network.Message;
import io.sluice.network.RequestHandler;
import io.sluice.network.Tls;
import io.sluice.protocol.ChunkExtents;
import io.sluice.protocol.MapRanges;
import io.sluice.protocol.MessageType;
import io.sluice.protocol.Messages;
import io.sluice.protocol.SplitPages;
import io.sluice.protocol.proto.CloseStream;
import io.sluice.protocol.proto.CommitMapPartition;
import io.sluice.protocol.proto.CommitResult;
import io.sluice.protocol.proto.CommitShuffle;
import io.sluice.protocol.proto.CommittedSplit;
import io.sluice.protocol.proto.FetchChunk;
import io.sluice.protocol.proto.Heartbeat;
import io.sluice.protocol.proto.MergedPushResult;
import io.sluice.protocol.proto.OpenMapStream;
import io.sluice.protocol.proto.OpenStream;
import io.sluice.protocol.proto.PushData;
import io.sluice.protocol.proto.PushMerged;
import io.sluice.protocol.proto.ReadMapBuffer;
import io.sluice.protocol.proto.RegionData;
import io.sluice.protocol.proto.RegionFinish;
import io.sluice.protocol.proto.RegionStart;
import io.sluice.protocol.proto.RegisterShuffle;
import io.sluice.protocol.proto.ReleaseMapPartition;
import io.sluice.protocol.proto.ReportChecksumFailure;
import io.sluice.protocol.proto.Response;
import io.sluice.protocol.proto.SplitCursor;
import io.sluice.protocol.proto.Status;
import io.sluice.protocol.proto.StreamHandle;
import io.sluice.protocol.proto.UnregisterApplication;
import io.sluice.protocol.proto.UnregisterShuffle;
import io.sluice.server.memory.MemoryBudget;
import io.sluice.server.read.ChunkReader;
import io.sluice.server.read.FileAnswers;
import io.sluice.server.read.MapStreams;
import io.sluice.server.read.ReadStreams;
import io.sluice.server.sort.MapRangeReads;
import io.sluice.server.storage.CommittedSplitFile;
import io.sluice.server.storage.InMemorySplit;
import io.sluice.server.storage.QuotaExceededException;
import io.sluice.server.storage.ServerDecommissionedException;
import io.sluice.server.storage.ServerShuffle;
import io.sluice.server.storage.ShuffleRegistry;
import io.sluice.server.storage.ShuffleShape;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decodes each request, delegates it to the engine and answers it. Runs on network threads; slow
 * work (commit, file deletion) completes on flusher threads and answers from there.
 */
final class ServerRequestHandler implements RequestHandler {
  private static final Logger LOG = LoggerFactory.getLogger(ServerRequestHandler.class);

  private final ShuffleRegistry registry;
  private final ReadStreams streams;
  private final ServerMetrics metrics;
  private final FlowControl flowControl;
  private final PushIntake intake;
  private final MapRangeReads rangeReads;
  private final MapStreams mapStreams;
  private final MapPartitionRequests mapPartitions;
  private final ChunkReader chunkReader;
  private final FileAnswers fileAnswers;
  private final ApplicationLimits limits;

  ServerRequestHandler(
      ShuffleRegistry registry,
      MemoryBudget memory,
      ReadStreams streams,
      ServerMetrics metrics,
      FlowControl flowControl,
      MapRangeReads rangeReads,
      MapStreams mapStreams,
      int mapWriteCredits,
      IntegrityConf integrity,
      ChunkReader chunkReader,
      FileAnswers fileAnswers,
      ApplicationLimits limits) {
    this.registry = registry;
    this.fileAnswers = fileAnswers;
    this.streams = streams;
    this.metrics = metrics;
    this.flowControl = flowControl;
    this.intake = new PushIntake(registry, memory, metrics, integrity.verifyOnPush(), limits);
    this.rangeReads = rangeReads;
    this.mapStreams = mapStreams;
    this.chunkReader = chunkReader;
    this.limits = limits;
    this.mapPartitions =
        new MapPartitionRequests(
            registry,
            memory,
            metrics,
            flowControl,
            mapStreams,
            mapWriteCredits,
            integrity.verifyOnPush(),
            limits);
  }

  @Override
  public void handle(Channel channel, Message request) {
    long id = request.requestId();
    Message response;
    try {
      response = dispatch(channel, request);
    } catch (RuntimeException e) {
      response = failure(channel, id, request, e);
    } finally {
      // a push whose body the engine took was handed over; anything else (and its memory
      // reservation) is released here, whatever happened, errors included
      request.release();
    }
    if (response != null) {
      channel.writeAndFlush(response);
    }
  }

  /** The answer to request {@code id} ({@code what}, for the log) that failed with {@code e}. */
  private Message failure(Channel channel, long id, Object what, RuntimeException e) {
    if (e instanceof MapPartitionRequests.StatusError) {
      return Messages.error(id, ((MapPartitionRequests.StatusError) e).status, e.getMessage());
    } else if (e instanceof ServerDecommissionedException) {
      return Messages.error(id, Status.DECOMMISSIONING, e.getMessage());
    } else if (e instanceof QuotaExceededException) {
      return Messages.error(id, Status.QUOTA_EXCEEDED, e.getMessage());
    } else if (e instanceof IllegalArgumentException) {
      metrics.badRequests().mark();
      return Messages.error(id, Status.BAD_REQUEST, e.getMessage());
    }
    LOG.error("Failed to handle request {} from {}", what, channel.remoteAddress(), e);
    return Messages.error(id, Status.INTERNAL_ERROR, e.toString());
  }

  /** Returns the response, or null when it will be sent later. */
  private Message dispatch(Channel channel, Message request) {
    MessageType type = MessageType.of(request.type());
    switch (type) {
      case REGION_START:
        return mapPartitions.regionStart(request.header(RegionStart.class));
      case REGION_DATA:
        return mapPartitions.regionData(channel, request.header(RegionData.class), request);
      case REGION_FINISH:
        return mapPartitions.regionFinish(request.header(RegionFinish.class));
      case COMMIT_MAP_PARTITION:
        mapPartitions.commit(channel, request.header(CommitMapPartition.class));
        return null;
      case RELEASE_MAP_PARTITION:
        {
          ReleaseMapPartition h = request.header(ReleaseMapPartition.class);
          answerWhenDone(channel, h.getRequestId(), mapPartitions.release(h));
          return null;
        }
      case OPEN_MAP_STREAM:
        {
          return mapPartitions.openStream(channel, request.header(OpenMapStream.class));
        }
      case READ_MAP_BUFFER:
        return mapPartitions.read(channel, request.header(ReadMapBuffer.class));
      case PUSH_DATA:
        return push(channel, request);
      case PUSH_MERGED:
        return pushMerged(channel, request);
      case OPEN_STREAM:
        return openStream(channel, request);
      case FETCH_CHUNK:
        return fetchChunk(channel, request);
      case CLOSE_STREAM:
        {
          CloseStream h = request.header(CloseStream.class);
          return streams.close(channel, h.getStreamId())
                  || mapStreams.close(channel, h.getStreamId())
              ? Messages.ok(h.getRequestId())
              : Messages.error(
                  h.getRequestId(), Status.NOT_FOUND, "no open stream " + h.getStreamId());
        }
      case REPORT_CHECKSUM_FAILURE:
        {
          ReportChecksumFailure h = request.header(ReportChecksumFailure.class);
          return registry.checksumFailure(h)
              ? Messages.ok(h.getRequestId())
              : Messages.error(h.getRequestId(), Status.NOT_FOUND, "no such committed file");
        }
      case REGISTER_SHUFFLE:
        {
          RegisterShuffle h = request.header(RegisterShuffle.class);
          String badLimits = ApplicationLimits.requestProblem(h.getLimits());
          if (badLimits != null) {
            throw new IllegalArgumentException(
                "cannot register "
                    + Ids.shuffle(h.getAppId(), h.getShuffleId())
                    + ": "
                    + badLimits);
          }
          ServerShuffle shuffle =
              registry.register(
                  Ids.checkAppId(h.getAppId()),
                  checkShuffleId(h.getShuffleId()),
                  ShuffleShape.of(h.getNumMaps(), h.getNumPartitions()));
          limits.registered(h.getAppId(), h.getLimits());
          if (h.getDistributedTier()) {
            shuffle.sendEverySplitToDistributedTier();
          }
          registry.noteClusterApplication(h.getAppId(), h.getClusterAppId());
          // answered once the registration is in the state store's log (written off this thread)
          answerWhenDone(channel, h.getRequestId(), registry.recorded());
          return null;
        }
      case HEARTBEAT:
        {
          Heartbeat h = request.header(Heartbeat.class);
          return registry.heartbeat(h.getAppId())
              ? Messages.ok(h.getRequestId())
              : Messages.error(
                  h.getRequestId(),
                  Status.SHUFFLE_NOT_REGISTERED,
                  "application " + h.getAppId() + " has no shuffle registered on this server");
        }
      case COMMIT_SHUFFLE:
        commit(channel, request.header(CommitShuffle.class));
        return null;
      case UNREGISTER_SHUFFLE:
        {
          UnregisterShuffle h = request.header(UnregisterShuffle.class);
          answerWhenDone(
              channel,
              h.getRequestId(),
              registry.unregisterShuffle(h.getAppId(), h.getShuffleId()));
          return null;
        }
      case UNREGISTER_APPLICATION:
        {
          UnregisterApplication h = request.header(UnregisterApplication.class);
          answerWhenDone(channel, h.getRequestId(), registry.unregisterApplication(h.getAppId()));
          return null;
        }
      case AUTH_HELLO:
      case AUTH_PROOF:
        // with sluice.auth.enabled the connection's gate answers these before they get here
        return Messages.error(
            request.requestId(),
            Status.BAD_REQUEST,
            type
                + " is not a request this server answers: it does not authenticate connections"
                + " (sluice.auth.enabled=false)");
      default:
        return Messages.error(
            request.requestId(),
            Status.BAD_REQUEST,
            type + " is not a request this server answers");
    }
  }

  /** Answers OK once the files are gone, so a caller that got OK finds nothing left. */
  private static void answerWhenDone(
      Channel channel, long requestId, CompletableFuture<Void> done) {
    done.whenComplete(
        (v, e) ->
            channel.writeAndFlush(
                e == null
                    ? Messages.ok(requestId)
                    : Messages.error(requestId, Status.INTERNAL_ERROR, e.toString())));
  }

  /** Decodes a push, hands it to the intake (which takes the body if it keeps it), answers. */
  private Message push(Channel channel, Message request) {
    PushData h = request.header(PushData.class);
    long bodyBytes = request.bodyLength();
    metrics.singlePushes().mark();
    PushIntake.Outcome outcome = intake.accept(h, request);
    if (outcome.taken()) {
      flowControl.pushedOn(channel, h.getAppId(), h.getReplica());
      if (h.getReplica()) {
        metrics.replicaBytesPushed().mark(bodyBytes);
      }
    }
    return outcome.status == Status.OK
        ? Messages.ok(h.getRequestId())
        : Messages.error(h.getRequestId(), outcome.status, outcome.message);
  }

  /**
   * Decodes a merged push, hands each part to the intake, answers with every part's outcome in one
   * response; a malformed request (its lists or lengths) is refused whole.
   */
  private Message pushMerged(Channel channel, Message request) {
    PushMerged h = request.header(PushMerged.class);
    String problem = PushIntake.mergedProblem(h, request.bodyLength());
    if (problem != null) {
      metrics.badRequests().mark();
      return Messages.error(
          h.getRequestId(),
          Status.BAD_REQUEST,
          "malformed merged push for "
              + Ids.shuffle(h.getAppId(), h.getShuffleId())
              + ": "
              + problem);
    }
    metrics.mergedPushes().mark();
    PushIntake.Outcome[] outcomes = intake.acceptMerged(h, request);
    MergedPushResult.Builder result = MergedPushResult.newBuilder();
    long taken = 0;
    for (int i = 0; i < outcomes.length; i++) {
      result.addStatuses(outcomes[i].status).addMessages(outcomes[i].message);
      if (outcomes[i].taken()) {
        taken += h.getLengths(i);
      }
    }
    if (taken > 0) {
      flowControl.pushedOn(channel, h.getAppId(), h.getReplica());
      if (h.getReplica()) {
        metrics.replicaBytesPushed().mark(taken);
      }
    }
    return Messages.response(Messages.okBuilder(h.getRequestId()).setMerged(result).build());
  }

  private void commit(Channel channel, CommitShuffle h) {
    ServerShuffle shuffle = registry.get(h.getAppId(), h.getShuffleId());
    if (shuffle == null) {
      channel.writeAndFlush(
          Messages.error(
              h.getRequestId(),
              Status.SHUFFLE_NOT_REGISTERED,
              Ids.shuffle(h.getAppId(), h.getShuffleId()) + " is not registered on this server"));
      return;
    }
    long start = System.nanoTime();
    shuffle
        .commit()
        .whenComplete(
            (files, error) -> {
              metrics.commitLatency().update(System.nanoTime() - start, TimeUnit.NANOSECONDS);
              if (error != null && registry.get(h.getAppId(), h.getShuffleId()) != shuffle) {
                LOG.info("Commit of {} ended: it was unregistered meanwhile", shuffle);
                channel.writeAndFlush(
                    Messages.error(
                        h.getRequestId(),
                        Status.SHUFFLE_NOT_REGISTERED,
                        shuffle + " was unregistered while it committed; its files are gone"));
                return;
              }
              if (error != null) {
                LOG.error("Commit of {} failed", shuffle, error);
                channel.writeAndFlush(
                    Messages.error(
                        h.getRequestId(),
                        Status.INTERNAL_ERROR,
                        "commit of " + shuffle + " failed: " + error.getMessage()));
                return;
              }
              CrashPoints.reach(CrashPoints.COMMIT_BEFORE_ANSWER);
              channel.writeAndFlush(
                  Messages.response(
                      Response.newBuilder()
                          .setRequestId(h.getRequestId())
                          .setStatus(Status.OK)
                          .setCommit(commitPage(files, h.hasResume() ? h.getResume() : null))
                          .build()));
            });
  }

  /**
   * One page of the commit answer ({@link SplitPages}): the splits from {@code resume} on (from the
   * first when null), in (partition, epoch) order, as {@link ServerShuffle#commit} lists them.
   */
  private static CommitResult commitPage(List<CommittedSplitFile> files, SplitCursor resume) {
    int from =
        resume == null
            ? 0
            : SplitPages.firstAtOrAfter(
                files,
                f -> SplitPages.key(f.key().partitionId(), f.key().epoch()),
                SplitPages.key(resume));
    SplitPages.Page page =
        SplitPages.page(
            files, from, files.size(), ServerRequestHandler::toSplit, SplitPages.MAX_PAGE_BYTES);
    CommitResult.Builder result = CommitResult.newBuilder().addAllSplits(page.splits());
    if (page.next() != null) {
      result.setNext(page.next());
    }
    return result.build();
  }

  private static CommittedSplit toSplit(CommittedSplitFile f) {
    CommittedSplit.Builder split =
        CommittedSplit.newBuilder()
            .setPartitionId(f.key().partitionId())
            .setEpoch(f.key().epoch())
            .setLength(f.length())
            .addAllChunkOffsets(f.chunkOffsets());
    if (f.remotePath() != null) {
      split.setRemotePath(f.remotePath());
    }
    return MapRanges.write(split, f.mapIndexes().toRuns()).build();
  }

  private Message openStream(Channel channel, Message request) {
    OpenStream h = request.header(OpenStream.class);
    String split = Ids.split(h.getAppId(), h.getShuffleId(), h.getPartitionId(), h.getEpoch());
    ServerShuffle shuffle = registry.get(h.getAppId(), h.getShuffleId());
    if (shuffle == null) {
      return Messages.error(
          h.getRequestId(),
          Status.SHUFFLE_NOT_REGISTERED,
          "cannot read " + split + ": the shuffle is not registered on this server");
    }
    String problem = shuffle.shape().checkPartition(h.getPartitionId());
    if (problem != null) {
      throw new IllegalArgumentException("cannot read " + split + ": " + problem);
    }
    CommittedSplitFile file = shuffle.committedSplit(h.getPartitionId(), h.getEpoch());
    if (file == null) {
      return Messages.error(
          h.getRequestId(),
          Status.NOT_FOUND,
          "cannot read " + split + ": no committed split with that partition and epoch");
    }
    if (file.remotePath() != null) {
      return Messages.error(
          h.getRequestId(),
          Status.NOT_FOUND,
          "cannot read "
              + split
              + " from this server: it was moved to the distributed tier at "
              + file.remotePath()
              + " (sluice.storage.policy), where readers read it directly");
    }
    int startMap = h.getStartMapIndex();
    int endMap = h.getEndMapIndex();
    if (startMap < 0 || endMap <= startMap) {
      throw new IllegalArgumentException(
          "cannot read " + split + ": invalid map range [" + startMap + ", " + endMap + ")");
    }
    if (MapRangeReads.isPlainRead(file, startMap, endMap)) {
      return openedStream(channel, h, split, file);
    }
    // a map-range read: served from the split's sorted copy, answered once the sort is done
    rangeReads
        .open(file, startMap, endMap)
        .whenComplete(
            (view, error) -> {
              Message answer;
              if (error != null) {
                answer =
                    Messages.error(
                        h.getRequestId(),
                        Status.INTERNAL_ERROR,
                        "cannot read maps ["
                            + startMap
                            + ", "
                            + endMap
                            + ") of "
                            + split
                            + ": "
                            + (error.getCause() != null ? error.getCause() : error));
              } else {
                try {
                  answer = openedStream(channel, h, split, view);
                } catch (RuntimeException e) {
                  answer = failure(channel, h.getRequestId(), h, e); // a refusal (quota) included
                }
              }
              if (answer != null) { // null: a first chunk read from the file goes out when read
                channel.writeAndFlush(answer);
              }
            });
    return null;
  }

  private Message openedStream(
      Channel channel, OpenStream h, String split, CommittedSplitFile file) {
    boolean inline =
        h.getInlineFirstChunk() > 0
            && file.numChunks() > 0
            && file.chunks().chunkLength(0) <= h.getInlineFirstChunk()
            && !Tls.isSecured(channel); // a TLS chunk is read off the event loop: fetched
    StreamHandle.Builder handle =
        StreamHandle.newBuilder()
            .addAllChunkOffsets(file.chunks().handleOffsets())
            .setFirstChunkInline(inline);
    if (inline && file.numChunks() == 1) {
      // the whole split in the answer: no stream to keep, fetch or close
      handle.setClosed(true);
    } else {
      ReadStreams.Stream stream;
      try {
        stream = streams.open(channel, file);
      } catch (QuotaExceededException e) {
        // also reached from a sort's completion, off the request's thread: answered here
        return Messages.error(h.getRequestId(), Status.QUOTA_EXCEEDED, e.getMessage());
      }
      if (stream == null) {
        return Messages.error(
            h.getRequestId(),
            Status.BAD_REQUEST,
            "cannot read "
                + split
                + ": the connection holds too many open streams"
                + " (sluice.read.maxStreamsPerConnection)");
      }
      handle.setStreamId(stream.id());
    }
    Response ok =
        Response.newBuilder()
            .setRequestId(h.getRequestId())
            .setStatus(Status.OK)
            .setStream(handle)
            .build();
    return inline ? chunkResponse(channel, ok, file, 0) : Messages.response(ok);
  }

  private Message fetchChunk(Channel channel, Message request) {
    FetchChunk h = request.header(FetchChunk.class);
    ReadStreams.Stream stream = streams.get(channel, h.getStreamId());
    if (stream == null) {
      return Messages.error(
          h.getRequestId(), Status.NOT_FOUND, "no open stream " + h.getStreamId());
    }
    CommittedSplitFile file = stream.file();
    int chunk = h.getChunkIndex();
    if (chunk < 0 || chunk >= file.numChunks()) {
      return Messages.error(
          h.getRequestId(),
          Status.BAD_REQUEST,
          "chunk "
              + chunk
              + " does not exist in "
              + file.key()
              + ", which has "
              + file.numChunks()
              + " chunks");
    }
    Response ok = Response.newBuilder().setRequestId(h.getRequestId()).setStatus(Status.OK).build();
    return chunkResponse(channel, ok, file, chunk);
  }

  /**
   * The answer {@code ok} with chunk {@code chunk} of {@code file} as its body: a slice of the
   * memory tier, returned at once; otherwise the file's regions (sendfile), or under TLS a buffer,
   * prepared by the chunk reader off this thread and sent when ready (null is returned then), or an
   * error naming the file when it no longer holds the chunk. Counts the read.
   */
  private Message chunkResponse(Channel channel, Response ok, CommittedSplitFile file, int chunk) {
    long requestId = ok.getRequestId();
    ChunkExtents chunks = file.chunks();
    long length = chunks.chunkLength(chunk);
    InMemorySplit inMemory = file.inMemory();
    ByteBuf held = inMemory == null ? null : inMemory.chunk(chunks, chunk);
    if (held != null) {
      metrics.bytesRead().mark(length);
      metrics.memoryTierReads().mark();
      registry.countRead(file.key().appId(), length);
      return Message.withBody(MessageType.RESPONSE.id(), ok, requestId, held);
    }
    // the file is opened (or read, under TLS) off this thread: a hung disk must not stall the loop;
    // it stays open until the answer is written, so the answers under way are bounded
    fileAnswers.started(channel);
    CompletableFuture<?> prepared =
        Tls.isSecured(channel)
            ? chunkReader.read(file.key().appId(), file.path(), chunks, chunk, channel.alloc())
            : chunkReader.regions(file.key().appId(), file.path(), chunks, chunk);
    prepared.whenComplete(
        (body, error) -> {
          Message response;
          if (error == null) {
            metrics.bytesRead().mark(length);
            registry.countRead(file.key().appId(), length);
            response =
                body instanceof ByteBuf
                    ? Message.withBody(MessageType.RESPONSE.id(), ok, requestId, (ByteBuf) body)
                    : Message.withFileBody(
                        MessageType.RESPONSE.id(), ok, requestId, (FileRegion[]) body);
          } else {
            response = chunkError(requestId, file, chunk, error);
          }
          if (channel.isActive()) {
            channel.writeAndFlush(response).addListener(f -> fileAnswers.sent(channel));
          } else {
            response.release();
            fileAnswers.sent(channel);
          }
        });
    return null;
  }

  /**
   * The answer to a chunk that could not be prepared: NOT_FOUND naming the file when it no longer
   * holds the bytes its commit recorded (reported once as damage), INTERNAL_ERROR otherwise.
   */
  private Message chunkError(long requestId, CommittedSplitFile file, int chunk, Throwable error) {
    Throwable cause = error instanceof CompletionException ? error.getCause() : error;
    if (!(cause instanceof ChunkReader.ShortFileException)) {
      return Messages.error(
          requestId,
          Status.INTERNAL_ERROR,
          "cannot read chunk " + chunk + " of " + file.key() + ": " + cause);
    }
    String damage =
        "cannot read chunk "
            + chunk
            + " of "
            + file.key()
            + ": its file "
            + file.path()
            + " holds "
            + ((ChunkReader.ShortFileException) cause).size()
            + " bytes, but its commit recorded "
            + file.length()
            + " and the chunk ends at byte offset "
            + file.chunks().chunkEnd(chunk)
            + "; the file was truncated or deleted on disk";
    if (file.firstDamageReport()) {
      registry.damagedFile(file.path(), damage);
    }
    return Messages.error(requestId, Status.NOT_FOUND, damage);
  }

  private static int checkShuffleId(int shuffleId) {
    if (shuffleId < 0) {
      throw new IllegalArgumentException("negative shuffle id " + shuffleId);
    }
    return shuffleId;
  }

  @Override
  public void connectionClosed(Channel channel) {
    streams.closeAll(channel);
    mapStreams.closeAll(channel);
  }
}
