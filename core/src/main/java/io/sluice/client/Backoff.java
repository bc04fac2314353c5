package io.sluice.client;

import java.util.concurrent.ThreadLocalRandom;

/** Exponential backoff with full jitter and a cap. */
public final class Backoff {
  private final long baseMillis;
  private final long maxMillis;

  public Backoff(long baseMillis, long maxMillis) {
    this.baseMillis = Math.max(1, baseMillis);
    this.maxMillis = Math.max(this.baseMillis, maxMillis);
  }

  /** Wait before retry number {@code attempt} (1-based): uniform in [cap/2, cap]. */
  public long delayMillis(int attempt) {
    long cap = baseMillis << Math.min(20, Math.max(0, attempt - 1));
    cap = Math.min(cap, maxMillis);
    return cap / 2 + ThreadLocalRandom.current().nextLong(cap / 2 + 1);
  }
}
