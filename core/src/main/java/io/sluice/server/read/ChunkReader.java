package io.sluice.server.read;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.sluice.protocol.ChunkExtents;
import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Reads chunks of committed split files into buffers, on threads of its own, for connections that
 * cannot send a file region: under TLS every byte passes through the SSL engine, so sendfile is out
 * and the chunk must be in memory. Network threads never wait on the disk. A chunk in flight holds
 * its length of the server's direct memory until it is written. Threads start on first use, so a
 * server without TLS runs none. Thread safe.
 */
public final class ChunkReader implements Closeable {
  private final ThreadPoolExecutor executor;

  public ChunkReader(int threads) {
    this.executor =
        new ThreadPoolExecutor(
            threads,
            threads,
            60,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(),
            new DefaultThreadFactory("sluice-chunk-reader", true));
    executor.allowCoreThreadTimeOut(true);
  }

  /**
   * Reads chunk {@code chunk} of {@code file} (its extents, one after another) into a buffer of
   * {@code alloc}, which the future's receiver owns; fails with an {@link IOException} naming the
   * file.
   */
  public CompletableFuture<ByteBuf> read(
      Path file, ChunkExtents chunks, int chunk, ByteBufAllocator alloc) {
    CompletableFuture<ByteBuf> result = new CompletableFuture<>();
    try {
      executor.execute(() -> readNow(file, chunks, chunk, alloc, result));
    } catch (RejectedExecutionException e) {
      result.completeExceptionally(new IOException("the server is stopping", e));
    }
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
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
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
