package io.sluice.server.sort;

import com.codahale.metrics.Counter;
import com.codahale.metrics.Meter;
import com.codahale.metrics.MetricRegistry;
import com.codahale.metrics.Timer;

/**
 * Metrics of map-range reads (from map-run indexes, or sort-on-read); every name lives here. The
 * registry is injected, never global.
 */
public final class SortMetrics {
  public static final String PREFIX = "sluice.server.sort.";

  private final Meter sorts;
  private final Meter bytesSorted;
  private final Meter failures;
  private final Timer latency;
  private final Counter waiting;
  private final Meter rangeReads;
  private final Meter indexedRangeReads;

  public SortMetrics(MetricRegistry registry) {
    this.sorts = registry.meter(PREFIX + "sorts");
    this.bytesSorted = registry.meter(PREFIX + "bytesSorted");
    this.failures = registry.meter(PREFIX + "failures");
    this.latency = registry.timer(PREFIX + "latency");
    this.waiting = registry.counter(PREFIX + "waitingReaders");
    this.rangeReads = registry.meter(PREFIX + "rangeReads");
    this.indexedRangeReads = registry.meter(PREFIX + "indexedRangeReads");
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

  /** Streams opened for a map-index range that is not the whole split. */
  public Meter rangeReads() {
    return rangeReads;
  }

  /** Range reads served from the split's map-run index, without a sort. */
  public Meter indexedRangeReads() {
    return indexedRangeReads;
  }
}
