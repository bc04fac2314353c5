package io.sluice.server;

import io.netty.channel.Channel;
import io.netty.util.AttributeKey;
import io.sluice.server.memory.MemoryBudget;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongUnaryOperator;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns the memory budget's state into backpressure: while pushes are paused the server stops
 * reading the connections that push first copies for the applications over their share of memory
 * ({@link MemoryBudget#applicationsOverShare}; their senders block on TCP), past the replica
 * watermark every connection that pushes, replicas too (sluice.replication.factor 2), and hands the
 * largest buffers to the flushers until held memory is back at the resume mark; when it is, reading
 * resumes. So a heavy writer that fills memory is paused while a small job beside it keeps pushing.
 * Requests on connections that only read or control are never paused. A connection that pushes for
 * several applications (one client process serving several jobs) pauses when any of them is over
 * its share.
 *
 * <p><b>Threads.</b> All decisions run on one executor of flow control's own, which must run
 * nothing that waits on IO: not the housekeeping thread (disk probes fsync, application expiry
 * waits for deletions), or a slow disk would keep every pusher paused. Handing buffers to the
 * flushers ({@code flushLargest}) only queues their writes, so it does not wait on a disk either.
 * Decisions read the budget's current state, so pause and resume notifications that race on other
 * threads cannot leave a connection paused.
 *
 * <p><b>Bound.</b> At most one decision and one flush request wait on the executor at a time,
 * however many notifications arrive: a burst of refused reservations adds its bytes to the one
 * flush request already waiting instead of queueing a walk over every buffer per refusal. While
 * paused, the decision repeats every {@link #RECHECK_MILLIS} ms (one scheduled re-check at a time):
 * pushes read just before the pause land in small buffers that would otherwise wait for their flush
 * size and keep the server paused.
 */
final class FlowControl implements MemoryBudget.Listener {
  private static final Logger LOG = LoggerFactory.getLogger(FlowControl.class);
  // the applications the connection pushed first copies for (paused at the pause watermark, by
  // share); replaced, never changed, so the flow control thread reads it while the connection's
  // event loop adds to it
  private static final AttributeKey<Set<String>> PUSHES_FOR =
      AttributeKey.valueOf("sluicePushesFor");

  // set when the connection pushed replicas (paused at the replica watermark)
  private static final AttributeKey<Boolean> PUSHES_REPLICAS =
      AttributeKey.valueOf("sluicePushesReplicas");

  /** What flow control pauses and resumes: the server's connections. */
  interface Connections {
    /** Pauses ({@code reading} false) or resumes reading the connections {@code which} selects. */
    void setReading(Predicate<Channel> which, boolean reading);
  }

  static final long RECHECK_MILLIS = 10;

  private final MemoryBudget memory;
  private final LongUnaryOperator flushLargest;
  private final ScheduledExecutorService executor;
  private volatile Connections connections;

  /** A decision ({@link #apply}) waits on the executor, so another one is not queued. */
  private final AtomicBoolean applyQueued = new AtomicBoolean();

  /** A flush request waits on the executor; later requests add to {@link #flushBytes}. */
  private final AtomicBoolean flushQueued = new AtomicBoolean();

  /** Bytes the waiting flush request is to free (the sum of the requests it stands for). */
  private final AtomicLong flushBytes = new AtomicLong();

  /** Executor thread only: a re-check is scheduled, so another one is not. */
  private boolean recheckScheduled;

  /**
   * @param flushLargest hands the largest buffers to the flushers until at least the given bytes
   *     are on their way to disk, returning the bytes handed over; must not wait on IO
   * @param executor flow control's own single thread, shut down by the owner; runs nothing that
   *     waits on IO
   */
  FlowControl(
      MemoryBudget memory, LongUnaryOperator flushLargest, ScheduledExecutorService executor) {
    if (memory == null || flushLargest == null || executor == null) {
      throw new NullPointerException("memory, flushLargest and executor are required");
    }
    this.memory = memory;
    this.flushLargest = flushLargest;
    this.executor = executor;
  }

  void attach(Connections connections) {
    this.connections = connections;
  }

  /**
   * Marks a connection as one that pushes first copies for application {@code appId}, or ({@code
   * replica}) replicas only; a new one is paused at once if its kind of pushes is. The connection's
   * event loop only.
   */
  void pushedOn(Channel channel, String appId, boolean replica) {
    boolean changed = false;
    if (replica) {
      changed =
          channel.attr(PUSHES_REPLICAS).get() == null
              && channel.attr(PUSHES_REPLICAS).setIfAbsent(Boolean.TRUE) == null;
    } else {
      Set<String> apps = channel.attr(PUSHES_FOR).get();
      if (apps == null || !apps.contains(appId)) {
        Set<String> more = new HashSet<>(apps == null ? Set.of() : apps);
        more.add(appId);
        channel.attr(PUSHES_FOR).set(Set.copyOf(more));
        changed = true;
      }
    }
    if (changed && memory.state() != MemoryBudget.State.ACCEPTING) {
      requestApply();
    }
  }

  @Override
  public void stateChanged() {
    requestApply();
  }

  /** Adds {@code bytes} to the one waiting flush request, queueing it if none waits. */
  @Override
  public void needRoom(long bytes) {
    flushBytes.accumulateAndGet(bytes, FlowControl::saturatedAdd);
    if (flushQueued.compareAndSet(false, true)) {
      submit(this::flushRequested);
    }
  }

  private void requestApply() {
    if (applyQueued.compareAndSet(false, true)) {
      submit(this::queuedApply);
    }
  }

  private void submit(Runnable task) {
    try {
      executor.execute(task);
    } catch (RejectedExecutionException e) {
      // the server is stopping: nothing is read or flushed early any more
      LOG.debug("Flow control stopped; dropping a request: {}", e.toString());
    }
  }

  private void flushRequested() {
    // cleared before the bytes are taken: a request racing with this one queues a new one (which
    // may find nothing left to do) rather than being lost
    flushQueued.set(false);
    long bytes = flushBytes.getAndSet(0);
    if (bytes <= 0) {
      return;
    }
    try {
      flushLargest.applyAsLong(bytes);
    } catch (RuntimeException e) {
      LOG.error("Flushing the largest buffers to free {} bytes failed", bytes, e);
    }
  }

  private void queuedApply() {
    applyQueued.set(false);
    apply();
  }

  private void recheck() {
    recheckScheduled = false;
    apply();
  }

  private void apply() {
    Connections c = connections;
    if (c == null) {
      return;
    }
    try {
      MemoryBudget.State state = memory.state();
      boolean allPaused = state == MemoryBudget.State.ALL_PAUSED;
      Set<String> over = allPaused ? Set.of() : memory.applicationsOverShare();
      Predicate<Channel> paused =
          allPaused ? ch -> true : ch -> carriesAny(ch.attr(PUSHES_FOR).get(), over);
      Predicate<Channel> firstCopies = ch -> ch.attr(PUSHES_FOR).get() != null;
      c.setReading(firstCopies.and(paused.negate()), true);
      c.setReading(firstCopies.and(paused), false);
      // a connection that pushed first copies too follows them
      c.setReading(
          ch -> ch.attr(PUSHES_REPLICAS).get() != null && ch.attr(PUSHES_FOR).get() == null,
          !allPaused);
      if (state != MemoryBudget.State.ACCEPTING) {
        long handed = flushLargest.applyAsLong(memory.excessOverResume());
        LOG.debug(
            "Memory {}: {} of {} bytes held; pushes paused for {}, {} bytes flushed early",
            state,
            memory.held(),
            memory.max(),
            allPaused ? "every application" : over,
            handed);
        if (!recheckScheduled) {
          recheckScheduled = true;
          executor.schedule(this::recheck, RECHECK_MILLIS, TimeUnit.MILLISECONDS);
        }
      }
    } catch (RejectedExecutionException e) {
      LOG.debug("Flow control stopped; no re-check scheduled: {}", e.toString());
    } catch (RuntimeException e) {
      LOG.error("Applying the memory state to the connections failed", e);
    }
  }

  private static boolean carriesAny(Set<String> apps, Set<String> over) {
    if (apps == null || over.isEmpty()) {
      return false;
    }
    for (String app : apps) {
      if (over.contains(app)) {
        return true;
      }
    }
    return false;
  }

  private static long saturatedAdd(long a, long b) {
    long sum = a + b;
    return sum < 0 ? Long.MAX_VALUE : sum;
  }
}
