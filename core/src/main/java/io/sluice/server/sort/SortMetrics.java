package io.sluice.server.sort;

import com.codahale.metrics.Counter;
import com.codahale.metrics.Meter;
import com.codahale.metrics.MetricRegistry;
import com.codahale.metrics.Timer;

/** Metrics of sort-on-read; every name lives here. The registry is injected, never global. */
public final class SortMetrics {
  public static final String PREFIX = "sluice.server.sort.";

  private final Meter sorts;
  private final Meter bytesSorted;
  private final Meter failures;
  private final Timer latency;
  private final Counter waiting;
  private final Meter rangeReads;

  public SortMetrics(MetricRegistry registry) {
    this.sorts = registry.meter(PREFIX + "sorts");
    this.bytesSorted = registry.meter(PREFIX + "bytesSorted");
    this.failures = registry.meter(PREFIX + "failures");
    this.latency = registry.timer(PREFIX + "latency");
    this.waiting = registry.counter(PREFIX + "waitingReaders");
    this.rangeReads = registry.meter(PREFIX + "rangeReads");
  }

  /** Splits sorted (one per split, however many readers asked). */
  public Meter sorts() {
    return sorts;
  }

  public Meter bytesSorted() {
    return bytesSorted;
  }

  public Meter failures() {
    return failures;
  }

  /** Time from the start of a sort to its index being in place. */
  public Timer latency() {
    return latency;
  }

  /** Range reads waiting for a sort now. */
  public Counter waiting() {
    return waiting;
  }

  /** Streams opened for a map-index range that needed the sorted copy. */
  public Meter rangeReads() {
    return rangeReads;
  }
}
