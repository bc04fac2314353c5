package io.sluice.server;

import io.sluice.auth.AuthConf;
import io.sluice.common.ConfigKey;
import io.sluice.common.SluiceConf;
import io.sluice.server.metrics.MetricsConf;
import io.sluice.server.storage.StoragePolicy;
import java.net.InetAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/** Settings of the shuffle server: where it listens, where it writes, how much it may hold. */
public final class ServerConf {
  public static final ConfigKey<String> HOST =
      ConfigKey.string(
          "sluice.server.host",
          "0.0.0.0",
          "Address the server binds; 0.0.0.0 binds every interface.");
  public static final ConfigKey<Integer> PORT =
      ConfigKey.integer(
          "sluice.server.port", 9290, "Port for pushes and reads; 0 picks a free port.");
  public static final ConfigKey<Integer> METRICS_PORT =
      ConfigKey.integer(
          "sluice.metrics.port",
          9291,
          "Prometheus metrics at http://<host>:<port>/metrics and the admin API under /api/v1"
              + " (https with sluice.tls.enabled), on the daemon and in a NodeManager; 0 picks a"
              + " port, -1 turns it off.");
  public static final ConfigKey<String> METRICS_HOST =
      ConfigKey.string(
          "sluice.metrics.host",
          "",
          "Address the metrics port binds, so it can stay on a management network or loopback"
              + " while sluice.server.host serves clients; empty means sluice.server.host.");
  public static final ConfigKey<String> DIRS =
      ConfigKey.string(
          "sluice.server.dirs",
          "${java.io.tmpdir}/sluice-data",
          "Comma-separated data directories; splits are spread over them.");
  public static final ConfigKey<String> STATE_DIR =
      ConfigKey.string(
          "sluice.state.dir",
          "",
          "Directory of the server's state store (registered shuffles, committed splits), kept"
              + " across restarts; empty means .sluice-state in the first data directory (the aux"
              + " service uses the NodeManager's recovery directory when recovery is on).");
  public static final ConfigKey<Long> MEMORY_MAX =
      ConfigKey.bytes(
          "sluice.memory.max",
          "1g",
          "Most bytes of pushed, not yet flushed data the server holds; beyond it pushes are"
              + " answered CONGESTED.");
  public static final ConfigKey<Double> PAUSE_WATERMARK =
      ConfigKey.fraction(
          "sluice.memory.pauseWatermark",
          0.85,
          "Fraction of sluice.memory.max at which the server stops reading connections that push"
              + " (TCP pushes back on writers) and flushes the largest buffers.");
  public static final ConfigKey<Double> REPLICA_PAUSE_WATERMARK =
      ConfigKey.fraction(
          "sluice.memory.replicaPauseWatermark",
          0.95,
          "Fraction of sluice.memory.max at which replica traffic is refused too.");
  public static final ConfigKey<Double> RESUME_WATERMARK =
      ConfigKey.fraction(
          "sluice.memory.resumeWatermark",
          0.5,
          "Fraction of sluice.memory.max below which paused pushes are accepted again.");
  public static final ConfigKey<Long> FLUSH_SIZE =
      ConfigKey.bytes(
          "sluice.flush.size",
          "1m",
          "Bytes a split buffers in memory before they are written to its file.");
  public static final ConfigKey<Long> WRITEBACK_BYTES =
      ConfigKey.bytes(
          "sluice.flush.writebackBytes",
          "4m",
          "Written, not yet synced bytes of one file being written (a split, a Flink map"
              + " partition's data) after which the server has the disk start writing them (a"
              + " force off the flusher threads, at most one per file at a time), so the commit's"
              + " fsync finds little left to do at stage end; 0 turns it off, and so does"
              + " sluice.commit.fsync false.");
  public static final ConfigKey<Integer> FLUSHER_THREADS =
      ConfigKey.integer(
          "sluice.flusher.threadsPerDir",
          2,
          "Flusher threads per data directory (1 suits a spinning disk, more an SSD).");
  public static final ConfigKey<Long> CHUNK_SIZE =
      ConfigKey.bytes(
          "sluice.read.chunkSize",
          "8m",
          "Readers fetch a split in chunks of about this size; boundaries never split a batch.");
  public static final ConfigKey<Boolean> SORT_MAP_RANGES =
      ConfigKey.bool(
          "sluice.read.sortMapRanges",
          false,
          "Serve every map-range read (AQE skew-join splits, the local shuffle reader) from a sorted"
              + " copy of the split (sort-on-read). Off: they are read from each split's map-run"
              + " index, and only splits without one, or ranges scattered in many small pieces,"
              + " are sorted.");
  public static final ConfigKey<Long> SPLIT_THRESHOLD =
      ConfigKey.bytes(
          "sluice.split.threshold",
          "1g",
          "A split larger than this answers SOFT_SPLIT so the partition's next data goes to a new"
              + " split.");
  public static final ConfigKey<String> STORAGE_POLICY =
      ConfigKey.string(
          "sluice.storage.policy",
          "local",
          "Where committed splits live: a comma-separated list of memory, local and hdfs that names"
              + " local (every split is written to a local data directory while it takes data)."
              + " memory: small splits are committed in memory (see"
              + " sluice.storage.memory.maxSplitSize); a crash loses them as a lost disk does, and"
              + " the shuffle is recomputed or read from its replica. hdfs: large splits, and"
              + " splits whose directory is past sluice.disk.maxUsage, move to"
              + " sluice.storage.hdfs.dir at commit and are read from there, so they outlive the"
              + " server.");
  public static final ConfigKey<Long> MEMORY_TIER_MAX_SPLIT =
      ConfigKey.bytes(
          "sluice.storage.memory.maxSplitSize",
          "1m",
          "Memory tier (sluice.storage.policy names memory): a split that holds at most this many"
              + " bytes when it is committed, and was never flushed, is committed in memory (no"
              + " file, no fsync) and served from there while held memory stays below the resume"
              + " watermark; it is written to its file under memory pressure, after"
              + " sluice.storage.memory.writebackAfter and before the server stops.");
  public static final ConfigKey<String> HDFS_DIR =
      ConfigKey.string(
          "sluice.storage.hdfs.dir",
          "",
          "Distributed tier (sluice.storage.policy names hdfs): the URI of the directory splits go"
              + " to, for example hdfs://namenode:8020/sluice; any Hadoop file system whose"
              + " connector is on the class path works (s3a://, abfs://). Each server writes under"
              + " its own subdirectory (its host name and a hash of its data directories)."
              + " Readers need read access to it.");
  public static final ConfigKey<Long> HDFS_MIN_SPLIT =
      ConfigKey.bytes(
          "sluice.storage.hdfs.minSplitSize",
          "256m",
          "Distributed tier: a committed split of at least this many bytes goes to"
              + " sluice.storage.hdfs.dir (0: every split that is not in memory). Splits whose"
              + " local directory is past sluice.disk.maxUsage go there at any size.");
  public static final ConfigKey<Long> HDFS_COPY_TIMEOUT =
      ConfigKey.millis(
          "sluice.storage.hdfs.copyTimeout",
          "2min",
          "Distributed tier: longest a split's copy to sluice.storage.hdfs.dir may take at its"
              + " commit; a copy that takes longer (a slow or hung file system) leaves the split on"
              + " local disk, served by this server, and is deleted when it ends.");
  public static final ConfigKey<Integer> HDFS_THREADS =
      ConfigKey.integer(
          "sluice.storage.hdfs.threads",
          4,
          "Distributed tier: how many splits are copied to sluice.storage.hdfs.dir at once.");
  public static final ConfigKey<Long> MEMORY_TIER_WRITEBACK_AFTER =
      ConfigKey.millis(
          "sluice.storage.memory.writebackAfter",
          "2min",
          "Memory tier: how long a split committed in memory stays only there before it is"
              + " written to its file.");
  public static final ConfigKey<Double> DISK_MAX_USAGE =
      ConfigKey.fraction(
          "sluice.disk.maxUsage",
          0.95,
          "A data directory whose file system is fuller than this takes no new splits and moves"
              + " its open ones on.");
  public static final ConfigKey<Long> DISK_CHECK_INTERVAL =
      ConfigKey.millis(
          "sluice.disk.checkInterval",
          "10s",
          "How often each data directory's free space and writability are checked.");
  public static final ConfigKey<Boolean> COMMIT_FSYNC =
      ConfigKey.bool(
          "sluice.commit.fsync",
          true,
          "fsync a split's file when it is committed, so committed data survives a power loss.");
  public static final ConfigKey<Long> APP_TIMEOUT =
      ConfigKey.millis(
          "sluice.app.timeout",
          "120s",
          "An application without a heartbeat for this long expires and its files are deleted.");
  public static final ConfigKey<Long> APP_MAX_STORED_BYTES =
      ConfigKey.bytes(
          "sluice.app.maxStoredBytes",
          "0",
          "Most bytes of one application's registered shuffles this server stores, on disk or in"
              + " memory, replicas included; past it the application's pushes are refused"
              + " QUOTA_EXCEEDED and its tasks fail naming this setting. 0: no limit. An"
              + " application may ask for less (sluice.client.limits.maxStoredBytes).");
  public static final ConfigKey<Double> APP_MAX_DISK_SHARE =
      ConfigKey.fraction(
          "sluice.app.maxDiskShare",
          1.0,
          "Share of the data directories' file systems (their total size) one application's"
              + " stored bytes may take; past it its pushes are refused QUOTA_EXCEEDED like"
              + " sluice.app.maxStoredBytes. 1: no limit.");
  public static final ConfigKey<Integer> APP_MAX_OPEN_WRITERS =
      ConfigKey.integer(
          "sluice.app.maxOpenWriters",
          0,
          "Splits and map partitions one application may write at once on this server; data that"
              + " would open one more is refused QUOTA_EXCEEDED and its task fails naming this"
              + " setting. 0: no limit (sluice.server.maxOpenWriters still bounds the server). An"
              + " application may ask for less (sluice.client.limits.maxOpenWriters).");
  public static final ConfigKey<Integer> APP_MAX_OPEN_STREAMS =
      ConfigKey.integer(
          "sluice.app.maxOpenStreams",
          0,
          "Read streams one application may hold open on this server, over all its connections;"
              + " more are refused QUOTA_EXCEEDED and the reading task fails naming this setting."
              + " 0: no limit. An application may ask for less"
              + " (sluice.client.limits.maxOpenStreams).");
  public static final ConfigKey<Integer> APP_MAX_WEIGHT =
      ConfigKey.integer(
          "sluice.app.maxWeight",
          1,
          "Largest weight an application may ask for (sluice.client.limits.weight) in the memory"
              + " share flow control divides under pressure; an application of weight 2 may hold"
              + " twice the share of one of weight 1 before it is paused first. 1: every"
              + " application weighs the same.");
  public static final ConfigKey<Long> APP_EXPIRY_CHECK_INTERVAL =
      ConfigKey.millis(
          "sluice.app.expiryCheckInterval",
          "10s",
          "How often the server looks for expired applications.");
  public static final ConfigKey<Integer> MAX_STREAMS_PER_CONNECTION =
      ConfigKey.integer(
          "sluice.read.maxStreamsPerConnection",
          4096,
          "Open read streams one connection may hold; more are refused with BAD_REQUEST.");

  public static final ConfigKey<Integer> MAX_OPEN_WRITERS =
      ConfigKey.integer(
          "sluice.server.maxOpenWriters",
          32768,
          "Splits and map partitions being written at once on this server (each holds files and"
              + " a few KiB of heap); data that would open one more is answered HARD_SPLIT and goes"
              + " elsewhere.");

  public static final ConfigKey<Long> SHUTDOWN_TIMEOUT =
      ConfigKey.millis(
          "sluice.shutdown.timeout",
          "60s",
          "A stopping server first lets the Flink map partitions being written on it finish, for"
              + " at most half of this time, then answers new pushes HARD_SPLIT and commits its"
              + " open splits; splits not committed within this time are deleted and their"
              + " shuffles fail to commit.");

  public static final ConfigKey<Integer> MAP_WRITE_CREDITS =
      ConfigKey.integer(
          "sluice.mapPartition.writeCredits",
          8,
          "Region data frames one map partition writer (Flink) may have unanswered; 1 while the"
              + " server's memory is above the pause watermark.");
  public static final ConfigKey<Long> MAP_READ_BUFFER_SIZE =
      ConfigKey.bytes(
          "sluice.mapPartition.readBufferSize",
          "256k",
          "Size of one read buffer of map partition reads: a reader's credit is answered with at"
              + " most this many bytes of whole blocks.");
  public static final ConfigKey<Integer> MAP_READ_BUFFERS =
      ConfigKey.integer(
          "sluice.mapPartition.readBuffers",
          64,
          "Read buffers per data directory for map partition reads; the directory's IO scheduler"
              + " serves waiting reads in file offset order as buffers come free.");

  public static final List<ConfigKey<?>> KEYS =
      List.of(
          HOST,
          PORT,
          METRICS_PORT,
          METRICS_HOST,
          DIRS,
          STATE_DIR,
          MEMORY_MAX,
          PAUSE_WATERMARK,
          REPLICA_PAUSE_WATERMARK,
          RESUME_WATERMARK,
          FLUSH_SIZE,
          WRITEBACK_BYTES,
          FLUSHER_THREADS,
          CHUNK_SIZE,
          SORT_MAP_RANGES,
          SPLIT_THRESHOLD,
          STORAGE_POLICY,
          MEMORY_TIER_MAX_SPLIT,
          MEMORY_TIER_WRITEBACK_AFTER,
          HDFS_DIR,
          HDFS_MIN_SPLIT,
          HDFS_COPY_TIMEOUT,
          HDFS_THREADS,
          DISK_MAX_USAGE,
          DISK_CHECK_INTERVAL,
          COMMIT_FSYNC,
          APP_TIMEOUT,
          APP_MAX_STORED_BYTES,
          APP_MAX_DISK_SHARE,
          APP_MAX_OPEN_WRITERS,
          APP_MAX_OPEN_STREAMS,
          APP_MAX_WEIGHT,
          APP_EXPIRY_CHECK_INTERVAL,
          MAX_STREAMS_PER_CONNECTION,
          MAX_OPEN_WRITERS,
          SHUTDOWN_TIMEOUT,
          MAP_WRITE_CREDITS,
          MAP_READ_BUFFER_SIZE,
          MAP_READ_BUFFERS);

  private final String host;
  private final int port;
  private final int metricsPort;
  private final String metricsHost;
  private final List<Path> dirs;
  private final Path stateDir;
  private final long memoryMax;
  private final double pauseWatermark;
  private final double replicaPauseWatermark;
  private final double resumeWatermark;
  private final long splitThreshold;
  private final StoragePolicy storagePolicy;
  private final long memoryTierMaxSplit;
  private final String hdfsDir;
  private final Map<String, String> hadoopSettings;
  private final long hdfsMinSplit;
  private final int hdfsThreads;
  private final long hdfsCopyTimeoutMillis;
  private final long memoryTierWritebackAfterMillis;
  private final double diskMaxUsage;
  private final long diskCheckIntervalMillis;
  private final int flushSize;
  private final int flusherThreads;
  private final long writebackBytes;
  private final long chunkSize;
  private final boolean sortMapRanges;
  private final boolean commitFsync;
  private final long appTimeoutMillis;
  private final long appMaxStoredBytes;
  private final double appMaxDiskShare;
  private final int appMaxOpenWriters;
  private final int appMaxOpenStreams;
  private final int appMaxWeight;
  private final long appExpiryCheckIntervalMillis;
  private final int maxStreamsPerConnection;
  private final int maxOpenWriters;
  private final long shutdownTimeoutMillis;
  private final int mapWriteCredits;
  private final int mapReadBufferSize;
  private final int mapReadBuffers;
  private final IntegrityConf integrity;
  private final MetricsConf metrics;
  private final AuthConf auth;

  public ServerConf(SluiceConf conf) {
    this.host = conf.get(HOST);
    this.port = conf.get(PORT);
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException(PORT + " must be between 0 and 65535, got " + port);
    }
    this.metricsPort = conf.get(METRICS_PORT);
    this.metricsHost = conf.get(METRICS_HOST).isEmpty() ? host : conf.get(METRICS_HOST);
    if (metricsPort < -1 || metricsPort > 65535) {
      throw new IllegalArgumentException(
          METRICS_PORT + " must be -1 (off) or between 0 and 65535, got " + metricsPort);
    }
    List<Path> parsed = new ArrayList<>();
    for (String dir : conf.get(DIRS).split(",")) {
      if (!dir.isBlank()) {
        parsed.add(Paths.get(dir.trim()).toAbsolutePath());
      }
    }
    if (parsed.isEmpty()) {
      throw new IllegalArgumentException(DIRS + " must name at least one directory");
    }
    this.dirs = Collections.unmodifiableList(parsed);
    String state = conf.get(STATE_DIR).trim();
    this.stateDir =
        state.isEmpty() ? dirs.get(0).resolve(".sluice-state") : Paths.get(state).toAbsolutePath();
    this.memoryMax = conf.get(MEMORY_MAX);
    if (memoryMax < (1 << 20)) {
      throw new IllegalArgumentException(
          MEMORY_MAX + " must be at least 1m, got " + memoryMax + " bytes");
    }
    this.pauseWatermark = conf.get(PAUSE_WATERMARK);
    this.replicaPauseWatermark = conf.get(REPLICA_PAUSE_WATERMARK);
    this.resumeWatermark = conf.get(RESUME_WATERMARK);
    if (!(resumeWatermark < pauseWatermark && pauseWatermark <= replicaPauseWatermark)) {
      throw new IllegalArgumentException(
          "memory watermarks must satisfy "
              + RESUME_WATERMARK
              + " ("
              + resumeWatermark
              + ") < "
              + PAUSE_WATERMARK
              + " ("
              + pauseWatermark
              + ") <= "
              + REPLICA_PAUSE_WATERMARK
              + " ("
              + replicaPauseWatermark
              + ")");
    }
    this.splitThreshold = conf.get(SPLIT_THRESHOLD);
    if (splitThreshold < 1) {
      throw new IllegalArgumentException(SPLIT_THRESHOLD + " must be positive");
    }
    this.storagePolicy = StoragePolicy.parse(STORAGE_POLICY.name(), conf.get(STORAGE_POLICY));
    long maxInMemory = conf.get(MEMORY_TIER_MAX_SPLIT);
    if (maxInMemory < 1 || maxInMemory > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(
          MEMORY_TIER_MAX_SPLIT + " must be between 1 byte and 2g, got " + maxInMemory);
    }
    this.memoryTierMaxSplit = storagePolicy.uses(StoragePolicy.Tier.MEMORY) ? maxInMemory : 0;
    this.hdfsDir = conf.get(HDFS_DIR).trim();
    this.hadoopSettings = Map.copyOf(conf.hadoopSettings());
    if (storagePolicy.uses(StoragePolicy.Tier.HDFS) && hdfsDir.isEmpty()) {
      throw new IllegalArgumentException(
          STORAGE_POLICY
              + " names hdfs but "
              + HDFS_DIR
              + " is not set: set it to the URI splits go to, for example"
              + " hdfs://namenode:8020/sluice");
    }
    if (!hdfsDir.isEmpty()) {
      try {
        URI uri = new URI(hdfsDir);
        if (uri.getScheme() == null || uri.getPath() == null || uri.getPath().isEmpty()) {
          throw new IllegalArgumentException(
              HDFS_DIR
                  + " must be an absolute URI with a scheme and a path, got '"
                  + hdfsDir
                  + "'");
        }
      } catch (URISyntaxException e) {
        throw new IllegalArgumentException(
            HDFS_DIR + " is not a URI: '" + hdfsDir + "' (" + e.getMessage() + ")", e);
      }
    }
    this.hdfsMinSplit = conf.get(HDFS_MIN_SPLIT);
    if (hdfsMinSplit < 0) {
      throw new IllegalArgumentException(HDFS_MIN_SPLIT + " must not be negative");
    }
    this.hdfsCopyTimeoutMillis = conf.get(HDFS_COPY_TIMEOUT);
    if (hdfsCopyTimeoutMillis < 1) {
      throw new IllegalArgumentException(HDFS_COPY_TIMEOUT + " must be positive");
    }
    this.hdfsThreads = conf.get(HDFS_THREADS);
    if (hdfsThreads < 1 || hdfsThreads > 256) {
      throw new IllegalArgumentException(
          HDFS_THREADS + " must be between 1 and 256, got " + hdfsThreads);
    }
    this.memoryTierWritebackAfterMillis = conf.get(MEMORY_TIER_WRITEBACK_AFTER);
    if (memoryTierWritebackAfterMillis < 1) {
      throw new IllegalArgumentException(MEMORY_TIER_WRITEBACK_AFTER + " must be positive");
    }
    this.diskMaxUsage = conf.get(DISK_MAX_USAGE);
    this.diskCheckIntervalMillis = conf.get(DISK_CHECK_INTERVAL);
    if (diskCheckIntervalMillis < 1) {
      throw new IllegalArgumentException(DISK_CHECK_INTERVAL + " must be positive");
    }
    long flush = conf.get(FLUSH_SIZE);
    if (flush < 1 || flush > memoryMax / 2) {
      throw new IllegalArgumentException(
          FLUSH_SIZE
              + " must be between 1 byte and half of "
              + MEMORY_MAX
              + " ("
              + memoryMax / 2
              + " bytes), got "
              + flush);
    }
    this.flushSize = (int) flush;
    this.flusherThreads = conf.get(FLUSHER_THREADS);
    if (flusherThreads < 1 || flusherThreads > 64) {
      throw new IllegalArgumentException(
          FLUSHER_THREADS + " must be between 1 and 64, got " + flusherThreads);
    }
    this.chunkSize = conf.get(CHUNK_SIZE);
    if (chunkSize < 1) {
      throw new IllegalArgumentException(CHUNK_SIZE + " must be positive");
    }
    this.sortMapRanges = conf.get(SORT_MAP_RANGES);
    this.commitFsync = conf.get(COMMIT_FSYNC);
    long writeback = conf.get(WRITEBACK_BYTES);
    if (writeback < 0) {
      throw new IllegalArgumentException(WRITEBACK_BYTES + " must not be negative");
    }
    this.writebackBytes = commitFsync ? writeback : 0;
    this.appTimeoutMillis = conf.get(APP_TIMEOUT);
    this.appMaxStoredBytes = conf.get(APP_MAX_STORED_BYTES);
    if (appMaxStoredBytes < 0) {
      throw new IllegalArgumentException(
          APP_MAX_STORED_BYTES + " must not be negative (0: no limit)");
    }
    this.appMaxDiskShare = conf.get(APP_MAX_DISK_SHARE);
    if (!(appMaxDiskShare > 0 && appMaxDiskShare <= 1)) {
      throw new IllegalArgumentException(
          APP_MAX_DISK_SHARE + " must be above 0 and at most 1, got " + appMaxDiskShare);
    }
    this.appMaxOpenWriters = conf.get(APP_MAX_OPEN_WRITERS);
    if (appMaxOpenWriters < 0) {
      throw new IllegalArgumentException(
          APP_MAX_OPEN_WRITERS + " must not be negative (0: no limit)");
    }
    this.appMaxOpenStreams = conf.get(APP_MAX_OPEN_STREAMS);
    if (appMaxOpenStreams < 0) {
      throw new IllegalArgumentException(
          APP_MAX_OPEN_STREAMS + " must not be negative (0: no limit)");
    }
    this.appMaxWeight = conf.get(APP_MAX_WEIGHT);
    if (appMaxWeight < 1 || appMaxWeight > 1000) {
      throw new IllegalArgumentException(
          APP_MAX_WEIGHT + " must be between 1 and 1000, got " + appMaxWeight);
    }
    this.appExpiryCheckIntervalMillis = conf.get(APP_EXPIRY_CHECK_INTERVAL);
    if (appExpiryCheckIntervalMillis < 1) {
      throw new IllegalArgumentException(APP_EXPIRY_CHECK_INTERVAL + " must be positive");
    }
    this.maxStreamsPerConnection = conf.get(MAX_STREAMS_PER_CONNECTION);
    this.maxOpenWriters = conf.get(MAX_OPEN_WRITERS);
    if (maxOpenWriters < 1) {
      throw new IllegalArgumentException(MAX_OPEN_WRITERS + " must be at least 1");
    }
    this.shutdownTimeoutMillis = conf.get(SHUTDOWN_TIMEOUT);
    if (shutdownTimeoutMillis < 0) {
      throw new IllegalArgumentException(SHUTDOWN_TIMEOUT + " must not be negative");
    }
    this.mapWriteCredits = conf.get(MAP_WRITE_CREDITS);
    if (mapWriteCredits < 1) {
      throw new IllegalArgumentException(MAP_WRITE_CREDITS + " must be at least 1");
    }
    long readBuffer = conf.get(MAP_READ_BUFFER_SIZE);
    if (readBuffer < 4096 || readBuffer > (64 << 20)) {
      throw new IllegalArgumentException(
          MAP_READ_BUFFER_SIZE + " must be between 4k and 64m, got " + readBuffer + " bytes");
    }
    this.mapReadBufferSize = (int) readBuffer;
    this.mapReadBuffers = conf.get(MAP_READ_BUFFERS);
    if (mapReadBuffers < 1) {
      throw new IllegalArgumentException(MAP_READ_BUFFERS + " must be at least 1");
    }
    this.integrity = new IntegrityConf(conf);
    this.metrics = new MetricsConf(conf);
    this.auth = new AuthConf(conf);
    if (auth.enabled()) {
      auth.requireClusterSecret();
    }
  }

  /**
   * The host name clients reach this server at: {@code sluice.server.host}, or this machine's
   * canonical host name when that is empty or the wildcard 0.0.0.0.
   */
  public String advertisedHost() {
    if (!host.isEmpty() && !host.equals("0.0.0.0")) {
      return host;
    }
    try {
      return InetAddress.getLocalHost().getCanonicalHostName();
    } catch (UnknownHostException e) {
      return "localhost";
    }
  }

  public String host() {
    return host;
  }

  public int port() {
    return port;
  }

  /** -1 when off. */
  /** The address the metrics port binds. */
  public String metricsHost() {
    return metricsHost;
  }

  public int metricsPort() {
    return metricsPort;
  }

  public List<Path> dirs() {
    return dirs;
  }

  /**
   * Where the state store lives: {@code sluice.state.dir}, or {@code .sluice-state} in the first
   * data directory.
   */
  public Path stateDir() {
    return stateDir;
  }

  /** Bytes. */
  public long memoryMax() {
    return memoryMax;
  }

  public double pauseWatermark() {
    return pauseWatermark;
  }

  public double replicaPauseWatermark() {
    return replicaPauseWatermark;
  }

  public double resumeWatermark() {
    return resumeWatermark;
  }

  /** The tiers committed splits may live in ({@code sluice.storage.policy}). */
  public StoragePolicy storagePolicy() {
    return storagePolicy;
  }

  /**
   * The largest split the memory tier keeps ({@code sluice.storage.memory.maxSplitSize}); 0 when
   * the policy does not name memory.
   */
  public long memoryTierMaxSplit() {
    return memoryTierMaxSplit;
  }

  /** The URI of the distributed tier's directory ({@code sluice.storage.hdfs.dir}), or "". */
  public String hdfsDir() {
    return hdfsDir;
  }

  /** Hadoop settings for the distributed tier ({@code sluice.hadoop.*}, without the prefix). */
  public Map<String, String> hadoopSettings() {
    return hadoopSettings;
  }

  /** The smallest split that goes to the distributed tier. */
  public long hdfsMinSplit() {
    return hdfsMinSplit;
  }

  /** Longest a split's copy to the distributed tier may take at its commit. */
  public long hdfsCopyTimeoutMillis() {
    return hdfsCopyTimeoutMillis;
  }

  public int hdfsThreads() {
    return hdfsThreads;
  }

  public long memoryTierWritebackAfterMillis() {
    return memoryTierWritebackAfterMillis;
  }

  public long splitThreshold() {
    return splitThreshold;
  }

  public double diskMaxUsage() {
    return diskMaxUsage;
  }

  public long diskCheckIntervalMillis() {
    return diskCheckIntervalMillis;
  }

  /** Bytes. */
  public int flushSize() {
    return flushSize;
  }

  public int flusherThreads() {
    return flusherThreads;
  }

  /**
   * Bytes written to a file since its last writeback that start the next one; 0 when off (also
   * without {@code sluice.commit.fsync}: with no fsync at commit there is nothing to get ahead of).
   */
  public long writebackBytes() {
    return writebackBytes;
  }

  /** Bytes. */
  public long chunkSize() {
    return chunkSize;
  }

  public boolean sortMapRanges() {
    return sortMapRanges;
  }

  public boolean commitFsync() {
    return commitFsync;
  }

  public long appTimeoutMillis() {
    return appTimeoutMillis;
  }

  /** Most bytes one application may store on this server; 0 for no limit. */
  public long appMaxStoredBytes() {
    return appMaxStoredBytes;
  }

  public double appMaxDiskShare() {
    return appMaxDiskShare;
  }

  public int appMaxOpenWriters() {
    return appMaxOpenWriters;
  }

  public int appMaxOpenStreams() {
    return appMaxOpenStreams;
  }

  public int appMaxWeight() {
    return appMaxWeight;
  }

  public long appExpiryCheckIntervalMillis() {
    return appExpiryCheckIntervalMillis;
  }

  public int maxStreamsPerConnection() {
    return maxStreamsPerConnection;
  }

  /** Splits and map partitions being written at once; more are refused (HARD_SPLIT). */
  public int maxOpenWriters() {
    return maxOpenWriters;
  }

  /** Longest a stop waits for the open splits to commit. */
  public long shutdownTimeoutMillis() {
    return shutdownTimeoutMillis;
  }

  public int mapWriteCredits() {
    return mapWriteCredits;
  }

  public int mapReadBufferSize() {
    return mapReadBufferSize;
  }

  public int mapReadBuffers() {
    return mapReadBuffers;
  }

  /** What {@code /metrics} shows ({@code sluice.metrics.topApplications}). */
  public MetricsConf metrics() {
    return metrics;
  }

  /** The integrity settings ({@code sluice.integrity.*}), read from the same configuration. */
  public IntegrityConf integrity() {
    return integrity;
  }

  /** The authentication settings ({@code sluice.auth.*}), read from the same configuration. */
  public AuthConf auth() {
    return auth;
  }
}
