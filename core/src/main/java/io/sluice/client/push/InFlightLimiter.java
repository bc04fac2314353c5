package io.sluice.client.push;

import io.sluice.client.ClientContext;
import io.sluice.protocol.proto.ServerAddress;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Bounds the pushed, unacknowledged bytes of one JVM per server. A push larger than the bound is
 * let through alone. Thread safe.
 */
public final class InFlightLimiter {
  private final long maxPerServer;
  private final long timeoutMillis;
  private final Map<ServerAddress, Long> inFlight = new HashMap<>();

  public InFlightLimiter(long maxPerServer, long timeoutMillis) {
    this.maxPerServer = maxPerServer;
    this.timeoutMillis = timeoutMillis;
  }

  /**
   * Waits until {@code bytes} more fit under the bound for {@code server}, then takes them.
   *
   * @throws IOException naming the server when no room frees up within the push timeout
   */
  public synchronized void acquire(ServerAddress server, long bytes)
      throws IOException, InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
    while (true) {
      long current = inFlight.getOrDefault(server, 0L);
      if (current == 0 || current + bytes <= maxPerServer) {
        inFlight.put(server, current + bytes);
        return;
      }
      long waitNanos = deadline - System.nanoTime();
      if (waitNanos <= 0) {
        throw new IOException(
            "Sluice server "
                + ClientContext.format(server)
                + " acknowledged nothing for "
                + timeoutMillis
                + " ms with "
                + current
                + " bytes in flight (sluice.push.timeout)");
      }
      TimeUnit.NANOSECONDS.timedWait(this, waitNanos);
    }
  }

  /** Returns bytes taken by {@link #acquire}. */
  public synchronized void release(ServerAddress server, long bytes) {
    long left = inFlight.getOrDefault(server, 0L) - bytes;
    if (left <= 0) {
      inFlight.remove(server);
    } else {
      inFlight.put(server, left);
    }
    notifyAll();
  }

  public synchronized long inFlight(ServerAddress server) {
    return inFlight.getOrDefault(server, 0L);
  }
}
