package io.sluice.server.memory;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Counts every byte of pushed data the server holds (received, not yet flushed) against {@code
 * sluice.memory.max}. A push reserves its body's size before it is kept and the flusher releases
 * the same amount after the bytes are on disk or discarded, so the count returns to zero when a
 * workload ends. Thread safe.
 */
public final class MemoryBudget {
  private final long max;
  private final AtomicLong held = new AtomicLong();
  private final AtomicLong peak = new AtomicLong();

  public MemoryBudget(long max) {
    if (max <= 0) {
      throw new IllegalArgumentException("memory max must be positive, got " + max);
    }
    this.max = max;
  }

  /**
   * Reserves {@code bytes} if they fit under the maximum.
   *
   * @return false (reserving nothing) when they do not fit
   */
  public boolean tryReserve(long bytes) {
    if (bytes < 0) {
      throw new IllegalArgumentException("cannot reserve " + bytes + " bytes");
    }
    while (true) {
      long current = held.get();
      long next = current + bytes;
      if (next > max) {
        return false;
      }
      if (held.compareAndSet(current, next)) {
        peak.accumulateAndGet(next, Math::max);
        return true;
      }
    }
  }

  /** Returns {@code bytes} reserved earlier. */
  public void release(long bytes) {
    long after = held.addAndGet(-bytes);
    if (after < 0) {
      throw new IllegalStateException(
          "memory accounting went negative (" + after + ") after releasing " + bytes + " bytes");
    }
  }

  public long held() {
    return held.get();
  }

  /** The most bytes ever held at once. */
  public long peak() {
    return peak.get();
  }

  public long max() {
    return max;
  }
}
