package io.sluice.server.storage;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.sluice.network.FrameDecoder;
import io.sluice.server.memory.MemoryAccount;
import java.util.ArrayList;
import java.util.List;

/**
 * The bodies a split accepted and has not yet handed to its flusher, with the memory budget bytes
 * they hold. Not thread safe: the split's lock guards it.
 *
 * <p><b>Small bodies are copied, and gathered.</b> A body of at most {@link #GATHER_MAX} bytes is
 * never kept as it came: it may be a slice of a buffer it shares with other small parts of a merged
 * push ({@link FrameDecoder#SHARED_PART_MAX}), and keeping it would keep them. It is copied, and
 * goes back to the pool at once, on the network thread that received it. The first such body since
 * the last hand-over is copied into a buffer of its own size (a split that only ever gets one small
 * body holds just that); the next ones into a gathering buffer. Without this, a shuffle of many
 * partitions and small pushes (tens of bytes per partition per map) kept one pooled buffer per
 * pushed batch until its flush: the flusher then wrote hundreds of iovecs, freed every buffer
 * through the pool's shared arena (the receiving thread's cache never saw it back) and walked
 * scattered memory to order the batches.
 *
 * <ul>
 *   <li>A gathering buffer is reserved in the budget at its full capacity before it is used. The
 *       reservations of the bodies copied into it are returned when it stops gathering (one budget
 *       call per buffer, not per body). So the budget counts what is held, and, while a buffer
 *       gathers, its copied bytes twice. When the budget has no room for a new buffer, a body is
 *       copied into a buffer of its own size, which its reservation covers.
 *   <li>Capacities double per split from {@link #GATHER_FIRST} to {@link #GATHER_LARGEST}.
 *   <li>A body too large to gather ends the current gathering buffer, so the batches stay in the
 *       order the split accepted them.
 * </ul>
 */
final class PendingBatches {
  /** Bodies of at most this many bytes are copied (and gathered): the decoder's shared parts. */
  static final int GATHER_MAX = FrameDecoder.SHARED_PART_MAX;

  /** The first gathering buffer's capacity; each next one of the split doubles it. */
  static final int GATHER_FIRST = 4096;

  /** The largest gathering buffer. */
  static final int GATHER_LARGEST = 64 * 1024;

  /** What was pending when it was handed over: to write, then to release with the reservation. */
  static final class Handed {
    final List<ByteBuf> buffers;

    /** Bytes of data in the buffers. */
    final long bytes;

    /** Budget bytes they hold. */
    final long reserved;

    private Handed(List<ByteBuf> buffers, long bytes, long reserved) {
      this.buffers = buffers;
      this.bytes = bytes;
      this.reserved = reserved;
    }

    /** Releases the buffers, and the reservation less {@code kept} bytes of it. */
    void release(MemoryAccount memory, long kept) {
      for (ByteBuf b : buffers) {
        b.release();
      }
      memory.release(reserved - kept);
    }
  }

  private final MemoryAccount memory;
  private List<ByteBuf> buffers = new ArrayList<>();
  private long bytes;
  private long reserved;

  /**
   * The last buffer, while small bodies are gathered into it; else null. The bodies copied into it,
   * its readable bytes, still hold their own reservations (part of {@link #reserved}), which its
   * own covers: they are returned when it stops gathering.
   */
  private ByteBuf gathering;

  private int nextGatherCapacity = GATHER_FIRST;

  PendingBatches(MemoryAccount memory) {
    this.memory = memory;
  }

  /**
   * Takes a body and its reservation of as many bytes, which the receiving decoder made in the
   * budget: from now on they count as the split's application's.
   */
  void add(ByteBuf body) {
    if (body.readableBytes() > GATHER_MAX) {
      adopt(body.readableBytes());
      stopGathering(); // keeps the accepted order: later small bodies go after this one
      buffers.add(body);
    } else {
      copy(body);
      body.release();
    }
  }

  /**
   * Takes a copy of a body of at most {@link #GATHER_MAX} bytes, and its reservation as {@link
   * #add} does; the body itself stays the caller's.
   */
  void copy(ByteBuf body) {
    int length = body.readableBytes();
    adopt(length);
    if (gathering == null || gathering.writableBytes() < length) {
      stopGathering();
      if (!buffers.isEmpty() && memory.tryReserve(nextGatherCapacity)) {
        int capacity = nextGatherCapacity;
        nextGatherCapacity = Math.min(2 * capacity, GATHER_LARGEST);
        gathering = PooledByteBufAllocator.DEFAULT.directBuffer(capacity, capacity);
        buffers.add(gathering);
        reserved += capacity;
      }
    }
    if (gathering != null) {
      gathering.writeBytes(body, body.readerIndex(), length);
    } else {
      // the first since the last hand-over, or no room to gather: a copy of its own size
      buffers.add(
          PooledByteBufAllocator.DEFAULT
              .directBuffer(length, length)
              .writeBytes(body, body.readerIndex(), length));
    }
  }

  private void adopt(int length) {
    memory.adopt(length);
    bytes += length;
    reserved += length;
  }

  /** Ends the gathering buffer, returning the reservations it made redundant. */
  private void stopGathering() {
    if (gathering != null) {
      int copied = gathering.readableBytes();
      gathering = null;
      memory.release(copied);
      reserved -= copied;
    }
  }

  /** Bytes of data pending. */
  long bytes() {
    return bytes;
  }

  /** Budget bytes the pending buffers hold: their data, and gathering buffers' room. */
  long reserved() {
    return reserved;
  }

  /** How many buffers hold the pending data (gathering shows here). */
  int bufferCount() {
    return buffers.size();
  }

  /** Everything pending, with its reservation; nothing is pending after. */
  Handed takeAll() {
    Handed handed = new Handed(buffers, bytes, reserved);
    buffers = new ArrayList<>();
    bytes = 0;
    reserved = 0;
    gathering = null;
    return handed;
  }
}
