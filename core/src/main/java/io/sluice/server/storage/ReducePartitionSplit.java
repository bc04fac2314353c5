package io.sluice.server.storage;

import com.codahale.metrics.Timer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.sluice.common.CrashPoints;
import io.sluice.protocol.BatchFormat;
import io.sluice.protocol.MapRunIndex;
import io.sluice.protocol.proto.Status;
import io.sluice.server.ServerConf;
import io.sluice.server.ServerMetrics;
import io.sluice.server.memory.MemoryAccount;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One split of a reduce partition on this server and the file it is written to.
 *
 * <p><b>File format (version 2).</b> {@code <dir>/<appId>/<shuffleId>/<partition>-<epoch>.data} is
 * the concatenation of the pushed batches ({@link BatchFormat} version 2: 24-byte big-endian header
 * with magic, version, ids, length and the CRC32C of header fields and payload, then the opaque
 * payload); there is no file header. Each flush (a segment) is written in map-index order, batches
 * of one map in the order the server accepted them, and at commit a {@linkplain MapRunIndex map-run
 * trailer} follows the last batch, so a map-range read needs no sort. Readers verify every batch's
 * checksum, so a byte that changed on disk fails the read naming the file and offset. Version 1
 * (until the checksums came) held batches with a 16-byte header and no checksum; its files fail
 * version 2 readers at their first batch (not the magic), so the engine recomputes them. Until
 * commit the file is named {@code ...data.inprogress}; commit flushes, fsyncs (when {@code
 * sluice.commit.fsync}), closes and renames it, so a file without the suffix is always complete.
 * Chunk boundaries fall between batches: a chunk ends before the batch that would take it past
 * {@code sluice.read.chunkSize}, so a chunk is at most that size or one batch (and a batch fits in
 * a frame), and every chunk fits in a response frame. A crash leaves at most an {@code .inprogress}
 * file, which is never served.
 *
 * <p><b>Splitting.</b> Once the split has taken more than {@code sluice.split.threshold} bytes, or
 * its directory is full, it still takes data but answers SOFT_SPLIT, so the client moves the
 * partition to a new split. When its directory fails, the split copies what it has written to a
 * healthy directory, keeps everything it acknowledged, and answers HARD_SPLIT to new data. When the
 * server stops it is {@linkplain #seal() sealed}: it answers HARD_SPLIT to new data and is
 * committed with everything it accepted.
 *
 * <p>Accepted bodies wait in {@link PendingBatches}, which gathers small ones into few buffers.
 *
 * <p><b>Threads.</b> {@link #append} runs on network threads; writes, moves, commit and discard run
 * on the split's single flusher thread in submission order. Buffers accepted by {@link #append}
 * belong to the split until the flusher has written or discarded them; it then releases them and
 * their memory reservation.
 */
public final class ReducePartitionSplit {
  private static final Logger LOG = LoggerFactory.getLogger(ReducePartitionSplit.class);
  static final String IN_PROGRESS_SUFFIX = ".inprogress";

  private enum State {
    WRITING,
    COMMITTING,
    COMMITTED,
    DISCARDED
  }

  private final SplitKey key;
  private final Executor flusher;
  private final DataDirectories dirs;
  private final MemoryAccount memory;
  private final ServerMetrics metrics;
  private final int flushSize;
  private final long chunkSize;
  private final long splitThreshold;
  private final boolean fsync;
  private final long memoryTierMaxSplit;

  /** Written on the flusher thread only (a move), read anywhere. */
  private volatile DataDirectory dir;

  // guarded by this
  private State state = State.WRITING;
  private final PendingBatches pending;
  private long acceptedBytes;
  private boolean movedOff;
  private boolean sealed;
  private IOException failure;
  private CompletableFuture<CommittedSplitFile> commitFuture;
  private boolean flushSubmitted;
  private InMemorySplit inMemory;
  private CompletableFuture<Void> writeBackFuture;

  // flusher thread only
  private FileChannel channel;
  private FileWriteback writeback;
  private long flushedLength;
  private final List<Long> chunkOffsets = new ArrayList<>(List.of(0L));

  /**
   * The maps written so far, recorded as the flusher writes them (in map order within a flush, on a
   * split it just touched) rather than as pushes arrive on the event loops (one batch at a time,
   * each on a different split).
   */
  private final MapIndexSet mapIndexes = new MapIndexSet();

  private final MapRunRecorder mapRuns;

  ReducePartitionSplit(
      SplitKey key,
      DataDirectory dir,
      DataDirectories dirs,
      MemoryAccount memory,
      ServerMetrics metrics,
      ServerConf conf) {
    this.key = key;
    this.dir = dir;
    this.flusher = dir.assignFlusher();
    this.dirs = dirs;
    this.memory = memory;
    this.metrics = metrics;
    this.flushSize = conf.flushSize();
    this.chunkSize = conf.chunkSize();
    this.splitThreshold = conf.splitThreshold();
    this.fsync = conf.commitFsync();
    this.memoryTierMaxSplit = conf.memoryTierMaxSplit();
    this.mapRuns = new MapRunRecorder(chunkSize);
    this.pending = new PendingBatches(memory);
    dir.activeSplitSet().add(this);
    metrics.activeSplits().inc();
  }

  public SplitKey key() {
    return key;
  }

  private Path committedPath(DataDirectory d) {
    return d.root()
        .resolve(key.appId())
        .resolve(Integer.toString(key.shuffleId()))
        .resolve(key.fileName());
  }

  private Path inProgressPath(DataDirectory d) {
    return committedPath(d).resolveSibling(key.fileName() + IN_PROGRESS_SUFFIX);
  }

  /**
   * Appends a well-formed body of batches whose size is already reserved in the memory budget.
   *
   * @return OK or SOFT_SPLIT when the split took the body (and its reservation); otherwise the
   *     caller keeps both: STAGE_ENDED after commit, HARD_SPLIT after a failure, a move, a discard
   *     or once sealed by a server stop
   */
  public synchronized Status append(ByteBuf body) {
    return append(body, false);
  }

  /**
   * {@link #append(ByteBuf)} of a body of at most {@link PendingBatches#GATHER_MAX} bytes, which
   * the split copies: it takes the body's reservation when it takes the data, never the buffer,
   * which stays the caller's (a small part of a merged push, a view of the request's buffer).
   */
  public synchronized Status appendCopy(ByteBuf body) {
    if (body.readableBytes() > PendingBatches.GATHER_MAX) {
      throw new IllegalArgumentException(
          key
              + " copies bodies of at most "
              + PendingBatches.GATHER_MAX
              + " bytes, not "
              + body.readableBytes());
    }
    return append(body, true);
  }

  private Status append(ByteBuf body, boolean copy) {
    if (sealed) {
      return Status.HARD_SPLIT;
    }
    if (state == State.COMMITTING || state == State.COMMITTED) {
      return Status.STAGE_ENDED;
    }
    if (state == State.DISCARDED || failure != null || movedOff) {
      return Status.HARD_SPLIT;
    }
    acceptedBytes += body.readableBytes();
    if (copy) {
      pending.copy(body);
    } else {
      pending.add(body);
    }
    if (pending.bytes() >= flushSize) {
      submitFlush();
    }
    if (acceptedBytes > splitThreshold || dir.health() == DataDirectory.Health.FULL) {
      return Status.SOFT_SPLIT;
    }
    return Status.OK;
  }

  /**
   * Hands whatever is buffered to the flusher now, below the flush size (memory pressure).
   *
   * @return the bytes handed over
   */
  public synchronized long flushNow() {
    long bytes = pending.reserved();
    if (state == State.WRITING && pending.bytes() > 0) {
      submitFlush();
      return bytes;
    }
    return 0;
  }

  /**
   * Server stop: from now on new data is answered HARD_SPLIT, so the client moves the partition to
   * a new location; what was accepted stays and is committed. Idempotent.
   */
  public synchronized void seal() {
    sealed = true;
  }

  /** True once the file is complete and renamed. */
  public synchronized boolean isCommitted() {
    return state == State.COMMITTED;
  }

  /** Bytes this split took, on disk or buffered. */
  public synchronized long acceptedBytes() {
    return acceptedBytes;
  }

  /** Budget bytes of what is buffered, not yet handed to the flusher. */
  public synchronized long pendingBytes() {
    return pending.reserved();
  }

  /** How many buffers hold what is buffered (gathering shows here). */
  synchronized int pendingBuffers() {
    return pending.bufferCount();
  }

  /** Caller holds the lock. Hands the pending buffers to the flusher. */
  private void submitFlush() {
    flushSubmitted = true;
    PendingBatches.Handed batches = pending.takeAll();
    flusher.execute(() -> write(batches));
  }

  /**
   * Flusher thread. Writes {@code batches}, then releases them and their reservation. A failed
   * write takes the directory out of rotation, moves the file to a healthy one and writes there.
   */
  private void write(PendingBatches.Handed batches) {
    try {
      if (isDiscarded() || hasFailed()) {
        return;
      }
      try (Timer.Context ignored = metrics.flushLatency().time()) {
        try {
          writeOut(batches.buffers, batches.bytes);
        } catch (IOException first) {
          DataDirectory failedDir = dir;
          String reason = "writing " + inProgressPath(failedDir) + " failed: " + first;
          if (!dirs.failed(failedDir, reason, first)) {
            throw first;
          }
          moveTo(dirs.pick(failedDir), first);
          writeOut(batches.buffers, batches.bytes);
        }
      }
    } catch (IOException e) {
      LOG.error("Failed to write {}: {}", key, e.toString());
      synchronized (this) {
        if (failure == null) {
          failure = e;
        }
      }
    } finally {
      batches.release(memory, 0);
    }
  }

  private void writeOut(List<ByteBuf> buffers, long bytes) throws IOException {
    FileChannel ch = openChannel();
    MapOrderedSegment segment = MapOrderedSegment.of(buffers);
    ByteBuffer[] nio = segment.buffers();
    long written = 0;
    while (written < bytes) {
      written += ch.write(nio);
    }
    for (int k = 0; k < segment.batchCount(); k++) {
      recordBatch(segment.mapIndex(k), segment.length(k));
    }
    metrics.bytesFlushed().mark(bytes);
    dir.bytesFlushed().mark(bytes);
    writeback.written(bytes);
  }

  /**
   * Flusher thread. Advances {@link #flushedLength} over a batch just written, starting a new chunk
   * before a batch that would take the current one past the chunk size, and records its map run and
   * map index.
   */
  private void recordBatch(int mapIndex, int length) {
    mapIndexes.add(mapIndex);
    long chunkStart = chunkOffsets.get(chunkOffsets.size() - 1);
    if (flushedLength > chunkStart && flushedLength - chunkStart + length > chunkSize) {
      chunkOffsets.add(flushedLength);
    }
    flushedLength += length;
    mapRuns.batch(mapIndex, length);
  }

  private FileChannel openChannel() throws IOException {
    if (channel == null) {
      channel = OwnerOnly.createFile(inProgressPath(dir), true);
      writeback = trackWriteback(dir, channel);
    }
    return channel;
  }

  private FileWriteback trackWriteback(DataDirectory d, FileChannel ch) {
    Path path = inProgressPath(d);
    return d.writeback().track(ch, path, e -> writebackFailed(d, path, e));
  }

  /**
   * Writeback thread: forcing the file to disk failed, a disk failure like a failed write. The
   * directory is taken out of rotation and its splits, this one too, move to a healthy one (the
   * move, or a commit already running, copies what was written); when only this file is gone (its
   * shuffle was deleted), the split fails alone.
   */
  private void writebackFailed(DataDirectory d, Path path, IOException e) {
    String reason = "writing back " + path + " of " + key + " failed: " + e;
    LOG.error("{}", reason);
    if (!dirs.failed(d, reason, e)) {
      synchronized (this) {
        if (failure == null) {
          failure = e;
        }
      }
    }
  }

  /**
   * The split's directory failed: refuse new data and move the file to a healthy directory (on the
   * flusher, after the writes queued before).
   */
  void moveOff(DataDirectory failedDir) {
    synchronized (this) {
      if (state == State.COMMITTED || state == State.DISCARDED) {
        return;
      }
      movedOff = true;
    }
    flusher.execute(
        () -> {
          if (dir != failedDir || isDiscarded() || hasFailed()) {
            return;
          }
          try {
            moveTo(dirs.pick(failedDir), null);
          } catch (IOException e) {
            LOG.error("Cannot move {} off failed directory {}: {}", key, failedDir, e.toString());
            synchronized (this) {
              if (failure == null) {
                failure = e;
              }
            }
          }
        });
  }

  /** Flusher thread. Copies what was written to {@code target} and continues there. */
  private void moveTo(DataDirectory target, IOException cause) throws IOException {
    DataDirectory from = dir;
    if (target == null) {
      IOException e =
          new IOException("no healthy data directory to move " + key + " to from " + from, cause);
      throw e;
    }
    Path newPath = inProgressPath(target);
    FileChannel out = OwnerOnly.createFile(newPath, true);
    try {
      if (flushedLength > 0) {
        if (channel == null) {
          throw new IOException(key + " has written bytes but no open file to copy them from");
        }
        long copied = 0;
        while (copied < flushedLength) {
          long n = channel.transferTo(copied, flushedLength - copied, out);
          if (n <= 0) {
            throw new IOException(
                "copying "
                    + key
                    + " from "
                    + from
                    + " stopped at "
                    + copied
                    + " of "
                    + flushedLength
                    + " bytes");
          }
          copied += n;
        }
      }
    } catch (IOException e) {
      out.close();
      Files.deleteIfExists(newPath);
      throw e;
    }
    closeQuietly();
    try {
      Files.deleteIfExists(inProgressPath(from));
    } catch (IOException e) {
      LOG.debug("Could not delete {} on failed directory: {}", inProgressPath(from), e.toString());
    }
    channel = out;
    writeback = trackWriteback(target, out);
    from.activeSplitSet().remove(this);
    target.activeSplitSet().add(this);
    dir = target;
    LOG.warn(
        "Moved {} ({} bytes written) from failed directory {} to {}",
        key,
        flushedLength,
        from,
        target);
  }

  /**
   * Flushes what is left, fsyncs, closes and renames the file. Idempotent: later calls get the same
   * future. Fails naming the split and file when a write failed or the split was discarded.
   */
  public synchronized CompletableFuture<CommittedSplitFile> commit() {
    if (commitFuture != null) {
      return commitFuture;
    }
    commitFuture = new CompletableFuture<>();
    if (state == State.DISCARDED) {
      commitFuture.completeExceptionally(new IOException(key + " was discarded before commit"));
      return commitFuture;
    }
    if (fitsMemoryTier()) {
      commitFuture.complete(commitInMemory());
      return commitFuture;
    }
    state = State.COMMITTING;
    PendingBatches.Handed batches = pending.takeAll();
    CompletableFuture<CommittedSplitFile> future = commitFuture;
    flusher.execute(
        () -> {
          write(batches);
          try {
            future.complete(finishFile());
          } catch (IOException | RuntimeException e) {
            future.completeExceptionally(e);
          }
        });
    return future;
  }

  /**
   * Caller holds the lock. Whether the split is committed in the memory tier: it is on, nothing of
   * the split ever went to the flusher (so no file exists and the flusher-only fields are
   * untouched), it is small enough, and held memory is at or below the resume watermark.
   */
  private boolean fitsMemoryTier() {
    return memoryTierMaxSplit > 0
        && !flushSubmitted
        && failure == null
        && !movedOff
        && pending.bytes() <= memoryTierMaxSplit
        && memory.budget().held() <= memory.budget().resumeWatermarkBytes();
  }

  /**
   * Caller holds the lock. Commits what is buffered as the bytes its file would hold (batches in
   * map order, chunk boundaries and map-run trailer computed as a flush and the commit compute
   * them), kept in memory with their reservation until written back or dropped. No flusher ran for
   * this split, so computing the flusher-only fields here races with nothing.
   */
  private CommittedSplitFile commitInMemory() {
    PendingBatches.Handed batches = pending.takeAll();
    long bytes = batches.bytes;
    MapOrderedSegment segment = MapOrderedSegment.of(batches.buffers);
    for (int k = 0; k < segment.batchCount(); k++) {
      recordBatch(segment.mapIndex(k), segment.length(k));
    }
    ByteBuffer trailer = mapRuns.trailer();
    int trailerLength = trailer == null ? 0 : trailer.remaining();
    // one copy, so the image owns its bytes outright: a response holding a slice of it keeps it
    // alive, and the accepted bodies go back to the pool now
    ByteBuf image = PooledByteBufAllocator.DEFAULT.directBuffer((int) bytes + trailerLength);
    for (ByteBuffer b : segment.buffers()) {
      image.writeBytes(b.duplicate());
    }
    if (trailer != null) {
      image.writeBytes(trailer);
    }
    batches.release(memory, bytes); // the image keeps the reservation of its bytes
    if (chunkOffsets.get(chunkOffsets.size() - 1) != flushedLength) {
      chunkOffsets.add(flushedLength);
    }
    state = State.COMMITTED;
    closed(dir);
    inMemory = new InMemorySplit(image, bytes, memory, metrics, this::writeBack);
    metrics.memoryTierCommits().mark();
    return new CommittedSplitFile(
        key, committedPath(dir), flushedLength, chunkOffsets, mapIndexes.copy(), inMemory);
  }

  /**
   * Writes a split committed in the memory tier to its file (in-progress name, fsync when {@code
   * sluice.commit.fsync}, rename), then drops the memory copy; the same future for every call. A
   * failed write keeps the copy and fails the future (a later call tries again).
   */
  synchronized CompletableFuture<Void> writeBack() {
    if (writeBackFuture != null) {
      return writeBackFuture;
    }
    CompletableFuture<Void> done = new CompletableFuture<>();
    writeBackFuture = done;
    InMemorySplit held = inMemory;
    flusher.execute(
        () -> {
          ByteBuf image = held == null ? null : held.retainedImage();
          if (image == null || isDiscarded()) {
            if (image != null) {
              image.release();
            }
            done.complete(null);
            return;
          }
          DataDirectory d = dir;
          try {
            FileChannel ch = openChannel();
            ByteBuffer[] nio = image.nioBuffers();
            long total = image.readableBytes();
            long written = 0;
            while (written < total) {
              written += ch.write(nio);
            }
            if (fsync) {
              ch.force(true);
            }
            closeQuietly();
            DurableRename.rename(inProgressPath(d), committedPath(d), fsync);
            metrics.bytesFlushed().mark(total);
            d.bytesFlushed().mark(total);
            metrics.memoryTierWritebacks().mark();
            held.drop();
            done.complete(null);
          } catch (IOException | RuntimeException e) {
            closeQuietly();
            LOG.error(
                "Writing {} from the memory tier to {} failed; it stays in memory: {}",
                key,
                committedPath(d),
                e.toString());
            synchronized (this) {
              writeBackFuture = null;
            }
            done.completeExceptionally(e);
          } finally {
            image.release();
          }
        });
    return done;
  }

  /** The split's memory-tier copy, or null when it was committed to its file. */
  synchronized InMemorySplit inMemory() {
    return inMemory;
  }

  /** Flusher thread. */
  private CommittedSplitFile finishFile() throws IOException {
    IOException writebackFailure = writeback == null ? null : writeback.stop();
    if (writebackFailure != null && dir.health() == DataDirectory.Health.FAILED && !hasFailed()) {
      // the failure took the directory out of rotation: go on in a healthy one, as a write does
      try {
        moveTo(dirs.pick(dir), writebackFailure);
      } catch (IOException e) {
        closeQuietly();
        throw new IOException("Cannot commit " + key + ": " + e.getMessage(), e);
      }
    }
    IOException failed;
    synchronized (this) {
      failed = failure;
    }
    MapIndexSet maps = mapIndexes.copy();
    DataDirectory d = dir;
    if (failed != null) {
      closeQuietly();
      throw new IOException("Cannot commit " + key + ": " + failed.getMessage(), failed);
    }
    FileChannel ch = openChannel();
    writeTrailer(ch);
    CrashPoints.reach(CrashPoints.SPLIT_BEFORE_RENAME);
    if (fsync) {
      ch.force(true);
    }
    closeQuietly();
    DurableRename.rename(inProgressPath(d), committedPath(d), fsync);
    CrashPoints.reach(CrashPoints.SPLIT_AFTER_RENAME);
    if (chunkOffsets.get(chunkOffsets.size() - 1) != flushedLength) {
      chunkOffsets.add(flushedLength);
    }
    synchronized (this) {
      if (state == State.DISCARDED) {
        throw new IOException(key + " was discarded during commit");
      }
      state = State.COMMITTED;
    }
    closed(d);
    return new CommittedSplitFile(key, committedPath(d), flushedLength, chunkOffsets, maps);
  }

  /** Flusher thread. Appends the map-run trailer after the last batch (see {@link MapRunIndex}). */
  private void writeTrailer(FileChannel ch) throws IOException {
    ByteBuffer trailer = mapRuns.trailer();
    if (trailer == null) {
      return;
    }
    try {
      while (trailer.hasRemaining()) {
        ch.write(trailer, flushedLength + trailer.position());
      }
    } catch (IOException e) {
      closeQuietly();
      throw new IOException(
          "Cannot commit " + key + ": writing its map-run trailer failed: " + e, e);
    }
  }

  private void closed(DataDirectory d) {
    if (d.activeSplitSet().remove(this)) {
      metrics.activeSplits().dec();
      memory.writerClosed();
    }
  }

  /**
   * Drops the split: releases what it holds and deletes its file (after any flush already queued).
   * Idempotent.
   */
  public CompletableFuture<Void> discard() {
    PendingBatches.Handed batches;
    InMemorySplit held;
    synchronized (this) {
      if (state == State.DISCARDED) {
        return CompletableFuture.completedFuture(null);
      }
      state = State.DISCARDED;
      batches = pending.takeAll();
      held = inMemory;
    }
    if (held != null) {
      held.drop();
    }
    batches.release(memory, 0);
    CompletableFuture<Void> done = new CompletableFuture<>();
    flusher.execute(
        () -> {
          DataDirectory d = dir;
          closeQuietly();
          closed(d);
          try {
            Files.deleteIfExists(inProgressPath(d));
            Files.deleteIfExists(committedPath(d));
          } catch (IOException e) {
            LOG.warn("Could not delete the file of {}: {}", key, e.toString());
          }
          done.complete(null);
        });
    return done;
  }

  private synchronized boolean isDiscarded() {
    return state == State.DISCARDED;
  }

  private synchronized boolean hasFailed() {
    return failure != null;
  }

  /** Flusher thread. Stops the file's writeback (waiting for a running one), then closes it. */
  private void closeQuietly() {
    if (writeback != null) {
      writeback.stop();
      writeback = null;
    }
    if (channel != null) {
      try {
        channel.close();
      } catch (IOException e) {
        LOG.warn("Closing the file of {} failed: {}", key, e.toString());
      }
      channel = null;
    }
  }
}
