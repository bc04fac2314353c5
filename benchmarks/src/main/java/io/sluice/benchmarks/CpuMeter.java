package io.sluice.benchmarks;

import com.sun.management.OperatingSystemMXBean;
import com.sun.management.ThreadMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * CPU time (user + system) of the whole process and of the shuffle server's threads, which live in
 * the same JVM as the benchmark's clients (or, in {@code shuffle-bench spark}, the Spark driver and
 * its Sluice coordinator). Server threads are recognised by name: the server's Netty event loops
 * ({@code sluice-server-*}; the coordinator's are {@code sluice-coordinator-*} and clients' {@code
 * sluice-client-*}, {@code sluice-push-client-*}...), its flushers, writebacks ({@code
 * sluice-writeback-*}), housekeeping, sorters and map-run index readers (map-range reads), deleter,
 * map-partition readers and stream openers, state writer, and under TLS its chunk readers ({@code
 * sluice-chunk-reader-*}, idle ones end after a minute). They live as long as the server, so
 * differences of two snapshots are exact for them; GC and JIT threads count only in the process
 * figure.
 */
final class CpuMeter {
  private static final String[] SERVER_THREAD_PREFIXES = {
    "sluice-server-",
    "sluice-flusher-",
    "sluice-writeback-",
    "sluice-housekeeping",
    "sluice-chunk-reader",
    "sluice-sorter",
    "sluice-range-index",
    "sluice-deleter",
    "sluice-map-reader-",
    "sluice-map-stream-open",
    "sluice-state-writer"
  };

  private final ThreadMXBean threads = ManagementFactory.getPlatformMXBean(ThreadMXBean.class);
  private final OperatingSystemMXBean os =
      ManagementFactory.getPlatformMXBean(OperatingSystemMXBean.class);

  CpuMeter() {
    if (threads.isThreadCpuTimeSupported() && !threads.isThreadCpuTimeEnabled()) {
      threads.setThreadCpuTimeEnabled(true);
    }
  }

  /** Whether per-thread CPU time can be measured here. */
  boolean serverCpuSupported() {
    return threads.isThreadCpuTimeSupported() && threads.isThreadCpuTimeEnabled();
  }

  Snapshot snapshot() {
    long server = 0;
    Map<String, Long> byGroup = new TreeMap<>();
    long[] ids = threads.getAllThreadIds();
    ThreadInfo[] infos = threads.getThreadInfo(ids, 0);
    long[] cpu = threads.getThreadCpuTime(ids);
    for (int i = 0; i < ids.length; i++) {
      String group = infos[i] == null || cpu[i] <= 0 ? null : group(infos[i].getThreadName());
      if (group != null) {
        server += cpu[i];
        byGroup.merge(group, cpu[i], Long::sum);
      }
    }
    return new Snapshot(os.getProcessCpuTime(), server, byGroup);
  }

  /** The server thread group a thread belongs to (its name prefix), or null if not a server's. */
  private static String group(String name) {
    for (String prefix : SERVER_THREAD_PREFIXES) {
      if (name.startsWith(prefix)) {
        return prefix.endsWith("-") ? prefix.substring(0, prefix.length() - 1) : prefix;
      }
    }
    return null;
  }

  /** CPU nanoseconds consumed up to one moment. */
  static final class Snapshot {
    final long processNanos;
    final long serverNanos;
    private final Map<String, Long> serverNanosByGroup;

    Snapshot(long processNanos, long serverNanos, Map<String, Long> serverNanosByGroup) {
      this.processNanos = processNanos;
      this.serverNanos = serverNanos;
      this.serverNanosByGroup = serverNanosByGroup;
    }

    /**
     * The server CPU seconds spent since {@code before}, per thread group, largest first ({@code
     * "sluice-server 0.41, sluice-flusher 0.20"}); groups under 5 ms are left out.
     */
    String serverSecondsByGroupSince(Snapshot before) {
      StringBuilder text = new StringBuilder();
      serverNanosByGroup.entrySet().stream()
          .map(
              e ->
                  Map.entry(
                      e.getKey(),
                      e.getValue() - before.serverNanosByGroup.getOrDefault(e.getKey(), 0L)))
          .filter(e -> e.getValue() >= 5_000_000L)
          .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
          .forEach(
              e ->
                  text.append(text.length() == 0 ? "" : ", ")
                      .append(
                          String.format(Locale.ROOT, "%s %.2f", e.getKey(), e.getValue() / 1e9)));
      return text.toString();
    }
  }
}
