package io.sluice.testutil;

import io.sluice.common.Clock;
import java.util.concurrent.atomic.AtomicLong;

/** A clock tests move by hand. */
public final class ManualClock implements Clock {
  private final AtomicLong millis = new AtomicLong(1_000_000);

  @Override
  public long millis() {
    return millis.get();
  }

  @Override
  public long nanos() {
    return millis.get() * 1_000_000L;
  }

  public void advance(long deltaMillis) {
    millis.addAndGet(deltaMillis);
  }
}
