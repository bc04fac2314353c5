package io.sluice.server.memory;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One application's part of the {@link MemoryBudget}: every byte the server holds for the
 * application's splits and map partitions, reserved and released through here, so that flow control
 * can tell which applications hold more than their share ({@link
 * MemoryBudget#applicationsOverShare}), weighted by the application's {@link #weight}. Since every
 * split and map partition being written holds its application's account, the account also counts
 * them ({@link #tryOpenWriter}), for {@code sluice.app.maxOpenWriters}.
 *
 * <p>A pushed body is reserved by the connection's decoder before the server knows whose it is; the
 * split that takes it {@link #adopt}s the reservation, which the budget already counts. What an
 * account holds is its adopted and reserved bytes less what it released. Thread safe.
 */
public final class MemoryAccount {
  private final MemoryBudget budget;
  private final String appId;
  private final AtomicLong held = new AtomicLong();
  private final AtomicInteger openWriters = new AtomicInteger();
  private volatile int weight = 1;

  MemoryAccount(MemoryBudget budget, String appId) {
    this.budget = budget;
    this.appId = appId;
  }

  public String appId() {
    return appId;
  }

  /** The budget this account is part of. */
  public MemoryBudget budget() {
    return budget;
  }

  /**
   * Reserves {@code bytes} in the budget for this application.
   *
   * @return false, reserving nothing, when they do not fit under the maximum
   */
  public boolean tryReserve(long bytes) {
    // counted here first: the budget tells flow control of a pause from inside tryReserve, and its
    // decision must see whose bytes paused it
    held.addAndGet(bytes);
    if (!budget.tryReserve(bytes)) {
      held.addAndGet(-bytes);
      return false;
    }
    return true;
  }

  /** Counts as this application's {@code bytes} the budget already holds (a decoder reserved). */
  public void adopt(long bytes) {
    if (bytes < 0) {
      throw new IllegalArgumentException("cannot adopt " + bytes + " bytes");
    }
    held.addAndGet(bytes);
  }

  /** Returns {@code bytes} reserved or adopted earlier to the budget. */
  public void release(long bytes) {
    held.addAndGet(-bytes);
    budget.release(bytes);
  }

  /** Bytes of the budget this application holds now. */
  public long held() {
    return held.get();
  }

  /** Its weight in the share of memory (1 unless the application asked for more and may). */
  public int weight() {
    return weight;
  }

  public void setWeight(int weight) {
    if (weight < 1) {
      throw new IllegalArgumentException("weight must be at least 1, got " + weight);
    }
    this.weight = weight;
  }

  /**
   * Counts one more split or map partition being written for the application, unless it writes
   * {@code max} already.
   *
   * @param max most writers at once; 0 for no limit
   * @return false, counting nothing, when it writes {@code max} already
   */
  public boolean tryOpenWriter(int max) {
    while (true) {
      int open = openWriters.get();
      if (max > 0 && open >= max) {
        return false;
      }
      if (openWriters.compareAndSet(open, open + 1)) {
        return true;
      }
    }
  }

  /** A writer counted by {@link #tryOpenWriter} is committed or dropped. */
  public void writerClosed() {
    openWriters.decrementAndGet();
  }

  /** Splits and map partitions being written for the application now. */
  public int openWriters() {
    return openWriters.get();
  }

  @Override
  public String toString() {
    return "MemoryAccount{" + appId + ": " + held.get() + " bytes}";
  }
}
