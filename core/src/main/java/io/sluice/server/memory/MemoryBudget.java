package io.sluice.server.memory;

import io.sluice.common.Clock;

/**
 * Counts every byte of pushed data the server holds (received, not yet flushed) against {@code
 * sluice.memory.max} and decides, with watermarks, whether more may come in.
 *
 * <p>A push reserves its body's size before it is kept; the flusher releases the same amount once
 * the bytes are on disk or discarded, so the count returns to zero when a workload ends. The count
 * never exceeds the maximum: a reservation that does not fit is refused.
 *
 * <p>Watermarks (fractions of the maximum): reaching {@code pause} stops pushes from map tasks and
 * asks for the largest buffers to be flushed (the pressure listener); reaching {@code replicaPause}
 * stops replica traffic too; both resume once the count falls to {@code resume} or below. Thread
 * safe.
 */
public final class MemoryBudget {
  /** Whether the budget currently admits pushes. */
  public enum State {
    ACCEPTING,
    PUSH_PAUSED,
    ALL_PAUSED
  }

  /** Called (outside any lock) when the budget pauses, with the bytes to free to resume. */
  public interface PressureListener {
    void onPressure(long bytesToFree);
  }

  private final long max;
  private final long pauseAt;
  private final long replicaPauseAt;
  private final long resumeAt;
  private final Clock clock;
  private volatile PressureListener listener = bytes -> {};

  // guarded by this
  private long held;
  private long peak;
  private State state = State.ACCEPTING;
  private long pausedSinceNanos;
  private long pausedNanosTotal;

  public MemoryBudget(long max, double pause, double replicaPause, double resume, Clock clock) {
    if (max <= 0) {
      throw new IllegalArgumentException("memory max must be positive, got " + max);
    }
    if (!(resume < pause && pause <= replicaPause && replicaPause <= 1.0)) {
      throw new IllegalArgumentException(
          "watermarks must satisfy resume < pause <= replicaPause <= 1, got "
              + resume
              + ", "
              + pause
              + ", "
              + replicaPause);
    }
    this.max = max;
    this.pauseAt = (long) (max * pause);
    this.replicaPauseAt = (long) (max * replicaPause);
    this.resumeAt = (long) (max * resume);
    this.clock = clock;
  }

  /** A budget without watermarks below the maximum (tests and tools). */
  public MemoryBudget(long max) {
    this(max, 0.999999, 1.0, 0.5, Clock.SYSTEM);
  }

  public void setPressureListener(PressureListener listener) {
    this.listener = listener;
  }

  /**
   * Reserves {@code bytes} of a push from a map task, unless pushes are paused or the bytes do not
   * fit.
   *
   * @return false (reserving nothing) when the push must be answered CONGESTED
   */
  public boolean tryReservePush(long bytes) {
    return tryReserve(bytes, false);
  }

  /** Like {@link #tryReservePush} for replica traffic, which is paused only at the higher mark. */
  public boolean tryReserveReplica(long bytes) {
    return tryReserve(bytes, true);
  }

  private boolean tryReserve(long bytes, boolean replica) {
    if (bytes < 0) {
      throw new IllegalArgumentException("cannot reserve " + bytes + " bytes");
    }
    long toFree = 0;
    boolean reserved = false;
    synchronized (this) {
      boolean paused = replica ? state == State.ALL_PAUSED : state != State.ACCEPTING;
      if (!paused && held + bytes <= max) {
        held += bytes;
        peak = Math.max(peak, held);
        reserved = true;
      }
      State next = state;
      if (held >= replicaPauseAt) {
        next = State.ALL_PAUSED;
      } else if (held >= pauseAt && state == State.ACCEPTING) {
        next = State.PUSH_PAUSED;
      }
      if (next != state) {
        if (state == State.ACCEPTING) {
          pausedSinceNanos = clock.nanos();
          toFree = held - resumeAt;
        }
        state = next;
      } else if (!reserved && !paused) {
        // accepting, but this body does not fit: make room for it
        toFree = Math.max(bytes, held - resumeAt);
      }
    }
    if (toFree > 0) {
      listener.onPressure(toFree);
    }
    return reserved;
  }

  /** Returns {@code bytes} reserved earlier; resumes pushes once the count is low enough. */
  public synchronized void release(long bytes) {
    long after = held - bytes;
    if (bytes < 0 || after < 0) {
      throw new IllegalStateException(
          "memory accounting broken: releasing " + bytes + " bytes of " + held + " held");
    }
    held = after;
    if (state != State.ACCEPTING && held <= resumeAt) {
      pausedNanosTotal += clock.nanos() - pausedSinceNanos;
      state = State.ACCEPTING;
    }
  }

  public synchronized long held() {
    return held;
  }

  /** The most bytes ever held at once. */
  public synchronized long peak() {
    return peak;
  }

  public long max() {
    return max;
  }

  public synchronized State state() {
    return state;
  }

  /** Total time pushes were paused, including a pause in progress. */
  public synchronized long pausedMillis() {
    long nanos = pausedNanosTotal;
    if (state != State.ACCEPTING) {
      nanos += clock.nanos() - pausedSinceNanos;
    }
    return nanos / 1_000_000L;
  }
}
