package io.sluice.server.state;

import com.codahale.metrics.Counter;
import com.codahale.metrics.Meter;
import com.codahale.metrics.MetricRegistry;
import io.sluice.server.ServerMetrics;

/** Metrics of the state store; every name lives here. */
final class StateMetrics {
  static final String PREFIX = ServerMetrics.PREFIX + "state.";

  private final Meter writes;
  private final Counter writeFailures;
  private final Counter recoveredSplits;
  private final Counter droppedSplits;

  StateMetrics(MetricRegistry registry) {
    this.writes = registry.meter(PREFIX + "writes");
    this.writeFailures = registry.counter(PREFIX + "writeFailures");
    this.recoveredSplits = registry.counter(PREFIX + "recoveredSplits");
    this.droppedSplits = registry.counter(PREFIX + "droppedSplits");
  }

  /** Records written (one batch counts once). */
  Meter writes() {
    return writes;
  }

  /** Changes that could not be recorded: that data would not survive a restart. */
  Counter writeFailures() {
    return writeFailures;
  }

  /** Committed splits served again after the last start. */
  Counter recoveredSplits() {
    return recoveredSplits;
  }

  /** Committed splits found in the store at the last start whose files were gone or damaged. */
  Counter droppedSplits() {
    return droppedSplits;
  }
}
