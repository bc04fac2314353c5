package io.sluice.server.memory;

import io.sluice.common.Clock;
import io.sluice.network.InboundMemory;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Counts every byte of pushed data the server holds (received, not yet flushed) against {@code
 * sluice.memory.max} and decides, with watermarks, whether more may come in.
 *
 * <p>A push reserves its body's size before it is kept; the flusher releases the same amount once
 * the bytes are on disk or discarded, so the count returns to zero when a workload ends. The count
 * never exceeds the maximum: a reservation that does not fit is refused.
 *
 * <p>Watermarks (fractions of the maximum): reaching {@code pause} pauses pushes from map tasks
 * (the server stops reading their connections, so TCP pushes back) and asks for the largest buffers
 * to be flushed; reaching {@code replicaPause} pauses replica traffic too; both resume once the
 * count falls to {@code resume} or below. A push already read while paused is still taken if it
 * fits under the maximum, and answered CONGESTED if it does not.
 *
 * <p>What the server holds for an application's splits is also counted in that application's {@link
 * MemoryAccount} ({@link #account}), so that flow control can pause the applications that hold more
 * than their share first. Thread safe.
 */
public final class MemoryBudget implements InboundMemory {
  /** Whether the budget currently admits pushes. */
  public enum State {
    ACCEPTING,
    PUSH_PAUSED,
    ALL_PAUSED
  }

  /**
   * Told about changes, outside any lock. Calls may arrive out of order from different threads, so
   * a listener reads {@link #state()} when it acts instead of trusting the order of calls.
   */
  public interface Listener {
    /** The state changed (paused or resumed). */
    void stateChanged();

    /**
     * Flush at least {@code bytes}: a body did not fit under the maximum, or held memory crossed
     * the early-flush mark (halfway between the resume and pause marks).
     */
    void needRoom(long bytes);
  }

  private final long max;
  private final long pauseAt;
  private final long replicaPauseAt;
  private final long resumeAt;

  /**
   * Halfway between the resume and the pause marks: crossing it upwards starts flushing the largest
   * buffers down to the resume mark while pushes still flow, so the pause is the rare case and not
   * the rhythm of a busy server.
   */
  private final long earlyFlushAt;

  private final Clock clock;
  private final Map<String, MemoryAccount> accounts = new ConcurrentHashMap<>();
  private volatile Listener listener =
      new Listener() {
        @Override
        public void stateChanged() {}

        @Override
        public void needRoom(long bytes) {}
      };

  // guarded by this
  private long held;
  private long peak;
  // written under the lock; volatile so that the check every push makes ({@link #congestFirst})
  // needs no lock while the budget is not nearly full
  private volatile State state = State.ACCEPTING;
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
    this.earlyFlushAt = resumeAt + (pauseAt - resumeAt) / 2;
    this.clock = clock;
  }

  /** A budget without watermarks below the maximum (tests and tools). */
  public MemoryBudget(long max) {
    this(max, 0.999999, 1.0, 0.5, Clock.SYSTEM);
  }

  public void setListener(Listener listener) {
    this.listener = listener;
  }

  /**
   * Reserves {@code bytes} of pushed data (from a map task, or replica traffic) if they fit under
   * the maximum. The watermarks do not refuse anything here; they pause reading (see {@link
   * #state()}), so only data already read arrives while paused.
   *
   * @return false (reserving nothing) when the push must be answered CONGESTED
   */
  @Override
  public boolean tryReserve(long bytes) {
    if (bytes < 0) {
      throw new IllegalArgumentException("cannot reserve " + bytes + " bytes");
    }
    boolean changed = false;
    long needRoom = 0;
    boolean reserved = false;
    synchronized (this) {
      if (held + bytes <= max) {
        held += bytes;
        peak = Math.max(peak, held);
        reserved = true;
        if (held >= earlyFlushAt && held - bytes < earlyFlushAt && state == State.ACCEPTING) {
          needRoom = held - resumeAt;
        }
      } else {
        needRoom = bytes;
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
        }
        state = next;
        changed = true;
      }
    }
    if (changed) {
      listener.stateChanged();
    }
    if (needRoom > 0) {
      listener.needRoom(needRoom);
    }
    return reserved;
  }

  /** The account of application {@code appId}, opened on first use. */
  public MemoryAccount account(String appId) {
    return accounts.computeIfAbsent(appId, id -> new MemoryAccount(this, id));
  }

  /**
   * Stops listing the account of an application that is gone (its data discarded); what it still
   * releases goes back to the budget as before, and a new registration opens a new account.
   */
  public void closeAccount(String appId) {
    accounts.remove(appId);
  }

  /** Bytes application {@code appId} holds now (0 without an account). */
  public long heldBy(String appId) {
    MemoryAccount account = accounts.get(appId);
    return account == null ? 0 : account.held();
  }

  /** The account of application {@code appId} if it has one, else null (none is opened). */
  public MemoryAccount existingAccount(String appId) {
    return accounts.get(appId);
  }

  /**
   * The applications to pause while pushes are paused ({@link State#PUSH_PAUSED}): those holding
   * more than their share of the resume mark, which is divided among the applications holding
   * memory now by weight (after what no application holds: bodies still arriving, read buffers).
   * The others keep pushing (up to the replica watermark, where everyone pauses), so a writer that
   * fills the budget pauses itself and not its neighbours. With one application holding memory, it
   * is over its share whenever pushes are paused: the budget-wide pause. Empty while accepting.
   */
  public Set<String> applicationsOverShare() {
    long total;
    synchronized (this) {
      if (state == State.ACCEPTING) {
        return Set.of();
      }
      total = held;
    }
    Set<String> over = new HashSet<>();
    Shares shares = shares(total);
    for (MemoryAccount account : accounts.values()) {
      if (shares.over(account)) {
        over.add(account.appId());
      }
    }
    return over;
  }

  /**
   * Whether a body of application {@code appId}, already reserved, is to be refused CONGESTED to
   * leave the last of the budget to others: true only at the replica watermark (where every
   * connection is paused and only bodies already sent arrive), while another application holds
   * memory too and this one holds more than its share. The heaviest are refused first; a lone
   * writer is never refused what fits.
   */
  public boolean congestFirst(String appId) {
    if (state != State.ALL_PAUSED) {
      return false;
    }
    long total;
    synchronized (this) {
      total = held;
    }
    MemoryAccount account = accounts.get(appId);
    if (account == null) {
      return false;
    }
    Shares shares = shares(total);
    return shares.holding > 1 && shares.over(account);
  }

  /** Each holding application's share of the resume mark, per unit of weight. */
  private Shares shares(long total) {
    int holding = 0;
    long weights = 0;
    long attributed = 0;
    for (MemoryAccount account : accounts.values()) {
      long bytes = account.held();
      if (bytes > 0) {
        holding++;
        weights += account.weight();
        attributed += bytes;
      }
    }
    long unattributed = Math.max(0, total - attributed);
    return new Shares(holding, Math.max(0, resumeAt - unattributed) / Math.max(1, weights));
  }

  private static final class Shares {
    final int holding;
    final long perWeight;

    Shares(int holding, long perWeight) {
      this.holding = holding;
      this.perWeight = perWeight;
    }

    boolean over(MemoryAccount account) {
      return account.held() > perWeight * account.weight();
    }
  }

  /** Bytes to flush to get back to the resume mark (0 when below it). */
  public synchronized long excessOverResume() {
    return Math.max(0, held - resumeAt);
  }

  /** Returns {@code bytes} reserved earlier; resumes pushes once the count is low enough. */
  @Override
  public void release(long bytes) {
    synchronized (this) {
      long after = held - bytes;
      if (bytes < 0 || after < 0) {
        throw new IllegalStateException(
            "memory accounting broken: releasing " + bytes + " bytes of " + held + " held");
      }
      held = after;
      if (state == State.ACCEPTING || held > resumeAt) {
        return;
      }
      pausedNanosTotal += clock.nanos() - pausedSinceNanos;
      state = State.ACCEPTING;
    }
    listener.stateChanged();
  }

  public synchronized long held() {
    return held;
  }

  /** The most bytes ever held at once. */
  public synchronized long peak() {
    return peak;
  }

  /** Why a body of {@code what} (naming it) was refused CONGESTED, for the writer's error. */
  public synchronized String congestedMessage(String what) {
    return "server memory is "
        + state
        + " ("
        + held
        + " of "
        + max
        + " bytes held, sluice.memory.max); retry "
        + what
        + " later";
  }

  @Override
  public long max() {
    return max;
  }

  /** Bytes held at which pushes from map tasks pause ({@code pause} of {@code max}). */
  public long pauseWatermarkBytes() {
    return pauseAt;
  }

  /** Bytes held at which replica traffic pauses too ({@code replicaPause} of {@code max}). */
  public long replicaPauseWatermarkBytes() {
    return replicaPauseAt;
  }

  /** Bytes held at or below which paused pushes resume ({@code resume} of {@code max}). */
  public long resumeWatermarkBytes() {
    return resumeAt;
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
