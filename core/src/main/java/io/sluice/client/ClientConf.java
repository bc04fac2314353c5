package io.sluice.client;

import io.sluice.common.ConfigKey;
import io.sluice.common.SluiceConf;
import io.sluice.protocol.proto.RequestedLimits;
import java.util.List;
import java.util.Locale;

/** Settings of the client library: pushing, reading and the lifecycle coordinator. */
public final class ClientConf {
  public static final ConfigKey<Long> PUSH_BUFFER_SIZE =
      ConfigKey.bytes(
          "sluice.push.bufferSize",
          "64k",
          "Bytes a map task buffers per partition before it compresses them into a batch and"
              + " pushes it.");
  public static final ConfigKey<Long> PUSH_MAX_IN_FLIGHT_PER_SERVER =
      ConfigKey.bytes(
          "sluice.push.maxInFlightBytesPerServer",
          "32m",
          "Pushed bytes a client JVM may have unacknowledged per server; writers wait beyond it.");
  public static final ConfigKey<Long> PUSH_MAX_IN_FLIGHT =
      ConfigKey.bytes(
          "sluice.push.maxInFlightBytes",
          "256m",
          "Pushed bytes a client JVM may have unacknowledged over all servers together; writers"
              + " wait beyond it.");
  public static final ConfigKey<Integer> PUSH_MAX_RETRIES =
      ConfigKey.integer(
          "sluice.push.maxRetries",
          8,
          "Failed attempts of one push (connection lost, HARD_SPLIT, server error) before the map"
              + " task fails; CONGESTED answers are retried until sluice.push.timeout instead.");
  public static final ConfigKey<Long> PUSH_RETRY_WAIT =
      ConfigKey.millis(
          "sluice.push.retryWait",
          "100ms",
          "First backoff before a push is retried; doubles per attempt, with jitter.");
  public static final ConfigKey<Long> PUSH_RETRY_MAX_WAIT =
      ConfigKey.millis("sluice.push.retryMaxWait", "5s", "Cap on the backoff between retries.");
  public static final ConfigKey<Long> PUSH_TIMEOUT =
      ConfigKey.millis(
          "sluice.push.timeout",
          "300s",
          "A map task fails when its pushes make no progress for this long, naming the server.");
  public static final ConfigKey<String> COMPRESSION =
      ConfigKey.string("sluice.push.compression", "lz4", "Codec of batch payloads: lz4 or none.");
  public static final ConfigKey<Long> READ_INLINE_FIRST_CHUNK =
      ConfigKey.bytes(
          "sluice.read.inlineFirstChunk",
          "1m",
          "A reader asks for a split's first chunk in the answer to opening it when the chunk holds"
              + " at most this many bytes, saving a round trip per small split (a split of one"
              + " such chunk costs one request); 0 fetches every chunk.");
  public static final ConfigKey<Integer> READ_PREFETCH_CHUNKS =
      ConfigKey.integer(
          "sluice.read.prefetchChunks",
          2,
          "Chunks a reader fetches ahead of the one it is decoding; a small split that comes"
              + " whole with the answer to opening it (sluice.read.inlineFirstChunk) counts as one:"
              + " the reader opens up to this many such splits ahead.");
  public static final ConfigKey<Long> HEARTBEAT_INTERVAL =
      ConfigKey.millis(
          "sluice.coordinator.heartbeatInterval",
          "10s",
          "How often the coordinator tells its servers the application is alive.");
  public static final ConfigKey<Integer> COORDINATOR_PORT =
      ConfigKey.integer(
          "sluice.coordinator.port", 0, "Port of the coordinator's endpoint; 0 picks a free port.");
  public static final ConfigKey<Long> EXCLUDE_DURATION =
      ConfigKey.millis(
          "sluice.coordinator.excludeDuration",
          "60s",
          "A server that could not be reached or failed a request gets no new partitions for this"
              + " long; 0 never excludes.");
  public static final ConfigKey<Long> SERVER_RESTART_WAIT =
      ConfigKey.millis(
          "sluice.client.serverRestartWait",
          "60s",
          "How long clients wait for a server that refuses or drops their connections (a restart,"
              + " a crash) to come back before they treat its data as lost: readers retry it, the"
              + " coordinator retries its commit, and a partition that no other server can take"
              + " waits for it; 0 treats it as lost at once.");
  public static final ConfigKey<Long> COMMIT_TIMEOUT =
      ConfigKey.millis(
          "sluice.coordinator.commitTimeout",
          "600s",
          "Longest a reader waits for a shuffle's commit; then it fails naming the maps that never"
              + " reported their end or the servers that did not answer the commit.");

  public static final ConfigKey<Long> MAP_PUSH_SIZE =
      ConfigKey.bytes(
          "sluice.mapPartition.pushSize",
          "1m",
          "Bytes of compressed blocks a map partition writer (Flink) sends per region data frame.");
  public static final ConfigKey<Integer> MAP_READ_CREDITS =
      ConfigKey.integer(
          "sluice.mapPartition.readCredits",
          4,
          "Server read buffers (sluice.mapPartition.readBufferSize each) one map partition read"
              + " stream may have granted or queued at once.");

  public static final ConfigKey<Boolean> DISTRIBUTED_TIER =
      ConfigKey.bool(
          "sluice.shuffle.distributedTier",
          false,
          "Ask the servers to move every split of the application's shuffles to their distributed"
              + " tier at commit, whatever its size, so the shuffles outlive the servers (servers"
              + " whose sluice.storage.policy does not name hdfs keep them local). Read by the"
              + " coordinator (the Spark driver).");
  public static final ConfigKey<String> CLUSTER_APPLICATION_ID =
      ConfigKey.string(
          "sluice.client.clusterApplicationId",
          "",
          "The resource manager's id of the application the coordinator runs in (YARN's"
              + " application_...), sent with every shuffle registration so that a NodeManager's"
              + " server deletes the data when YARN reports that application finished; empty"
              + " means the YARN application of the coordinator's own container (its CONTAINER_ID),"
              + " or none outside YARN.");
  public static final ConfigKey<Long> LIMIT_STORED_BYTES =
      ConfigKey.bytes(
          "sluice.client.limits.maxStoredBytes",
          "0",
          "Bytes of the application's shuffles each server may store for it, asked at every"
              + " shuffle registration; a server holds the application to the lower of this and its"
              + " own sluice.app.maxStoredBytes, and past it the application's tasks fail naming"
              + " the setting. 0: the server's limit. Read by the coordinator (the Spark driver,"
              + " Flink's shuffle master).");
  public static final ConfigKey<Integer> LIMIT_OPEN_WRITERS =
      ConfigKey.integer(
          "sluice.client.limits.maxOpenWriters",
          0,
          "Splits and map partitions the application may write at once on each server, asked at"
              + " registration; the server applies the lower of this and sluice.app.maxOpenWriters."
              + " 0: the server's limit. Read by the coordinator.");
  public static final ConfigKey<Integer> LIMIT_OPEN_STREAMS =
      ConfigKey.integer(
          "sluice.client.limits.maxOpenStreams",
          0,
          "Read streams the application may hold open on each server, asked at registration; the"
              + " server applies the lower of this and sluice.app.maxOpenStreams. 0: the server's"
              + " limit. Read by the coordinator.");
  public static final ConfigKey<Integer> LIMIT_WEIGHT =
      ConfigKey.integer(
          "sluice.client.limits.weight",
          1,
          "The application's weight in a server's memory share under pressure, asked at"
              + " registration: weight 2 may hold twice the memory of weight 1 before flow control"
              + " pauses it first. Servers cap it at their sluice.app.maxWeight (1 unless the"
              + " operator allows more). Read by the coordinator.");
  public static final ConfigKey<Integer> REPLICATION_FACTOR =
      ConfigKey.integer(
          "sluice.replication.factor",
          1,
          "Copies of every split a shuffle writes: 1, or 2 for a primary and a replica on another"
              + " server (on another rack when racks are known, see sluice.topology.script, else"
              + " on another host when there is one). With 2, a push is acknowledged once both"
              + " hold it, both commit, readers fall back to the replica, and losing one server"
              + " loses no data and reruns no map. Read by the coordinator (the Spark driver) and by"
              + " Flink's shuffle master (map partitions: the producer writes both copies, readers"
              + " fall back to the replica).");

  public static final ConfigKey<String> TOPOLOGY_SCRIPT =
      ConfigKey.string(
          "sluice.topology.script",
          "",
          "Executable that maps server hosts to racks, as Hadoop's net.topology.script.file.name:"
              + " called with host names or IPs as arguments, it prints one rack per argument. With"
              + " sluice.replication.factor 2 the replica then goes to another rack when there is"
              + " one. Run by the coordinator (the Spark driver; on YARN the NodeManagers' racks"
              + " come from the ResourceManager and the script only serves hosts it does not"
              + " report) and Flink's shuffle master, once per host. Empty: racks are unknown (or"
              + " YARN's), replicas go to another host. A script that fails leaves its hosts'"
              + " racks unknown.");
  public static final ConfigKey<Long> TOPOLOGY_TIMEOUT =
      ConfigKey.millis(
          "sluice.topology.scriptTimeout",
          "10s",
          "Longest one call of sluice.topology.script may run; then it is killed and its hosts'"
              + " racks are unknown.");

  public static final List<ConfigKey<?>> KEYS =
      List.of(
          DISTRIBUTED_TIER,
          CLUSTER_APPLICATION_ID,
          REPLICATION_FACTOR,
          LIMIT_STORED_BYTES,
          LIMIT_OPEN_WRITERS,
          LIMIT_OPEN_STREAMS,
          LIMIT_WEIGHT,
          TOPOLOGY_SCRIPT,
          TOPOLOGY_TIMEOUT,
          PUSH_BUFFER_SIZE,
          PUSH_MAX_IN_FLIGHT_PER_SERVER,
          PUSH_MAX_IN_FLIGHT,
          PUSH_MAX_RETRIES,
          PUSH_RETRY_WAIT,
          PUSH_RETRY_MAX_WAIT,
          PUSH_TIMEOUT,
          COMPRESSION,
          READ_PREFETCH_CHUNKS,
          READ_INLINE_FIRST_CHUNK,
          HEARTBEAT_INTERVAL,
          COORDINATOR_PORT,
          EXCLUDE_DURATION,
          SERVER_RESTART_WAIT,
          COMMIT_TIMEOUT,
          MAP_PUSH_SIZE,
          MAP_READ_CREDITS);

  private final int pushBufferSize;
  private final long maxInFlightPerServer;
  private final long maxInFlight;
  private final int maxRetries;
  private final long retryWaitMillis;
  private final long retryMaxWaitMillis;
  private final long pushTimeoutMillis;
  private final BatchCodec codec;
  private final int prefetchChunks;
  private final int inlineFirstChunk;
  private final long heartbeatIntervalMillis;
  private final int coordinatorPort;
  private final long commitTimeoutMillis;
  private final long excludeDurationMillis;
  private final long serverRestartWaitMillis;
  private final int mapPushSize;
  private final int mapReadCredits;
  private final int replicationFactor;
  private final boolean distributedTier;
  private final String clusterApplicationId;
  private final RequestedLimits requestedLimits;
  private final String topologyScript;
  private final long topologyTimeoutMillis;

  public ClientConf(SluiceConf conf) {
    this.replicationFactor = conf.get(REPLICATION_FACTOR);
    this.distributedTier = conf.get(DISTRIBUTED_TIER);
    String clusterApp = conf.get(CLUSTER_APPLICATION_ID).trim();
    this.clusterApplicationId =
        clusterApp.isEmpty()
            ? YarnContainer.applicationId(System.getenv("CONTAINER_ID"))
            : clusterApp;
    this.requestedLimits = requestedLimits(conf);
    this.topologyScript = conf.get(TOPOLOGY_SCRIPT).trim();
    this.topologyTimeoutMillis = conf.get(TOPOLOGY_TIMEOUT);
    if (topologyTimeoutMillis < 1) {
      throw new IllegalArgumentException(
          TOPOLOGY_TIMEOUT + " must be positive, got " + topologyTimeoutMillis + " ms");
    }
    if (replicationFactor < 1 || replicationFactor > 2) {
      throw new IllegalArgumentException(
          REPLICATION_FACTOR + " must be 1 or 2, got " + replicationFactor);
    }
    long buffer = conf.get(PUSH_BUFFER_SIZE);
    if (buffer < 64 || buffer > (64 << 20)) {
      throw new IllegalArgumentException(
          PUSH_BUFFER_SIZE + " must be between 64 bytes and 64m, got " + buffer + " bytes");
    }
    this.pushBufferSize = (int) buffer;
    this.maxInFlightPerServer = conf.get(PUSH_MAX_IN_FLIGHT_PER_SERVER);
    if (maxInFlightPerServer < 1) {
      throw new IllegalArgumentException(PUSH_MAX_IN_FLIGHT_PER_SERVER + " must be positive");
    }
    this.maxInFlight = conf.get(PUSH_MAX_IN_FLIGHT);
    if (maxInFlight < 1) {
      throw new IllegalArgumentException(PUSH_MAX_IN_FLIGHT + " must be positive");
    }
    this.maxRetries = conf.get(PUSH_MAX_RETRIES);
    if (maxRetries < 0) {
      throw new IllegalArgumentException(PUSH_MAX_RETRIES + " must not be negative");
    }
    this.retryWaitMillis = conf.get(PUSH_RETRY_WAIT);
    this.retryMaxWaitMillis = conf.get(PUSH_RETRY_MAX_WAIT);
    this.pushTimeoutMillis = conf.get(PUSH_TIMEOUT);
    this.codec = BatchCodec.named(conf.get(COMPRESSION).toLowerCase(Locale.ROOT));
    long inline = conf.get(READ_INLINE_FIRST_CHUNK);
    if (inline < 0 || inline > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(
          READ_INLINE_FIRST_CHUNK + " must be between 0 and 2g, got " + inline);
    }
    this.inlineFirstChunk = (int) inline;
    this.prefetchChunks = conf.get(READ_PREFETCH_CHUNKS);
    if (prefetchChunks < 1) {
      throw new IllegalArgumentException(READ_PREFETCH_CHUNKS + " must be at least 1");
    }
    this.heartbeatIntervalMillis = conf.get(HEARTBEAT_INTERVAL);
    if (heartbeatIntervalMillis < 1) {
      throw new IllegalArgumentException(HEARTBEAT_INTERVAL + " must be positive");
    }
    this.coordinatorPort = conf.get(COORDINATOR_PORT);
    this.commitTimeoutMillis = conf.get(COMMIT_TIMEOUT);
    this.excludeDurationMillis = conf.get(EXCLUDE_DURATION);
    this.serverRestartWaitMillis = conf.get(SERVER_RESTART_WAIT);
    if (serverRestartWaitMillis < 0) {
      throw new IllegalArgumentException(
          SERVER_RESTART_WAIT + " must not be negative, got " + serverRestartWaitMillis + " ms");
    }
    long mapPush = conf.get(MAP_PUSH_SIZE);
    if (mapPush < 1024 || mapPush > (64 << 20)) {
      throw new IllegalArgumentException(
          MAP_PUSH_SIZE + " must be between 1k and 64m, got " + mapPush + " bytes");
    }
    this.mapPushSize = (int) mapPush;
    this.mapReadCredits = conf.get(MAP_READ_CREDITS);
    if (mapReadCredits < 1) {
      throw new IllegalArgumentException(MAP_READ_CREDITS + " must be at least 1");
    }
  }

  /** Bytes. */
  public int mapPushSize() {
    return mapPushSize;
  }

  public int mapReadCredits() {
    return mapReadCredits;
  }

  /** Bytes. */
  public int pushBufferSize() {
    return pushBufferSize;
  }

  /** Bytes. */
  public long maxInFlightPerServer() {
    return maxInFlightPerServer;
  }

  /** Bytes, over all servers together; the smaller of this and the per-server bound applies. */
  public long maxInFlight() {
    return maxInFlight;
  }

  /** {@code sluice.replication.factor}: 1 or 2. */
  /** Whether every split of the application's shuffles goes to the distributed tier. */
  public boolean distributedTier() {
    return distributedTier;
  }

  /**
   * The resource manager's application this one runs in ({@code sluice.client.clusterApplicationId}
   * or the coordinator's YARN container's), or {@code ""}.
   */
  public String clusterApplicationId() {
    return clusterApplicationId;
  }

  public int replicationFactor() {
    return replicationFactor;
  }

  /** What the application asks each server to hold it to ({@code sluice.client.limits.*}). */
  public RequestedLimits requestedLimits() {
    return requestedLimits;
  }

  private static RequestedLimits requestedLimits(SluiceConf conf) {
    long storedBytes = conf.get(LIMIT_STORED_BYTES);
    if (storedBytes < 0) {
      throw new IllegalArgumentException(LIMIT_STORED_BYTES + " must not be negative (0: none)");
    }
    int writers = conf.get(LIMIT_OPEN_WRITERS);
    if (writers < 0) {
      throw new IllegalArgumentException(LIMIT_OPEN_WRITERS + " must not be negative (0: none)");
    }
    int streams = conf.get(LIMIT_OPEN_STREAMS);
    if (streams < 0) {
      throw new IllegalArgumentException(LIMIT_OPEN_STREAMS + " must not be negative (0: none)");
    }
    int weight = conf.get(LIMIT_WEIGHT);
    if (weight < 1 || weight > 1000) {
      throw new IllegalArgumentException(
          LIMIT_WEIGHT + " must be between 1 and 1000, got " + weight);
    }
    return RequestedLimits.newBuilder()
        .setMaxStoredBytes(storedBytes)
        .setMaxOpenWriters(writers)
        .setMaxOpenStreams(streams)
        .setWeight(weight)
        .build();
  }

  /** The rack topology script, or {@code ""} when none is configured. */
  public String topologyScript() {
    return topologyScript;
  }

  public long topologyTimeoutMillis() {
    return topologyTimeoutMillis;
  }

  public int maxRetries() {
    return maxRetries;
  }

  public long retryWaitMillis() {
    return retryWaitMillis;
  }

  public long retryMaxWaitMillis() {
    return retryMaxWaitMillis;
  }

  public long pushTimeoutMillis() {
    return pushTimeoutMillis;
  }

  public BatchCodec codec() {
    return codec;
  }

  /** Bytes up to which a split's first chunk comes with the answer to opening it; 0: never. */
  public int inlineFirstChunk() {
    return inlineFirstChunk;
  }

  public int prefetchChunks() {
    return prefetchChunks;
  }

  public long heartbeatIntervalMillis() {
    return heartbeatIntervalMillis;
  }

  public int coordinatorPort() {
    return coordinatorPort;
  }

  public long excludeDurationMillis() {
    return excludeDurationMillis;
  }

  /** See {@link #SERVER_RESTART_WAIT}; 0 does not wait. */
  public long serverRestartWaitMillis() {
    return serverRestartWaitMillis;
  }

  public long commitTimeoutMillis() {
    return commitTimeoutMillis;
  }
}
