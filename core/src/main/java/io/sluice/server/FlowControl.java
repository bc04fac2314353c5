package io.sluice.server;

import io.netty.channel.Channel;
import io.netty.util.AttributeKey;
import io.sluice.network.TransportServer;
import io.sluice.server.memory.MemoryBudget;
import io.sluice.server.storage.ShuffleRegistry;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns the memory budget's state into backpressure: while pushes are paused the server stops
 * reading the connections that push first copies (their senders block on TCP), and past the replica
 * watermark also those that push replicas (sluice.replication.factor 2), and hands the largest
 * buffers to the flushers until held memory is back at the resume mark; when it is, reading
 * resumes. Requests on connections that only read or control are never paused.
 *
 * <p>All decisions run on one executor and read the budget's current state, so pause and resume
 * notifications that race on other threads cannot leave a connection paused. While paused, the
 * check repeats every {@link #RECHECK_MILLIS} ms: pushes read just before the pause land in small
 * buffers that would otherwise wait for their flush size and keep the server paused.
 */
final class FlowControl implements MemoryBudget.Listener {
  private static final Logger LOG = LoggerFactory.getLogger(FlowControl.class);
  // TRUE: the connection pushed a first copy (paused at the pause watermark); FALSE: replica
  // pushes only (paused at the replica watermark)
  private static final AttributeKey<Boolean> PUSHES = AttributeKey.valueOf("sluicePushes");

  private final MemoryBudget memory;
  private final ShuffleRegistry registry;
  static final long RECHECK_MILLIS = 10;

  private final ScheduledExecutorService executor;
  private volatile TransportServer transport;

  /** Executor thread only: a re-check is scheduled, so another one is not. */
  private boolean recheckScheduled;

  FlowControl(MemoryBudget memory, ShuffleRegistry registry, ScheduledExecutorService executor) {
    this.memory = memory;
    this.registry = registry;
    this.executor = executor;
  }

  void attach(TransportServer transport) {
    this.transport = transport;
  }

  /**
   * Marks a connection as one that pushes first copies, or ({@code replica}) replicas only; a new
   * one is paused at once if its kind of pushes is.
   */
  void pushedOn(Channel channel, boolean replica) {
    Boolean before = channel.attr(PUSHES).get();
    if (before == Boolean.TRUE || (before != null && replica)) {
      return;
    }
    channel.attr(PUSHES).set(!replica);
    if (memory.state() != MemoryBudget.State.ACCEPTING) {
      executor.execute(this::apply);
    }
  }

  @Override
  public void stateChanged() {
    executor.execute(this::apply);
  }

  @Override
  public void needRoom(long bytes) {
    executor.execute(() -> registry.flushLargest(bytes));
  }

  private void recheck() {
    recheckScheduled = false;
    apply();
  }

  private void apply() {
    TransportServer t = transport;
    if (t == null) {
      return;
    }
    MemoryBudget.State state = memory.state();
    boolean reading = state == MemoryBudget.State.ACCEPTING;
    boolean readingReplicas = state != MemoryBudget.State.ALL_PAUSED;
    t.setReading(ch -> ch.attr(PUSHES).get() == Boolean.TRUE, reading);
    t.setReading(ch -> ch.attr(PUSHES).get() == Boolean.FALSE, readingReplicas);
    if (!reading) {
      long handed = registry.flushLargest(memory.excessOverResume());
      LOG.debug(
          "Memory {}: {} of {} bytes held; pushing connections paused, {} bytes flushed early",
          state,
          memory.held(),
          memory.max(),
          handed);
      if (!recheckScheduled) {
        recheckScheduled = true;
        executor.schedule(this::recheck, RECHECK_MILLIS, TimeUnit.MILLISECONDS);
      }
    }
  }
}
