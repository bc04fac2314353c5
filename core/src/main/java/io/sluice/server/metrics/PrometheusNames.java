package io.sluice.server.metrics;

import io.sluice.server.memory.MemoryBudget;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The one table from Dropwizard metric names (kept as they are: JMX and the NodeManager's metrics
 * bridge use them) to Prometheus families, following Prometheus conventions: snake_case under
 * {@code sluice_}, the unit in the name ({@code _bytes}, {@code _seconds}, {@code _ratio}), {@code
 * _total} on counters. A data directory's metrics are one family each with a {@code directory}
 * label. A metric the table does not know is exported under its mangled Dropwizard name by {@link
 * PrometheusFormat}, so nothing silently disappears; a test fails on such a metric of the server.
 */
public final class PrometheusNames {
  /** Prometheus metric types. */
  public enum Type {
    COUNTER("counter"),
    GAUGE("gauge"),
    SUMMARY("summary");

    final String text;

    Type(String text) {
      this.text = text;
    }
  }

  /** One Prometheus family: its name, type, help and what a Dropwizard value is multiplied by. */
  public static final class Family {
    private final String name;
    private final Type type;
    private final String help;
    private final double scale;
    private final List<String> states;

    private Family(String name, Type type, String help, double scale, List<String> states) {
      this.name = name;
      this.type = type;
      this.help = help;
      this.scale = scale;
      this.states = states;
    }

    public String name() {
      return name;
    }

    public Type type() {
      return type;
    }

    public String help() {
      return help;
    }

    /** Factor from the Dropwizard value to the family's unit (milliseconds to seconds: 0.001). */
    public double scale() {
      return scale;
    }

    /**
     * The values of a gauge of text exported as a state set (one sample per state, labelled {@code
     * state}, 1 for the current one), or empty for a numeric metric.
     */
    public List<String> states() {
      return states;
    }

    @Override
    public String toString() {
      return name;
    }
  }

  /** A Dropwizard name resolved: its family and, for a directory's metric, the directory. */
  public static final class Match {
    final Family family;
    final String directory;

    Match(Family family, String directory) {
      this.family = family;
      this.directory = directory;
    }
  }

  /** Dropwizard prefix of the server's metrics ({@code ServerMetrics.PREFIX}). */
  static final String SERVER = "sluice.server.";

  /** Dropwizard prefix of one data directory's metrics ({@code ServerMetrics.directoryPrefix}). */
  static final String DIRECTORY = SERVER + "dir.";

  /** Label of the data directory's path. */
  public static final String DIRECTORY_LABEL = "directory";

  /** Label of an application's id ({@code other} for those past the top N). */
  public static final String APPLICATION_LABEL = "application";

  /** The application families, read from the {@link PrometheusSource} at a scrape. */
  static final Family APPLICATION_STORED =
      new Family(
          "sluice_application_stored_bytes",
          Type.GAUGE,
          "Bytes of the application's shuffles held on the server, on disk or buffered.",
          1,
          List.of());

  static final Family APPLICATION_PUSHED =
      new Family(
          "sluice_application_pushed_bytes_total",
          Type.COUNTER,
          "Bytes pushed to the application's shuffles since it registered on the server.",
          1,
          List.of());

  static final Family APPLICATION_READ =
      new Family(
          "sluice_application_read_bytes_total",
          Type.COUNTER,
          "Bytes read from the application's shuffles since it registered on the server.",
          1,
          List.of());

  static final Family APPLICATION_SPLITS =
      new Family(
          "sluice_application_splits",
          Type.GAUGE,
          "The application's splits on the server, open and committed.",
          1,
          List.of());

  static final Family APPLICATION_MEMORY_HELD =
      new Family(
          "sluice_application_memory_held_bytes",
          Type.GAUGE,
          "Bytes of the server's memory budget the application holds: pushes buffered or queued"
              + " for disk, memory-tier splits.",
          1,
          List.of());

  static final Family APPLICATION_REFUSED =
      new Family(
          "sluice_application_refused_bytes_total",
          Type.COUNTER,
          "Bytes of the application's pushes refused for its limit (sluice.app.maxStoredBytes).",
          1,
          List.of());

  /** Every application family. */
  public static final List<Family> APPLICATION_FAMILIES =
      List.of(
          APPLICATION_STORED,
          APPLICATION_PUSHED,
          APPLICATION_READ,
          APPLICATION_SPLITS,
          APPLICATION_MEMORY_HELD,
          APPLICATION_REFUSED);

  private static final Map<String, Family> BY_NAME = new LinkedHashMap<>();
  private static final Map<String, Family> BY_DIRECTORY_METRIC = new LinkedHashMap<>();

  static {
    // ServerMetrics: data in and out
    counter(
        "bytesPushed",
        "sluice_pushed_bytes_total",
        "Bytes of pushed data taken, replica pushes included.");
    counter(
        "batchesPushed",
        "sluice_pushed_batches_total",
        "Batches of pushed data taken (each part of a merged push, each Flink frame), replica"
            + " pushes included.");
    counter(
        "replicaBytesPushed",
        "sluice_replica_pushed_bytes_total",
        "Bytes of replica pushes taken (second copies), also in sluice_pushed_bytes_total.");
    counter(
        "memoryTierCommits",
        "sluice_memory_tier_commits_total",
        "Splits committed in the memory tier (no file until written back).");
    counter(
        "memoryTierWritebacks",
        "sluice_memory_tier_writebacks_total",
        "Memory-tier splits written to their files (memory pressure, age or a stop).");
    counter(
        "memoryTierReads", "sluice_memory_tier_reads_total", "Chunks served from the memory tier.");
    gauge("memoryTierSplits", "sluice_memory_tier_splits", "Splits held in the memory tier now.");
    gauge(
        "memoryTierBytes",
        "sluice_memory_tier_bytes",
        "Bytes held in the memory tier now (part of sluice_memory_held_bytes).");
    counter(
        "hdfsTierSplits",
        "sluice_hdfs_tier_splits_total",
        "Committed splits moved to the distributed tier (sluice.storage.hdfs.dir).");
    counter(
        "hdfsTierBytes",
        "sluice_hdfs_tier_bytes_total",
        "Bytes of committed splits moved to the distributed tier.");
    counter(
        "hdfsTierFailures",
        "sluice_hdfs_tier_failures_total",
        "Splits that could not be moved to the distributed tier and stayed on local disk.");
    counter("bytesFlushed", "sluice_flushed_bytes_total", "Bytes flushed to split files.");
    counter("bytesRead", "sluice_read_bytes_total", "Bytes served to readers.");
    counter(
        "writebacks",
        "sluice_writebacks_total",
        "Writebacks completed (a force of a file being written, ahead of its commit's fsync).");
    counter(
        "writebackBytes",
        "sluice_writeback_bytes_total",
        "Bytes written to files since their previous writeback, counted when a writeback ends.");
    counter(
        "pushesCongested",
        "sluice_congested_pushes_total",
        "Pushes answered CONGESTED: they did not fit in sluice.memory.max.");
    counter(
        "softSplits",
        "sluice_soft_splits_total",
        "Pushes taken with SOFT_SPLIT (split past its threshold or on a full disk).");
    counter("badRequests", "sluice_bad_requests_total", "Requests answered BAD_REQUEST.");
    counter(
        "mergedPushes",
        "sluice_merged_pushes_total",
        "Merged push requests taken apart, each carrying several partitions' batches.");
    counter("singlePushes", "sluice_single_pushes_total", "Push requests carrying one batch each.");
    counter(
        "authFailures",
        "sluice_auth_failures_total",
        "Requests refused FORBIDDEN and failed authentications.");
    counter(
        "applicationsExpired",
        "sluice_expired_applications_total",
        "Applications whose data was deleted after sluice.app.timeout without a heartbeat.");
    summary("flushLatency", "sluice_flush_duration_seconds", "Time to write one flush to disk.");
    summary(
        "commitLatency",
        "sluice_commit_duration_seconds",
        "Time to commit a shuffle's splits on this server.");
    gauge("activeSplits", "sluice_active_splits", "Splits being written now.");
    counter("mapReads", "sluice_map_reads_total", "Buffers read from map partition files (Flink).");
    counter(
        "mapReadsInOrder",
        "sluice_map_reads_in_order_total",
        "Map partition reads that continued forward in the file of the previous read.");
    counter(
        "checksumFailures",
        "sluice_checksum_failures_total",
        "Pushed batches and map partition blocks whose CRC32C did not verify on receipt.");
    // ServerMetrics: memory
    gauge("memoryHeld", "sluice_memory_held_bytes", "Bytes of pushed data held, not yet flushed.");
    gauge("memoryPeak", "sluice_memory_peak_bytes", "The most bytes of pushed data held at once.");
    gauge("memoryMax", "sluice_memory_max_bytes", "sluice.memory.max in bytes.");
    put(
        "memoryPausedMillis",
        new Family(
            "sluice_memory_paused_seconds_total",
            Type.COUNTER,
            "Time pushes were paused by the memory watermarks, a pause in progress included.",
            0.001,
            List.of()));
    List<String> states = new ArrayList<>();
    for (MemoryBudget.State s : MemoryBudget.State.values()) {
      states.add(s.name());
    }
    put(
        "memoryState",
        new Family(
            "sluice_memory_state",
            Type.GAUGE,
            "1 for the memory budget's current state (ACCEPTING, PUSH_PAUSED, ALL_PAUSED).",
            1,
            Collections.unmodifiableList(states)));
    gauge(
        PrometheusSource.PAUSE_WATERMARK,
        "sluice_memory_pause_watermark_bytes",
        "Bytes held at which pushes from map tasks pause (sluice.memory.pauseWatermark).");
    gauge(
        PrometheusSource.REPLICA_PAUSE_WATERMARK,
        "sluice_memory_replica_pause_watermark_bytes",
        "Bytes held at which replica traffic pauses too (sluice.memory.replicaPauseWatermark).");
    gauge(
        PrometheusSource.RESUME_WATERMARK,
        "sluice_memory_resume_watermark_bytes",
        "Bytes held at or below which paused pushes resume (sluice.memory.resumeWatermark).");
    // ServerMetrics: connections and streams
    gauge("openStreams", "sluice_open_streams", "Read streams open on the server.");
    gauge("openConnections", "sluice_open_connections", "Open client connections.");
    gauge(
        "nettyDirectMemoryPinned",
        "sluice_netty_direct_memory_pinned_bytes",
        "Direct memory the server's Netty buffers in use take.");
    gauge(
        "nettyDirectMemoryUsed",
        "sluice_netty_direct_memory_used_bytes",
        "Direct memory the server's Netty pool took from the JVM.");
    gauge(
        PrometheusSource.APPLICATIONS,
        "sluice_applications",
        "Applications registered on the server.");
    // SortMetrics
    counter("sort.sorts", "sluice_sorts_total", "Splits sorted for map-range reads.");
    counter("sort.bytesSorted", "sluice_sorted_bytes_total", "Bytes of splits sorted.");
    counter("sort.failures", "sluice_sort_failures_total", "Sorts that failed.");
    summary(
        "sort.latency",
        "sluice_sort_duration_seconds",
        "Time from the start of a sort to its index being in place.");
    gauge("sort.waitingReaders", "sluice_sort_waiting_readers", "Range reads waiting for a sort.");
    counter(
        "sort.rangeReads",
        "sluice_range_reads_total",
        "Streams opened for a map-index range that is not the whole split.");
    counter(
        "sort.indexedRangeReads",
        "sluice_indexed_range_reads_total",
        "Range reads served from the split's map-run index, without a sort.");
    // StateMetrics
    counter("state.writes", "sluice_state_writes_total", "State store records written.");
    counter(
        "state.writeFailures",
        "sluice_state_write_failures_total",
        "Changes the state store could not record: that data would not survive a restart.");
    counter(
        "state.recoveredSplits",
        "sluice_state_recovered_splits_total",
        "Committed splits served again after the last start.");
    counter(
        "state.droppedSplits",
        "sluice_state_dropped_splits_total",
        "Committed splits in the state store at the last start whose files were gone or damaged.");
    // ClientMetrics (a client's registry, published by the engines; here for completeness)
    client(
        "readFailovers",
        "sluice_client_read_failovers_total",
        Type.COUNTER,
        "Reads that moved to a partition's other copy after the first failed.");
    client(
        "serverWaits",
        "sluice_client_server_waits_total",
        Type.COUNTER,
        "Retries of a server that refused or dropped a connection while it may be restarting.");
    client(
        "partitionsMoved",
        "sluice_client_moved_partitions_total",
        Type.COUNTER,
        "Partitions a coordinator moved to new servers.");
    client(
        "serverFailures",
        "sluice_client_server_failures_total",
        Type.COUNTER,
        "Servers a coordinator found failed under a push.");
    client(
        "replicaAckLag",
        "sluice_client_replica_ack_lag_seconds",
        Type.SUMMARY,
        "Time between the acknowledgements of a push's two copies.");
    // ServerMetrics: one data directory (sluice.server.dir.<path>.<metric>)
    directory(
        "bytesFlushed",
        "sluice_directory_flushed_bytes_total",
        Type.COUNTER,
        "Bytes flushed into the data directory.");
    directory(
        "health",
        "sluice_directory_health",
        Type.GAUGE,
        "Health of the data directory: 0 healthy, 1 full, 2 failed.");
    directory(
        "usage",
        "sluice_directory_usage_ratio",
        Type.GAUGE,
        "Fraction of the data directory's file system in use.");
    directory(
        "checksumFailures",
        "sluice_directory_checksum_failures_total",
        Type.COUNTER,
        "Checksum failures readers reported against files in the data directory.");
    directory(
        "suspect",
        "sluice_directory_suspect",
        Type.GAUGE,
        "1 once sluice.integrity.suspectAfter checksum failures made the directory suspect.");
  }

  static {
    // JvmMetrics: the process (names as Prometheus's own JVM and process collectors have them)
    jvm(JvmMetrics.HEAP_USED, "jvm_memory_heap_used_bytes", Type.GAUGE, "Heap in use.", 1);
    jvm(
        JvmMetrics.HEAP_COMMITTED,
        "jvm_memory_heap_committed_bytes",
        Type.GAUGE,
        "Heap the JVM holds from the system.",
        1);
    jvm(JvmMetrics.HEAP_MAX, "jvm_memory_heap_max_bytes", Type.GAUGE, "Largest heap (-Xmx).", 1);
    jvm(
        JvmMetrics.NON_HEAP_USED,
        "jvm_memory_nonheap_used_bytes",
        Type.GAUGE,
        "Non-heap memory in use (metaspace, code cache).",
        1);
    jvm(
        JvmMetrics.DIRECT_USED,
        "jvm_buffer_direct_used_bytes",
        Type.GAUGE,
        "Direct buffers the JVM counts (Netty's pooled memory is in"
            + " sluice_netty_direct_memory_used_bytes).",
        1);
    jvm(JvmMetrics.DIRECT_COUNT, "jvm_buffer_direct_count", Type.GAUGE, "Direct buffers.", 1);
    jvm(
        JvmMetrics.MAPPED_USED,
        "jvm_buffer_mapped_used_bytes",
        Type.GAUGE,
        "Memory-mapped file buffers.",
        1);
    jvm(
        JvmMetrics.GC_COUNT,
        "jvm_gc_collections_total",
        Type.COUNTER,
        "Garbage collections, all collectors.",
        1);
    jvm(
        JvmMetrics.GC_TIME,
        "jvm_gc_collection_seconds_total",
        Type.COUNTER,
        "Time spent collecting garbage, all collectors (for G1 and ZGC this includes concurrent"
            + " work, not only pauses).",
        0.001);
    jvm(JvmMetrics.THREADS, "jvm_threads_current", Type.GAUGE, "Live threads.", 1);
    jvm(JvmMetrics.DAEMON_THREADS, "jvm_threads_daemon", Type.GAUGE, "Live daemon threads.", 1);
    jvm(
        JvmMetrics.DEADLOCKED_THREADS,
        "jvm_threads_deadlocked",
        Type.GAUGE,
        "Threads deadlocked on monitors or locks: anything above 0 is a bug to report.",
        1);
    jvm(
        JvmMetrics.CPU_TIME,
        "process_cpu_seconds_total",
        Type.COUNTER,
        "CPU time the process used.",
        1e-9);
    jvm(
        JvmMetrics.START_TIME,
        "process_start_time_seconds",
        Type.GAUGE,
        "When the process started, in seconds since the epoch.",
        0.001);
    jvm(JvmMetrics.OPEN_FDS, "process_open_fds", Type.GAUGE, "Open file descriptors.", 1);
    jvm(
        JvmMetrics.MAX_FDS,
        "process_max_fds",
        Type.GAUGE,
        "The process's file descriptor limit (ulimit -n).",
        1);
  }

  private PrometheusNames() {}

  /** A metric of the JVM or the process, under its own Dropwizard name (no server prefix). */
  private static void jvm(String name, String family, Type type, String help, double scale) {
    if (BY_NAME.put(name, new Family(family, type, help, scale, List.of())) != null) {
      throw new IllegalStateException("two families for " + name);
    }
  }

  private static void counter(String name, String family, String help) {
    put(name, new Family(family, Type.COUNTER, help, 1, List.of()));
  }

  private static void gauge(String name, String family, String help) {
    put(name, new Family(family, Type.GAUGE, help, 1, List.of()));
  }

  /** A timer: a summary in seconds (Dropwizard keeps nanoseconds). */
  private static void summary(String name, String family, String help) {
    put(name, new Family(family, Type.SUMMARY, help, 1e-9, List.of()));
  }

  private static void put(String name, Family family) {
    String key = name.startsWith("sluice.") ? name : SERVER + name;
    if (BY_NAME.put(key, family) != null) {
      throw new IllegalStateException("two families for " + key);
    }
  }

  private static void client(String name, String family, Type type, String help) {
    put(
        "sluice.client." + name,
        new Family(family, type, help, type == Type.SUMMARY ? 1e-9 : 1, List.of()));
  }

  /** The family of a metric the table does not know: its mangled Dropwizard name. */
  static Family unmapped(String name, Type type, double scale, String dropwizardName) {
    return new Family(
        name,
        type,
        "Dropwizard metric " + dropwizardName + " (no Prometheus name)",
        scale,
        List.of());
  }

  private static void directory(String metric, String family, Type type, String help) {
    BY_DIRECTORY_METRIC.put(metric, new Family(family, type, help, 1, List.of()));
  }

  /**
   * The family of a Dropwizard metric, or null when the table does not know it.
   *
   * @param directories the data directories' paths by their segment in a Dropwizard name (see
   *     {@link #directorySegment}); a directory missing here is labelled with its segment
   */
  static Match find(String dropwizardName, Map<String, String> directories) {
    Family f = BY_NAME.get(dropwizardName);
    if (f != null) {
      return new Match(f, null);
    }
    if (dropwizardName.startsWith(DIRECTORY)) {
      String rest = dropwizardName.substring(DIRECTORY.length());
      int dot = rest.lastIndexOf('.');
      if (dot > 0) {
        Family d = BY_DIRECTORY_METRIC.get(rest.substring(dot + 1));
        if (d != null) {
          String segment = rest.substring(0, dot);
          return new Match(d, directories.getOrDefault(segment, segment));
        }
      }
    }
    return null;
  }

  /**
   * The segment a data directory's path is in its metrics' Dropwizard names: the same mangling as
   * {@code ServerMetrics.directoryPrefix} ({@code DashboardMetricsIT} checks the label is the
   * path).
   */
  static String directorySegment(Path root) {
    return root.toString().replaceAll("[^A-Za-z0-9_-]+", "_");
  }

  /** Every family of the table, by Dropwizard name (directory metrics under "dir.*.metric"). */
  public static Map<String, Family> all() {
    Map<String, Family> all = new LinkedHashMap<>(BY_NAME);
    for (Map.Entry<String, Family> e : BY_DIRECTORY_METRIC.entrySet()) {
      all.put(DIRECTORY + "*." + e.getKey(), e.getValue());
    }
    return Collections.unmodifiableMap(all);
  }
}
