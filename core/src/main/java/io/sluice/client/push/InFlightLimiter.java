package io.sluice.client.push;

import io.sluice.protocol.proto.ServerAddress;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Bounds the pushed, unacknowledged bytes of one JVM twice: per server ({@code
 * sluice.push.maxInFlightBytesPerServer}) and over all servers together ({@code
 * sluice.push.maxInFlightBytes}), so an executor pushing to a hundred servers holds no more than
 * the second bound in direct memory.
 *
 * <p>A push first takes room at its server, then room in the JVM. Pushes waiting for room in the
 * JVM are let in in the order they asked, so a large push is not overtaken forever by small ones; a
 * push waiting for a slow server is not in that line and holds up no other server's pushes. A push
 * larger than a bound goes alone: it is let through once nothing else is in flight under that
 * bound, so no push waits forever. Thread safe.
 */
public final class InFlightLimiter {
  private final long maxPerServer;
  private final long maxTotal;
  private final long timeoutMillis;
  private final Map<ServerAddress, Long> inFlight = new HashMap<>();
  private long total;

  /** Pushes that have room at their server and wait for room in the JVM, first come first. */
  private final ArrayDeque<Object> jvmLine = new ArrayDeque<>();

  /**
   * @param maxPerServer bytes per server, positive
   * @param maxTotal bytes over all servers, positive
   * @param timeoutMillis longest a push waits for room ({@code sluice.push.timeout})
   */
  public InFlightLimiter(long maxPerServer, long maxTotal, long timeoutMillis) {
    if (maxPerServer < 1 || maxTotal < 1) {
      throw new IllegalArgumentException(
          "in-flight bounds must be positive: " + maxPerServer + " per server, " + maxTotal);
    }
    this.maxPerServer = maxPerServer;
    this.maxTotal = maxTotal;
    this.timeoutMillis = timeoutMillis;
  }

  /**
   * Waits until {@code bytes} more fit under both bounds, then takes them; give them back with
   * {@link #release}. Takes nothing when it throws.
   *
   * @throws IOException naming the server and the bound that stayed full when no room frees up
   *     within the push timeout
   */
  public synchronized void acquire(ServerAddress server, long bytes)
      throws IOException, InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
    while (true) {
      long current = inFlight.getOrDefault(server, 0L);
      if (current == 0 || current + bytes <= maxPerServer) {
        inFlight.put(server, current + bytes);
        break;
      }
      long waitNanos = deadline - System.nanoTime();
      if (waitNanos <= 0) {
        throw new IOException(
            "No room to push "
                + bytes
                + " bytes to Sluice server "
                + format(server)
                + " for "
                + timeoutMillis
                + " ms (sluice.push.timeout): it did not acknowledge the "
                + current
                + " bytes in flight to it, at sluice.push.maxInFlightBytesPerServer ("
                + maxPerServer
                + " bytes)");
      }
      TimeUnit.NANOSECONDS.timedWait(this, waitNanos);
    }
    Object turn = new Object();
    jvmLine.add(turn);
    boolean admitted = false;
    try {
      while (jvmLine.peek() != turn || (total > 0 && total + bytes > maxTotal)) {
        long waitNanos = deadline - System.nanoTime();
        if (waitNanos <= 0) {
          throw new IOException(
              "No room to push "
                  + bytes
                  + " bytes to Sluice server "
                  + format(server)
                  + " for "
                  + timeoutMillis
                  + " ms (sluice.push.timeout): this JVM's pushes to all servers hold "
                  + total
                  + " bytes unacknowledged, at sluice.push.maxInFlightBytes ("
                  + maxTotal
                  + " bytes), and "
                  + (jvmLine.size() - 1)
                  + " push(es) wait for room; the servers they went to answer too slowly");
        }
        TimeUnit.NANOSECONDS.timedWait(this, waitNanos);
      }
      total += bytes;
      admitted = true;
    } finally {
      jvmLine.remove(turn);
      if (!admitted) {
        releaseServer(server, bytes);
      }
      notifyAll(); // the next in line may fit now
    }
  }

  /**
   * Takes {@code bytes} when they fit under both bounds now and nobody waits for room in the JVM;
   * never waits.
   *
   * @return whether they were taken (give them back with {@link #release})
   */
  public synchronized boolean tryAcquire(ServerAddress server, long bytes) {
    long current = inFlight.getOrDefault(server, 0L);
    boolean fits =
        (current == 0 || current + bytes <= maxPerServer)
            && jvmLine.isEmpty()
            && (total == 0 || total + bytes <= maxTotal);
    if (fits) {
      inFlight.put(server, current + bytes);
      total += bytes;
    }
    return fits;
  }

  /** Returns bytes taken by {@link #acquire}. */
  public synchronized void release(ServerAddress server, long bytes) {
    releaseServer(server, bytes);
    total = Math.max(0, total - bytes);
    notifyAll();
  }

  private void releaseServer(ServerAddress server, long bytes) {
    long left = inFlight.getOrDefault(server, 0L) - bytes;
    if (left <= 0) {
      inFlight.remove(server);
    } else {
      inFlight.put(server, left);
    }
  }

  /** Bytes taken for {@code server}, including pushes still waiting for room in the JVM. */
  public synchronized long inFlight(ServerAddress server) {
    return inFlight.getOrDefault(server, 0L);
  }

  /** Bytes taken over all servers. */
  public synchronized long totalInFlight() {
    return total;
  }

  private static String format(ServerAddress server) {
    return server.getHost() + ":" + server.getPort();
  }
}
