package io.sluice.server.memory;

import java.util.concurrent.atomic.AtomicLong;

/**
 * One application's part of the {@link MemoryBudget}: every byte the server holds for the
 * application's splits and map partitions, reserved and released through here, so that flow control
 * can tell which applications hold more than their share ({@link
 * MemoryBudget#applicationsOverShare}).
 *
 * <p>A pushed body is reserved by the connection's decoder before the server knows whose it is; the
 * split that takes it {@link #adopt}s the reservation, which the budget already counts. What an
 * account holds is its adopted and reserved bytes less what it released. Thread safe.
 */
public final class MemoryAccount {
  private final MemoryBudget budget;
  private final String appId;
  private final AtomicLong held = new AtomicLong();

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

  @Override
  public String toString() {
    return "MemoryAccount{" + appId + ": " + held.get() + " bytes}";
  }
}
