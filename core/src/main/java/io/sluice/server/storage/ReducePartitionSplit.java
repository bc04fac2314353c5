package io.sluice.server.storage;

import com.codahale.metrics.Timer;
import io.netty.buffer.ByteBuf;
import io.sluice.protocol.BatchFormat;
import io.sluice.protocol.proto.Status;
import io.sluice.server.ServerMetrics;
import io.sluice.server.memory.MemoryBudget;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One split of a reduce partition on this server and the file it is written to.
 *
 * <p><b>File format (version 1).</b> {@code <dir>/<appId>/<shuffleId>/<partition>-<epoch>.data} is
 * the concatenation of the pushed batches ({@link BatchFormat}: 16-byte big-endian header, opaque
 * payload) in the order the server accepted them; there is no file header. Until commit the file is
 * named {@code ...data.inprogress}; commit flushes, fsyncs (when {@code sluice.commit.fsync}),
 * closes and renames it, so a file without the suffix is always complete. Chunk boundaries are
 * recorded at flush boundaries once a chunk reaches {@code sluice.read.chunkSize}, so they never
 * fall inside a batch. A crash leaves at most an {@code .inprogress} file, which is never served.
 *
 * <p><b>Threads.</b> {@link #append} runs on network threads; writes, commit and discard run on the
 * split's single flusher thread in submission order. Buffers accepted by {@link #append} belong to
 * the split until the flusher has written or discarded them; it then releases them and their memory
 * reservation.
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
  private final DataDirectory dir;
  private final ExecutorService flusher;
  private final Path committedPath;
  private final Path inProgressPath;
  private final MemoryBudget memory;
  private final ServerMetrics metrics;
  private final int flushSize;
  private final long chunkSize;
  private final boolean fsync;

  // guarded by this
  private State state = State.WRITING;
  private List<ByteBuf> pending = new ArrayList<>();
  private long pendingBytes;
  private final BitSet mapIndexes = new BitSet();
  private IOException failure;
  private CompletableFuture<CommittedSplitFile> commitFuture;

  // flusher thread only
  private FileChannel channel;
  private long flushedLength;
  private final List<Long> chunkOffsets = new ArrayList<>(List.of(0L));

  ReducePartitionSplit(
      SplitKey key,
      DataDirectory dir,
      MemoryBudget memory,
      ServerMetrics metrics,
      int flushSize,
      long chunkSize,
      boolean fsync) {
    this.key = key;
    this.dir = dir;
    this.flusher = dir.assignFlusher();
    this.committedPath =
        dir.root()
            .resolve(key.appId())
            .resolve(Integer.toString(key.shuffleId()))
            .resolve(key.fileName());
    this.inProgressPath = committedPath.resolveSibling(key.fileName() + IN_PROGRESS_SUFFIX);
    this.memory = memory;
    this.metrics = metrics;
    this.flushSize = flushSize;
    this.chunkSize = chunkSize;
    this.fsync = fsync;
    dir.splitOpened();
    metrics.activeSplits().inc();
  }

  public SplitKey key() {
    return key;
  }

  /**
   * Appends a well-formed body of batches whose size is already reserved in the memory budget.
   *
   * @return OK when the split took the body (and its reservation); otherwise the caller keeps both:
   *     STAGE_ENDED after commit, HARD_SPLIT after a write failure or discard
   */
  public synchronized Status append(ByteBuf body) {
    if (state == State.COMMITTING || state == State.COMMITTED) {
      return Status.STAGE_ENDED;
    }
    if (state == State.DISCARDED || failure != null) {
      return Status.HARD_SPLIT;
    }
    BatchFormat.check(body, (mapIndex, attempt, batchId, length) -> mapIndexes.set(mapIndex));
    pending.add(body);
    pendingBytes += body.readableBytes();
    if (pendingBytes >= flushSize) {
      submitFlush();
    }
    return Status.OK;
  }

  /**
   * Hands whatever is buffered to the flusher now, below the flush size (memory pressure).
   *
   * @return the bytes handed over
   */
  public synchronized long flushNow() {
    long bytes = pendingBytes;
    if (state == State.WRITING && bytes > 0) {
      submitFlush();
      return bytes;
    }
    return 0;
  }

  /** Caller holds the lock. Hands the pending buffers to the flusher. */
  private void submitFlush() {
    List<ByteBuf> buffers = pending;
    long bytes = pendingBytes;
    pending = new ArrayList<>();
    pendingBytes = 0;
    runOnFlusher(() -> write(buffers, bytes));
  }

  /** Flusher thread. Writes and then releases {@code buffers} and their reservation. */
  private void write(List<ByteBuf> buffers, long bytes) {
    try {
      if (isDiscarded() || hasFailed()) {
        return;
      }
      try (Timer.Context ignored = metrics.flushLatency().time()) {
        FileChannel ch = openChannel();
        ByteBuffer[] nio = toNioBuffers(buffers);
        long written = 0;
        while (written < bytes) {
          written += ch.write(nio);
        }
        flushedLength += bytes;
        metrics.bytesFlushed().mark(bytes);
        if (flushedLength - chunkOffsets.get(chunkOffsets.size() - 1) >= chunkSize) {
          chunkOffsets.add(flushedLength);
        }
      }
    } catch (IOException e) {
      LOG.error("Failed to write {} to {}: {}", key, inProgressPath, e.toString());
      synchronized (this) {
        if (failure == null) {
          failure = e;
        }
      }
    } finally {
      for (ByteBuf b : buffers) {
        b.release();
      }
      memory.release(bytes);
    }
  }

  private static ByteBuffer[] toNioBuffers(List<ByteBuf> buffers) {
    List<ByteBuffer> out = new ArrayList<>(buffers.size());
    for (ByteBuf b : buffers) {
      for (ByteBuffer nio : b.nioBuffers()) {
        out.add(nio);
      }
    }
    return out.toArray(new ByteBuffer[0]);
  }

  private FileChannel openChannel() throws IOException {
    if (channel == null) {
      Files.createDirectories(inProgressPath.getParent());
      channel =
          FileChannel.open(
              inProgressPath,
              StandardOpenOption.CREATE,
              StandardOpenOption.TRUNCATE_EXISTING,
              StandardOpenOption.WRITE);
    }
    return channel;
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
    state = State.COMMITTING;
    List<ByteBuf> buffers = pending;
    long bytes = pendingBytes;
    pending = new ArrayList<>();
    pendingBytes = 0;
    CompletableFuture<CommittedSplitFile> future = commitFuture;
    runOnFlusher(
        () -> {
          write(buffers, bytes);
          try {
            future.complete(finishFile());
          } catch (IOException | RuntimeException e) {
            future.completeExceptionally(e);
          }
        });
    return future;
  }

  /** Flusher thread. */
  private CommittedSplitFile finishFile() throws IOException {
    IOException failed;
    BitSet maps;
    synchronized (this) {
      failed = failure;
      maps = (BitSet) mapIndexes.clone();
    }
    if (failed != null) {
      closeQuietly();
      throw new IOException(
          "Cannot commit " + key + ": writing " + inProgressPath + " failed: " + failed, failed);
    }
    FileChannel ch = openChannel();
    if (fsync) {
      ch.force(true);
    }
    closeQuietly();
    Files.move(inProgressPath, committedPath, StandardCopyOption.ATOMIC_MOVE);
    if (chunkOffsets.get(chunkOffsets.size() - 1) != flushedLength) {
      chunkOffsets.add(flushedLength);
    }
    synchronized (this) {
      if (state == State.DISCARDED) {
        throw new IOException(key + " was discarded during commit");
      }
      state = State.COMMITTED;
    }
    dir.splitClosed();
    metrics.activeSplits().dec();
    return new CommittedSplitFile(key, committedPath, flushedLength, chunkOffsets, maps);
  }

  /**
   * Drops the split: releases what it holds and deletes its file (after any flush already queued).
   * Idempotent.
   */
  public CompletableFuture<Void> discard() {
    List<ByteBuf> buffers;
    long bytes;
    boolean wasOpen;
    synchronized (this) {
      if (state == State.DISCARDED) {
        return CompletableFuture.completedFuture(null);
      }
      wasOpen = state == State.WRITING || state == State.COMMITTING;
      state = State.DISCARDED;
      buffers = pending;
      bytes = pendingBytes;
      pending = new ArrayList<>();
      pendingBytes = 0;
    }
    for (ByteBuf b : buffers) {
      b.release();
    }
    memory.release(bytes);
    if (wasOpen) {
      dir.splitClosed();
      metrics.activeSplits().dec();
    }
    CompletableFuture<Void> done = new CompletableFuture<>();
    runOnFlusher(
        () -> {
          closeQuietly();
          try {
            Files.deleteIfExists(inProgressPath);
            Files.deleteIfExists(committedPath);
            done.complete(null);
          } catch (IOException e) {
            LOG.warn("Could not delete the file of {}: {}", key, e.toString());
            done.complete(null);
          }
        });
    return done;
  }

  private synchronized boolean isDiscarded() {
    return state == State.DISCARDED;
  }

  private synchronized boolean hasFailed() {
    return failure != null;
  }

  private void closeQuietly() {
    if (channel != null) {
      try {
        channel.close();
      } catch (IOException e) {
        LOG.warn("Closing {} failed: {}", inProgressPath, e.toString());
      }
      channel = null;
    }
  }

  /** Runs on the flusher; inline when the flusher is shut down (server closing). */
  private void runOnFlusher(Runnable task) {
    try {
      flusher.execute(task);
    } catch (RejectedExecutionException e) {
      task.run();
    }
  }
}
