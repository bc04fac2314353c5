package io.sluice.server.metrics;

import com.codahale.metrics.Gauge;
import com.codahale.metrics.MetricRegistry;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.management.OperatingSystemMXBean;
import java.lang.management.RuntimeMXBean;
import java.lang.management.ThreadMXBean;
import java.util.List;
import java.util.function.ToLongFunction;

/**
 * The JVM the server runs in, in its registry (so on {@code /metrics}, in JMX and the NodeManager's
 * metrics bridge): heap and non-heap memory, direct and mapped buffers, garbage collection summed
 * over the collectors, threads, CPU time, and the process's open and maximum file descriptors. Read
 * from the platform's MXBeans at each scrape; a value the JVM does not offer reads -1. Inside a
 * NodeManager these describe the NodeManager's JVM, which the server shares.
 */
public final class JvmMetrics {
  static final String HEAP_USED = "jvm.heap.used";
  static final String HEAP_COMMITTED = "jvm.heap.committed";
  static final String HEAP_MAX = "jvm.heap.max";
  static final String NON_HEAP_USED = "jvm.nonHeap.used";
  static final String DIRECT_USED = "jvm.buffers.direct.used";
  static final String DIRECT_COUNT = "jvm.buffers.direct.count";
  static final String MAPPED_USED = "jvm.buffers.mapped.used";
  static final String GC_COUNT = "jvm.gc.count";
  static final String GC_TIME = "jvm.gc.time";
  static final String THREADS = "jvm.threads.count";
  static final String DAEMON_THREADS = "jvm.threads.daemon";
  static final String DEADLOCKED_THREADS = "jvm.threads.deadlocked";
  static final String CPU_TIME = "process.cpuTime";
  static final String START_TIME = "process.startTime";
  static final String OPEN_FDS = "process.openFileDescriptors";
  static final String MAX_FDS = "process.maxFileDescriptors";

  private JvmMetrics() {}

  /** Registers the JVM's gauges in {@code registry}, unless it has them already. */
  public static void register(MetricRegistry registry) {
    if (registry.getGauges().containsKey(HEAP_USED)) {
      return;
    }
    MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
    registry.register(HEAP_USED, (Gauge<Long>) () -> memory.getHeapMemoryUsage().getUsed());
    registry.register(
        HEAP_COMMITTED, (Gauge<Long>) () -> memory.getHeapMemoryUsage().getCommitted());
    registry.register(HEAP_MAX, (Gauge<Long>) () -> memory.getHeapMemoryUsage().getMax());
    registry.register(NON_HEAP_USED, (Gauge<Long>) () -> memory.getNonHeapMemoryUsage().getUsed());

    List<BufferPoolMXBean> pools = ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class);
    registry.register(DIRECT_USED, pool(pools, "direct", BufferPoolMXBean::getMemoryUsed));
    registry.register(DIRECT_COUNT, pool(pools, "direct", BufferPoolMXBean::getCount));
    registry.register(MAPPED_USED, pool(pools, "mapped", BufferPoolMXBean::getMemoryUsed));

    List<GarbageCollectorMXBean> collectors = ManagementFactory.getGarbageCollectorMXBeans();
    registry.register(GC_COUNT, sum(collectors, GarbageCollectorMXBean::getCollectionCount));
    registry.register(GC_TIME, sum(collectors, GarbageCollectorMXBean::getCollectionTime));

    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    registry.register(THREADS, (Gauge<Integer>) threads::getThreadCount);
    registry.register(DAEMON_THREADS, (Gauge<Integer>) threads::getDaemonThreadCount);
    registry.register(
        DEADLOCKED_THREADS,
        (Gauge<Integer>)
            () -> {
              long[] ids = threads.findDeadlockedThreads();
              return ids == null ? 0 : ids.length;
            });

    RuntimeMXBean runtime = ManagementFactory.getRuntimeMXBean();
    registry.register(START_TIME, (Gauge<Long>) runtime::getStartTime);
    OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
    if (os instanceof com.sun.management.OperatingSystemMXBean) {
      com.sun.management.OperatingSystemMXBean sun = (com.sun.management.OperatingSystemMXBean) os;
      registry.register(CPU_TIME, (Gauge<Long>) sun::getProcessCpuTime);
    } else {
      registry.register(CPU_TIME, (Gauge<Long>) () -> -1L);
    }
    if (os instanceof com.sun.management.UnixOperatingSystemMXBean) {
      com.sun.management.UnixOperatingSystemMXBean unix =
          (com.sun.management.UnixOperatingSystemMXBean) os;
      registry.register(OPEN_FDS, (Gauge<Long>) unix::getOpenFileDescriptorCount);
      registry.register(MAX_FDS, (Gauge<Long>) unix::getMaxFileDescriptorCount);
    } else {
      registry.register(OPEN_FDS, (Gauge<Long>) () -> -1L);
      registry.register(MAX_FDS, (Gauge<Long>) () -> -1L);
    }
  }

  private static Gauge<Long> pool(
      List<BufferPoolMXBean> pools, String name, ToLongFunction<BufferPoolMXBean> value) {
    for (BufferPoolMXBean p : pools) {
      if (p.getName().equals(name)) {
        return () -> value.applyAsLong(p);
      }
    }
    return () -> -1L;
  }

  private static Gauge<Long> sum(
      List<GarbageCollectorMXBean> collectors, ToLongFunction<GarbageCollectorMXBean> value) {
    return () -> {
      long total = 0;
      for (GarbageCollectorMXBean c : collectors) {
        total += Math.max(0, value.applyAsLong(c));
      }
      return total;
    };
  }
}
