package io.sluice.server.read;

import io.sluice.server.storage.QuotaExceededException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Read streams open per application, over all its connections and both kinds of stream (splits and
 * map partitions), held within each application's limit. Thread safe.
 */
public final class StreamQuota {
  /** How many streams an application may hold open, and why one more is refused. */
  public interface Limit {
    /** Most streams application {@code appId} may hold open; 0 for no limit. */
    int maxOpenStreams(String appId);

    /**
     * Why {@code what}, a new stream of application {@code appId}, is refused at {@code max}: names
     * the limit and the setting.
     */
    String openStreamsRefusal(String appId, int max, String what);
  }

  /** No limit. */
  public static final Limit NONE =
      new Limit() {
        @Override
        public int maxOpenStreams(String appId) {
          return 0;
        }

        @Override
        public String openStreamsRefusal(String appId, int max, String what) {
          return "";
        }
      };

  private final Limit limit;
  private final Map<String, Integer> open = new ConcurrentHashMap<>();

  public StreamQuota(Limit limit) {
    this.limit = limit;
  }

  /**
   * Counts a new stream of {@code appId}, named {@code what} for a refusal.
   *
   * @throws QuotaExceededException when the application holds as many as it may
   */
  void opened(String appId, String what) {
    int max = limit.maxOpenStreams(appId);
    boolean[] refused = {false};
    open.compute(
        appId,
        (id, n) -> {
          int count = n == null ? 0 : n;
          if (max > 0 && count >= max) {
            refused[0] = true;
            return n;
          }
          return count + 1;
        });
    if (refused[0]) {
      throw new QuotaExceededException(limit.openStreamsRefusal(appId, max, what));
    }
  }

  /** A stream counted by {@link #opened} is closed. */
  void closed(String appId) {
    open.computeIfPresent(appId, (id, n) -> n <= 1 ? null : n - 1);
  }

  /** Streams application {@code appId} holds open now. */
  public int openBy(String appId) {
    return open.getOrDefault(appId, 0);
  }
}
