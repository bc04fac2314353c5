package io.sluice.server;

import com.codahale.metrics.Counter;
import com.codahale.metrics.Gauge;
import com.codahale.metrics.Meter;
import com.codahale.metrics.MetricRegistry;
import com.codahale.metrics.Timer;
import io.sluice.server.memory.MemoryBudget;

/** The server's metrics; every name lives here. The registry is injected, never global. */
public final class ServerMetrics {
  public static final String PREFIX = "sluice.server.";

  private final MetricRegistry registry;
  private final Meter bytesPushed;
  private final Meter bytesFlushed;
  private final Meter bytesRead;
  private final Meter pushesCongested;
  private final Meter badRequests;
  private final Timer flushLatency;
  private final Timer commitLatency;
  private final Counter activeSplits;
  private final Counter openStreams;

  public ServerMetrics(MetricRegistry registry, MemoryBudget memory) {
    this.registry = registry;
    this.bytesPushed = registry.meter(PREFIX + "bytesPushed");
    this.bytesFlushed = registry.meter(PREFIX + "bytesFlushed");
    this.bytesRead = registry.meter(PREFIX + "bytesRead");
    this.pushesCongested = registry.meter(PREFIX + "pushesCongested");
    this.badRequests = registry.meter(PREFIX + "badRequests");
    this.flushLatency = registry.timer(PREFIX + "flushLatency");
    this.commitLatency = registry.timer(PREFIX + "commitLatency");
    this.activeSplits = registry.counter(PREFIX + "activeSplits");
    this.openStreams = registry.counter(PREFIX + "openStreams");
    registry.register(PREFIX + "memoryHeld", (Gauge<Long>) memory::held);
    registry.register(PREFIX + "memoryPeak", (Gauge<Long>) memory::peak);
    registry.register(PREFIX + "memoryMax", (Gauge<Long>) memory::max);
  }

  public MetricRegistry registry() {
    return registry;
  }

  public Meter bytesPushed() {
    return bytesPushed;
  }

  public Meter bytesFlushed() {
    return bytesFlushed;
  }

  public Meter bytesRead() {
    return bytesRead;
  }

  public Meter pushesCongested() {
    return pushesCongested;
  }

  public Meter badRequests() {
    return badRequests;
  }

  public Timer flushLatency() {
    return flushLatency;
  }

  public Timer commitLatency() {
    return commitLatency;
  }

  public Counter activeSplits() {
    return activeSplits;
  }

  public Counter openStreams() {
    return openStreams;
  }
}
