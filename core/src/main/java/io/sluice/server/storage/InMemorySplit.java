package io.sluice.server.storage;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.sluice.protocol.ChunkExtents;
import io.sluice.server.ServerMetrics;
import io.sluice.server.memory.MemoryAccount;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * The bytes of a split committed in the memory tier: exactly what its file would hold (batches in
 * the file's order, then the map-run trailer), counted in the memory budget until they are written
 * to the file or the split is dropped. Readers take retained slices, so dropping it never pulls
 * bytes from under a response being sent. Thread safe.
 */
public final class InMemorySplit {
  private final ByteBuf image;
  private final long reserved;
  private final MemoryAccount memory;
  private final ServerMetrics metrics;
  private final long committedAtNanos = System.nanoTime();
  private final Supplier<CompletableFuture<Void>> writeBack;

  // guarded by this
  private boolean held = true;

  /**
   * @param image the file's bytes; this object owns it
   * @param reserved the bytes of it counted in {@code memory}, released with it
   * @param writeBack writes the image to the split's file and then {@link #drop()}s it; the same
   *     future for every call
   */
  InMemorySplit(
      ByteBuf image,
      long reserved,
      MemoryAccount memory,
      ServerMetrics metrics,
      Supplier<CompletableFuture<Void>> writeBack) {
    this.image = image;
    this.reserved = reserved;
    this.memory = memory;
    this.metrics = metrics;
    this.writeBack = writeBack;
    metrics.memoryTierSplits().inc();
    metrics.memoryTierBytes().inc(reserved);
  }

  /**
   * Chunk {@code chunk} of {@code chunks} (extents of the image) as a retained buffer the caller
   * releases; null once the bytes are no longer held here (read the file).
   */
  public synchronized ByteBuf chunk(ChunkExtents chunks, int chunk) {
    if (!held) {
      return null;
    }
    int extents = chunks.extentCount(chunk);
    if (extents == 1) {
      return image.retainedSlice(
          (int) chunks.extentOffset(chunk, 0), (int) chunks.extentLength(chunk, 0));
    }
    CompositeByteBuf out = Unpooled.compositeBuffer(extents);
    for (int k = 0; k < extents; k++) {
      out.addComponent(
          true,
          image.retainedSlice(
              (int) chunks.extentOffset(chunk, k), (int) chunks.extentLength(chunk, k)));
    }
    return out;
  }

  /** True while the bytes are held here. */
  public synchronized boolean isHeld() {
    return held;
  }

  /** Bytes held (and counted in the memory budget). */
  public long size() {
    return reserved;
  }

  /** How long ago the split was committed. */
  long ageNanos() {
    return System.nanoTime() - committedAtNanos;
  }

  /** Writes the bytes to the split's file (once) and drops them; completes when done. */
  public CompletableFuture<Void> writeBack() {
    return writeBack.get();
  }

  /** The image to write to the file, retained; null once dropped. */
  synchronized ByteBuf retainedImage() {
    return held ? image.retainedDuplicate() : null;
  }

  /** Stops holding the bytes (written to the file, or the split dropped). Idempotent. */
  void drop() {
    synchronized (this) {
      if (!held) {
        return;
      }
      held = false;
    }
    image.release();
    memory.release(reserved);
    metrics.memoryTierSplits().dec();
    metrics.memoryTierBytes().dec(reserved);
  }
}
