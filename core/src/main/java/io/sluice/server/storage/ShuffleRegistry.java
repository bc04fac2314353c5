package io.sluice.server.storage;

import io.sluice.common.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The applications and shuffles registered on this server, with the time each application was last
 * heard from. Thread safe.
 */
public final class ShuffleRegistry {
  private static final Logger LOG = LoggerFactory.getLogger(ShuffleRegistry.class);

  private final DataDirectories dirs;
  private final Clock clock;
  private final Map<String, Application> apps = new ConcurrentHashMap<>();

  public ShuffleRegistry(DataDirectories dirs, Clock clock) {
    this.dirs = dirs;
    this.clock = clock;
  }

  private static final class Application {
    final String appId;
    final Map<Integer, ServerShuffle> shuffles = new ConcurrentHashMap<>();
    volatile long lastHeard;

    Application(String appId, long now) {
      this.appId = appId;
      this.lastHeard = now;
    }
  }

  /** Registers the shuffle (and its application) if it is not yet; counts as a heartbeat. */
  public ServerShuffle register(String appId, int shuffleId) {
    Application app =
        apps.compute(
            appId,
            (id, existing) -> {
              Application a = existing != null ? existing : new Application(id, clock.millis());
              a.lastHeard = clock.millis();
              return a;
            });
    return app.shuffles.computeIfAbsent(shuffleId, id -> new ServerShuffle(appId, id, dirs));
  }

  /** The shuffle, or null when it is not registered. */
  public ServerShuffle get(String appId, int shuffleId) {
    Application app = apps.get(appId);
    return app == null ? null : app.shuffles.get(shuffleId);
  }

  /**
   * @return false when the application is not registered here
   */
  public boolean heartbeat(String appId) {
    Application app = apps.get(appId);
    if (app == null) {
      return false;
    }
    app.lastHeard = clock.millis();
    return true;
  }

  /** Removes a shuffle and deletes its files; a no-op for an unknown shuffle. */
  public CompletableFuture<Void> unregisterShuffle(String appId, int shuffleId) {
    Application app = apps.get(appId);
    ServerShuffle shuffle = app == null ? null : app.shuffles.remove(shuffleId);
    if (shuffle == null) {
      return CompletableFuture.completedFuture(null);
    }
    LOG.info("Unregistered {}; deleting its files", shuffle);
    return shuffle.discard();
  }

  /** Removes an application with all its shuffles and files; a no-op for an unknown one. */
  public CompletableFuture<Void> unregisterApplication(String appId) {
    Application app = apps.remove(appId);
    if (app == null) {
      return CompletableFuture.completedFuture(null);
    }
    List<CompletableFuture<Void>> futures = new ArrayList<>();
    for (ServerShuffle s : app.shuffles.values()) {
      futures.add(s.discard());
    }
    return CompletableFuture.allOf(futures.toArray(new CompletableFuture<?>[0]))
        .thenRun(() -> dirs.deleteApplicationDirs(appId));
  }

  /**
   * Unregisters every application not heard from for {@code timeoutMillis}.
   *
   * @return completes when their files are deleted
   */
  public CompletableFuture<Void> expire(long timeoutMillis) {
    long now = clock.millis();
    List<CompletableFuture<Void>> expired = new ArrayList<>();
    for (Application app : apps.values()) {
      if (now - app.lastHeard > timeoutMillis) {
        LOG.info(
            "Application {} sent no heartbeat for {} ms (sluice.app.timeout {} ms); deleting its"
                + " {} shuffle(s)",
            app.appId,
            now - app.lastHeard,
            timeoutMillis,
            app.shuffles.size());
        expired.add(unregisterApplication(app.appId));
      }
    }
    return CompletableFuture.allOf(expired.toArray(new CompletableFuture<?>[0]));
  }

  /**
   * Memory pressure: hands the largest split buffers to the flushers until at least {@code
   * bytesToFree} bytes are on their way to disk (or every buffer is).
   *
   * @return the bytes handed over
   */
  public long flushLargest(long bytesToFree) {
    List<ReducePartitionSplit> candidates = new ArrayList<>();
    for (Application app : apps.values()) {
      for (ServerShuffle s : app.shuffles.values()) {
        s.collectSplits(candidates);
      }
    }
    List<long[]> sizes = new ArrayList<>();
    for (int i = 0; i < candidates.size(); i++) {
      long pending = candidates.get(i).pendingBytes();
      if (pending > 0) {
        sizes.add(new long[] {pending, i});
      }
    }
    sizes.sort((a, b) -> Long.compare(b[0], a[0]));
    long handed = 0;
    for (long[] size : sizes) {
      if (handed >= bytesToFree) {
        break;
      }
      handed += candidates.get((int) size[1]).flushNow();
    }
    return handed;
  }

  public int applicationCount() {
    return apps.size();
  }

  /** Discards everything (server shutdown): uncommitted files are deleted. */
  public CompletableFuture<Void> discardUncommitted() {
    List<CompletableFuture<Void>> futures = new ArrayList<>();
    for (Application app : apps.values()) {
      for (ServerShuffle s : app.shuffles.values()) {
        if (!s.isCommitStarted()) {
          futures.add(s.discard());
        }
      }
    }
    return CompletableFuture.allOf(futures.toArray(new CompletableFuture<?>[0]));
  }
}
