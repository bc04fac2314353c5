package io.sluice.server;

import io.sluice.protocol.proto.RequestedLimits;
import io.sluice.server.memory.MemoryBudget;
import io.sluice.server.read.StreamQuota;
import io.sluice.server.storage.ApplicationQuota;
import io.sluice.server.storage.ShuffleRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What one application may hold on this server, so that no job takes the server from the others:
 * bytes stored ({@code sluice.app.maxStoredBytes}, and {@code sluice.app.maxDiskShare} of the data
 * directories' file systems), splits and map partitions being written ({@code
 * sluice.app.maxOpenWriters}), read streams open ({@code sluice.app.maxOpenStreams}), and its
 * weight in the memory share ({@code sluice.app.maxWeight}). An application may ask for lower
 * limits and a weight at registration ({@code sluice.client.limits.*}); the server applies the
 * lower of each pair and caps the weight at its maximum.
 *
 * <p>Past a limit, the request is refused QUOTA_EXCEEDED with a message naming the application, the
 * limit and the setting that set it; the client does not retry it, so the task fails with that
 * message. Refused pushed bytes are counted per application ({@code
 * sluice_application_refused_bytes_total}); an application's first refused push is logged as a
 * warning, the next ones at debug level, and every refused writer or stream as a warning. Thread
 * safe.
 */
final class ApplicationLimits implements ApplicationQuota, StreamQuota.Limit {
  private static final Logger LOG = LoggerFactory.getLogger(ApplicationLimits.class);

  private static final String CLIENT_STORED = "sluice.client.limits.maxStoredBytes";
  private static final String CLIENT_WRITERS = "sluice.client.limits.maxOpenWriters";
  private static final String CLIENT_STREAMS = "sluice.client.limits.maxOpenStreams";

  private final ShuffleRegistry registry;
  private final MemoryBudget memory;
  private final long maxStoredBytes;
  private final long diskShareBytes;
  private final int maxOpenWriters;
  private final int maxOpenStreams;
  private final int maxWeight;

  /**
   * @param capacityBytes total size of the data directories' file systems ({@code
   *     sluice.app.maxDiskShare} is a share of it)
   */
  ApplicationLimits(
      ShuffleRegistry registry, MemoryBudget memory, ServerConf conf, long capacityBytes) {
    this.registry = registry;
    this.memory = memory;
    this.maxStoredBytes = conf.appMaxStoredBytes();
    this.diskShareBytes =
        conf.appMaxDiskShare() < 1 ? (long) (capacityBytes * conf.appMaxDiskShare()) : 0;
    this.maxOpenWriters = conf.appMaxOpenWriters();
    this.maxOpenStreams = conf.appMaxOpenStreams();
    this.maxWeight = conf.appMaxWeight();
  }

  /** What is wrong with limits an application asked for (negative values), or null. */
  static String requestProblem(RequestedLimits limits) {
    if (limits.getMaxStoredBytes() < 0
        || limits.getMaxOpenWriters() < 0
        || limits.getMaxOpenStreams() < 0
        || limits.getWeight() < 0) {
      return "requested limits must not be negative, got max_stored_bytes "
          + limits.getMaxStoredBytes()
          + ", max_open_writers "
          + limits.getMaxOpenWriters()
          + ", max_open_streams "
          + limits.getMaxOpenStreams()
          + ", weight "
          + limits.getWeight();
    }
    return null;
  }

  /**
   * Application {@code appId} registered a shuffle asking for {@code limits} (well formed, see
   * {@link #requestProblem}): they hold from now on, and its weight, capped at {@code
   * sluice.app.maxWeight}, applies to its memory share.
   */
  void registered(String appId, RequestedLimits limits) {
    registry.requestLimits(appId, limits);
    int asked = Math.max(1, limits.getWeight());
    if (asked > maxWeight) {
      LOG.debug(
          "Application {} asked for weight {}; sluice.app.maxWeight caps it at {}",
          appId,
          asked,
          maxWeight);
    }
    memory.account(appId).setWeight(Math.min(asked, maxWeight));
  }

  /**
   * Why application {@code appId} may not store {@code bytes} more here, or null when it may; a
   * refusal is counted.
   */
  String storeRefusal(String appId, long bytes) {
    Limit limit =
        Limit.lowest(maxStoredBytes, "sluice.app.maxStoredBytes")
            .orLower(diskShareBytes, "sluice.app.maxDiskShare")
            .orLower(registry.requestedLimits(appId).getMaxStoredBytes(), CLIENT_STORED);
    if (limit.max == 0) {
      return null;
    }
    long stored = registry.storedBytes(appId);
    if (stored + bytes <= limit.max) {
      return null;
    }
    boolean first = registry.countRefused(appId, bytes);
    String message =
        "application "
            + appId
            + " stores "
            + stored
            + " bytes on this server and "
            + bytes
            + " more would pass its limit of "
            + limit.max
            + " bytes ("
            + limit.setting
            + "); the server takes no more of its data until its shuffles end, or the limit is"
            + " raised";
    if (first) {
      LOG.warn("Refusing pushes: {}", message);
    } else {
      LOG.debug("Refusing pushes: {}", message);
    }
    return message;
  }

  @Override
  public int maxOpenWriters(String appId) {
    return (int) writersLimit(appId).max;
  }

  @Override
  public String openWritersRefusal(String appId, int max, String what) {
    return refusal(
        appId, what, max, "splits and map partitions being written", writersLimit(appId));
  }

  @Override
  public int maxOpenStreams(String appId) {
    return (int) streamsLimit(appId).max;
  }

  @Override
  public String openStreamsRefusal(String appId, int max, String what) {
    return refusal(appId, what, max, "read streams open", streamsLimit(appId));
  }

  private Limit writersLimit(String appId) {
    return Limit.lowest(maxOpenWriters, "sluice.app.maxOpenWriters")
        .orLower(registry.requestedLimits(appId).getMaxOpenWriters(), CLIENT_WRITERS);
  }

  private Limit streamsLimit(String appId) {
    return Limit.lowest(maxOpenStreams, "sluice.app.maxOpenStreams")
        .orLower(registry.requestedLimits(appId).getMaxOpenStreams(), CLIENT_STREAMS);
  }

  private static String refusal(String appId, String what, int max, String counted, Limit limit) {
    String message =
        "application "
            + appId
            + " has "
            + max
            + " "
            + counted
            + " on this server, its limit ("
            + limit.setting
            + "); "
            + what
            + " is refused: lower the application's parallelism, or raise the limit";
    LOG.warn("Refusing: {}", message);
    return message;
  }

  /** A limit and the setting it comes from; 0 for none. */
  private static final class Limit {
    private static final Limit NONE = new Limit(0, "");

    final long max;
    final String setting;

    private Limit(long max, String setting) {
      this.max = max;
      this.setting = setting;
    }

    static Limit lowest(long max, String setting) {
      return max > 0 ? new Limit(max, setting) : NONE;
    }

    /** This, or {@code max} of {@code setting} when it is set and lower. */
    Limit orLower(long max, String setting) {
      return max > 0 && (this.max == 0 || max < this.max) ? new Limit(max, setting) : this;
    }
  }
}
