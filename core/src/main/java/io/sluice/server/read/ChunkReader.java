package io.sluice.server.read;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.DefaultFileRegion;
import io.netty.channel.FileRegion;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.sluice.protocol.ChunkExtents;
import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Prepares chunks of committed split files for sending, on threads of its own, so that network
 * threads never wait on the disk (a hung disk would stall every connection of a loop):
 *
 * <ul>
 *   <li>{@link #regions}: for sendfile, opens the file and checks that it still holds the chunk;
 *       the event loop then only transfers the opened regions;
 *   <li>{@link #read}: for connections that cannot send a file region (under TLS every byte passes
 *       through the SSL engine), reads the chunk into a buffer, which holds its length of the
 *       server's direct memory until it is written.
 * </ul>
 *
 * <p>Either fails with a {@link ShortFileException} when the file no longer holds the bytes of the
 * chunk (truncated or deleted on disk), with another {@link IOException} naming the file otherwise.
 *
 * <p><b>Fair between applications.</b> Requests wait in one queue per application and the threads
 * take them in turn, one per application with requests waiting: a job whose reducers ask for
 * thousands of chunks at once does not make a small job's reducers wait behind all of them. Within
 * an application, requests run in the order they came. Idle threads end after a minute. Thread
 * safe.
 */
public final class ChunkReader implements Closeable {
  private final ThreadPoolExecutor executor;

  /** Requests waiting, per application in turn; guarded by this. */
  private final ApplicationTurns<Runnable> waiting = new ApplicationTurns<>(ArrayDeque::new);

  public ChunkReader(int threads) {
    this(
        new ThreadPoolExecutor(
            threads,
            threads,
            60,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(),
            new DefaultThreadFactory("sluice-chunk-reader", true)));
    executor.allowCoreThreadTimeOut(true);
  }

  /** Reads on {@code executor}'s threads (tests hold them to see the order). */
  ChunkReader(ThreadPoolExecutor executor) {
    this.executor = executor;
  }

  /** The file holds fewer bytes than a chunk needs: it was truncated or deleted on disk. */
  public static final class ShortFileException extends IOException {
    private static final long serialVersionUID = 1L;
    private final long size;

    ShortFileException(Path file, long size, long chunkEnd) {
      super(file + " holds " + size + " bytes, but the chunk ends at byte offset " + chunkEnd);
      this.size = size;
    }

    /** The bytes the file holds (0 when it is gone). */
    public long size() {
      return size;
    }
  }

  /**
   * The file regions of chunk {@code chunk} of {@code file}, a file of application {@code appId},
   * each on a channel of its own opened here; the future's receiver owns (releases or sends) them.
   */
  public CompletableFuture<FileRegion[]> regions(
      String appId, Path file, ChunkExtents chunks, int chunk) {
    CompletableFuture<FileRegion[]> result = new CompletableFuture<>();
    submit(appId, () -> openRegions(file, chunks, chunk, result), result);
    return result;
  }

  /** Queues {@code task} in its application's turn; fails {@code result} when stopping. */
  private void submit(String appId, Runnable task, CompletableFuture<?> result) {
    synchronized (this) {
      waiting.add(appId, task);
    }
    try {
      executor.execute(this::runNextTurn);
    } catch (RejectedExecutionException e) {
      // stopping: the queued task never runs (nothing else will); its caller hears why
      result.completeExceptionally(new IOException("the server is stopping", e));
    }
  }

  /**
   * Runs the first waiting request of the application whose turn it is, which then goes to the back
   * of the line if it has more. One of these runs per request, so every request runs once.
   */
  private void runNextTurn() {
    Runnable task;
    synchronized (this) {
      task = waiting.poll();
    }
    if (task == null) {
      return;
    }
    task.run();
  }

  private static void openRegions(
      Path file, ChunkExtents chunks, int chunk, CompletableFuture<FileRegion[]> out) {
    FileRegion[] regions = new FileRegion[chunks.extentCount(chunk)];
    try {
      for (int k = 0; k < regions.length; k++) {
        // one size check covers the chunk; each region needs a channel of its own (it closes it)
        FileChannel channel =
            k == 0
                ? openHolding(file, chunks.chunkEnd(chunk))
                : FileChannel.open(file, StandardOpenOption.READ);
        regions[k] =
            new DefaultFileRegion(
                channel, chunks.extentOffset(chunk, k), chunks.extentLength(chunk, k));
      }
    } catch (IOException | RuntimeException e) {
      for (FileRegion r : regions) {
        if (r != null) {
          r.release();
        }
      }
      out.completeExceptionally(
          e instanceof IOException ? e : new IOException("cannot open " + file + ": " + e, e));
      return;
    }
    if (!out.complete(regions)) {
      for (FileRegion r : regions) {
        r.release();
      }
    }
  }

  /** Opens {@code file} for reading, checking that it holds at least {@code chunkEnd} bytes. */
  private static FileChannel openHolding(Path file, long chunkEnd) throws IOException {
    FileChannel channel;
    try {
      channel = FileChannel.open(file, StandardOpenOption.READ);
    } catch (NoSuchFileException e) {
      throw new ShortFileException(file, 0, chunkEnd);
    }
    try {
      long size = channel.size();
      if (size < chunkEnd) {
        throw new ShortFileException(file, size, chunkEnd);
      }
      return channel;
    } catch (IOException | RuntimeException e) {
      channel.close();
      throw e;
    }
  }

  /**
   * Reads chunk {@code chunk} of {@code file}, a file of application {@code appId} (its extents,
   * one after another), into a buffer of {@code alloc}, which the future's receiver owns; fails
   * with an {@link IOException} naming the file.
   */
  public CompletableFuture<ByteBuf> read(
      String appId, Path file, ChunkExtents chunks, int chunk, ByteBufAllocator alloc) {
    CompletableFuture<ByteBuf> result = new CompletableFuture<>();
    submit(appId, () -> readNow(file, chunks, chunk, alloc, result), result);
    return result;
  }

  private static void readNow(
      Path file,
      ChunkExtents chunks,
      int chunk,
      ByteBufAllocator alloc,
      CompletableFuture<ByteBuf> out) {
    int length = (int) chunks.chunkLength(chunk);
    ByteBuf buf = alloc.directBuffer(length, length);
    try (FileChannel channel = openHolding(file, chunks.chunkEnd(chunk))) {
      for (int k = 0; k < chunks.extentCount(chunk); k++) {
        long pos = chunks.extentOffset(chunk, k);
        long end = pos + chunks.extentLength(chunk, k);
        while (pos < end) {
          int n = buf.writeBytes(channel, pos, (int) (end - pos));
          if (n < 0) {
            throw new EOFException(file + " ends before byte " + end + " of chunk " + chunk);
          }
          pos += n;
        }
      }
    } catch (IOException | RuntimeException e) {
      buf.release();
      out.completeExceptionally(
          e instanceof IOException ? e : new IOException("cannot read " + file + ": " + e, e));
      return;
    }
    if (!out.complete(buf)) {
      buf.release();
    }
  }

  @Override
  public void close() {
    executor.shutdownNow();
  }
}
