package io.sluice.server.storage;

import io.sluice.common.Clock;
import io.sluice.common.Ids;
import io.sluice.protocol.proto.MapPartitionRef;
import io.sluice.protocol.proto.ReportChecksumFailure;
import io.sluice.protocol.proto.RequestedLimits;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The applications and shuffles registered on this server, with the time each application was last
 * heard from. Registrations and removals are told to the {@link ShuffleStateListener} (the state
 * store); at start the server {@linkplain #restore restores} what it recorded. Thread safe.
 */
public final class ShuffleRegistry {
  private static final Logger LOG = LoggerFactory.getLogger(ShuffleRegistry.class);

  private final DataDirectories dirs;
  private final Clock clock;
  private final ShuffleStateListener state;
  private final Map<String, Application> apps = new ConcurrentHashMap<>();
  private final Admission admission = new Admission();

  public ShuffleRegistry(DataDirectories dirs, Clock clock) {
    this(dirs, clock, ShuffleStateListener.NONE);
  }

  public ShuffleRegistry(DataDirectories dirs, Clock clock, ShuffleStateListener state) {
    this.dirs = dirs;
    this.clock = clock;
    this.state = state;
  }

  private static final class Application {
    final String appId;
    final Map<Integer, ServerShuffle> shuffles = new ConcurrentHashMap<>();
    volatile long lastHeard;
    final LongAdder pushedBytes = new LongAdder();
    final LongAdder readBytes = new LongAdder();

    /** Bytes of its pushes refused for its limit (sluice.app.maxStoredBytes). */
    final LongAdder refusedBytes = new LongAdder();

    /**
     * The key its coordinator registered (sluice.auth.enabled), sealed as the state store holds it;
     * null without authentication.
     */
    volatile byte[] authKey;

    /** The limits it asked for at its latest registration (sluice.client.limits.*). */
    volatile RequestedLimits requestedLimits = RequestedLimits.getDefaultInstance();

    /** The resource manager's application it runs in (YARN's application_...), or "". */
    volatile String clusterAppId = "";

    Application(String appId, long now) {
      this.appId = appId;
      this.lastHeard = now;
    }
  }

  /**
   * Registers the shuffle (and its application) if it is not yet; counts as a heartbeat.
   *
   * @throws IllegalArgumentException naming both shapes when the shuffle is registered with another
   *     shape
   * @throws ServerDecommissionedException while the server is decommissioned or stopping: it takes
   *     no shuffle, not even one it has, so that clients place new data elsewhere (or, when it is
   *     their only server, wait for it to come back)
   */
  public ServerShuffle register(String appId, int shuffleId, ShuffleShape shape) {
    if (admission.isStopping()) {
      throw new ServerDecommissionedException(
          "this server is stopping and takes no new shuffles; place "
              + Ids.shuffle(appId, shuffleId)
              + " on other servers, or wait for this one if it is restarting");
    }
    if (admission.isDecommissioning()) {
      throw new ServerDecommissionedException(
          "this server is being decommissioned and takes no new shuffles; place "
              + Ids.shuffle(appId, shuffleId)
              + " on other servers");
    }
    Application app =
        apps.compute(
            appId,
            (id, existing) -> {
              Application a = existing;
              if (a == null) {
                a = new Application(id, clock.millis());
                state.applicationRegistered(id, null);
              }
              a.lastHeard = clock.millis();
              return a;
            });
    ServerShuffle shuffle =
        app.shuffles.computeIfAbsent(
            shuffleId,
            id -> {
              state.shuffleRegistered(appId, id, shape);
              return new ServerShuffle(appId, id, shape, dirs, state, admission);
            });
    if (!shuffle.shape().equals(shape) && !shuffle.shape().equals(ShuffleShape.UNKNOWN)) {
      throw new IllegalArgumentException(
          shuffle
              + " is registered with "
              + shuffle.shape()
              + "; it cannot be registered again with "
              + shape);
    }
    return shuffle;
  }

  /**
   * Restart: brings back a recorded shuffle (and its application, heard from now), before the
   * server serves; records nothing.
   */
  public ServerShuffle restore(String appId, int shuffleId, ShuffleShape shape) {
    return restoredApplication(appId)
        .shuffles
        .computeIfAbsent(
            shuffleId, id -> new ServerShuffle(appId, id, shape, dirs, state, admission));
  }

  /** Restart: brings back a recorded application and its key, heard from now; records nothing. */
  public void restoreApplication(String appId, byte[] authKey) {
    restoredApplication(appId).authKey = authKey;
  }

  /**
   * Binds the key a coordinator registered for {@code appId}, registering the application if it is
   * not yet (it then expires like any other without heartbeats); counts as a heartbeat.
   *
   * @return false when the application is bound to another key: its id was claimed first
   */
  public boolean bindKey(String appId, byte[] key) {
    boolean[] bound = {false};
    apps.compute(
        appId,
        (id, existing) -> {
          Application a = existing;
          if (a == null) {
            a = new Application(id, clock.millis());
          }
          if (a.authKey == null) {
            a.authKey = key.clone();
            state.applicationRegistered(id, a.authKey);
            bound[0] = true;
          } else {
            bound[0] = MessageDigest.isEqual(a.authKey, key);
          }
          a.lastHeard = clock.millis();
          return a;
        });
    return bound[0];
  }

  /** The key bound for {@code appId}, or null. */
  public byte[] authKey(String appId) {
    Application app = apps.get(appId);
    return app == null ? null : app.authKey;
  }

  private Application restoredApplication(String appId) {
    return apps.computeIfAbsent(appId, id -> new Application(id, clock.millis()));
  }

  /** True when the shuffle is registered; unlike {@link #get}, not a sign of life. */
  public boolean contains(String appId, int shuffleId) {
    Application app = apps.get(appId);
    return app != null && app.shuffles.containsKey(shuffleId);
  }

  /**
   * The shuffle, or null when it is not registered. Every request that names a shuffle comes
   * through here, so it counts as a sign of life of its application, like a heartbeat: an
   * application expires only after {@code sluice.app.timeout} in which nobody (coordinator, writer
   * or reader) sent a request naming it.
   */
  public ServerShuffle get(String appId, int shuffleId) {
    Application app = apps.get(appId);
    if (app == null) {
      return null;
    }
    app.lastHeard = clock.millis();
    return app.shuffles.get(shuffleId);
  }

  /**
   * A reader's report that a committed split or map partition fails its checks: counted against the
   * directory of its file ({@link DataDirectories#checksumFailure}).
   *
   * @return false when there is no such committed file here
   */
  public boolean checksumFailure(ReportChecksumFailure report) {
    if (report.hasMapPartition()) {
      // the application and shuffle are the report's own (app_id, shuffle_id), the one fact
      // authorization checks; the ref only names the map attempt
      MapPartitionRef m = report.getMapPartition();
      return mapPartitionChecksumFailure(
          report.getAppId(),
          report.getShuffleId(),
          m.getMapIndex(),
          m.getAttempt(),
          report.getReason());
    }
    return checksumFailure(
        report.getAppId(),
        report.getShuffleId(),
        report.getPartitionId(),
        report.getEpoch(),
        report.getReason());
  }

  /**
   * A committed file this server found damaged itself (shorter than its commit recorded): counted
   * like a checksum failure against its directory ({@link DataDirectories#checksumFailure}).
   */
  public void damagedFile(Path file, String what) {
    dirs.checksumFailure(file, what);
  }

  /**
   * A reader's report that a committed split fails its checks.
   *
   * @return false when there is no such committed split here
   */
  boolean checksumFailure(String appId, int shuffleId, int partitionId, int epoch, String reason) {
    ServerShuffle shuffle = get(appId, shuffleId);
    CommittedSplitFile file = shuffle == null ? null : shuffle.committedSplit(partitionId, epoch);
    if (file == null) {
      return false;
    }
    String what = reason.length() > 1000 ? reason.substring(0, 1000) + "..." : reason;
    dirs.checksumFailure(
        file.path(),
        "app " + appId + " shuffle " + shuffleId + " partition " + partitionId + ": " + what);
    return true;
  }

  /**
   * A reader's report that a committed map partition's data file fails its checks: counted against
   * its directory ({@link DataDirectories#checksumFailure}).
   *
   * @return false when there is no such committed map partition here
   */
  boolean mapPartitionChecksumFailure(
      String appId, int shuffleId, int mapIndex, int attempt, String reason) {
    ServerShuffle shuffle = get(appId, shuffleId);
    MapPartitionFile file = shuffle == null ? null : shuffle.mapPartition(mapIndex, attempt);
    CommittedMapPartition committed = file == null ? null : file.committed();
    if (committed == null) {
      return false;
    }
    String what = reason.length() > 1000 ? reason.substring(0, 1000) + "..." : reason;
    dirs.checksumFailure(committed.dataPath(), committed.key() + ": " + what);
    return true;
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
    state.shuffleRemoved(appId, shuffleId);
    LOG.info("Unregistered {}; deleting its files", shuffle);
    return shuffle.discard();
  }

  /**
   * Completes when every registration and removal made so far is in the state store (see {@link
   * ShuffleStateListener#recorded}): a registration is answered then.
   */
  public CompletableFuture<Void> recorded() {
    return state.recorded();
  }

  /**
   * Notes that {@code appId} runs in the resource manager's application {@code clusterAppId}
   * (YARN's {@code application_...}), as its shuffle registrations say; an empty one changes
   * nothing.
   */
  public void noteClusterApplication(String appId, String clusterAppId) {
    Application app = apps.get(appId);
    if (app != null && !clusterAppId.isEmpty()) {
      app.clusterAppId = clusterAppId;
    }
  }

  /**
   * The applications that end with the resource manager's application {@code clusterAppId}: the one
   * of that id, its attempts ({@code ID-attempt-N}, as a Spark driver in cluster mode names them),
   * and every application whose registrations named it (a Flink job, {@code flink-JOB}).
   */
  public List<String> applicationsOf(String clusterAppId) {
    List<String> ids = new ArrayList<>();
    for (Application a : apps.values()) {
      if (a.appId.equals(clusterAppId)
          || a.appId.startsWith(clusterAppId + "-attempt-")
          || a.clusterAppId.equals(clusterAppId)) {
        ids.add(a.appId);
      }
    }
    return ids;
  }

  /** Removes an application with all its shuffles and files; a no-op for an unknown one. */
  public CompletableFuture<Void> unregisterApplication(String appId) {
    Application app = apps.remove(appId);
    return app == null ? CompletableFuture.completedFuture(null) : discard(app);
  }

  /** Deletes the shuffles and files of {@code app}, already taken out of {@link #apps}. */
  private CompletableFuture<Void> discard(Application app) {
    String appId = app.appId;
    state.applicationRemoved(appId);
    dirs.closeMemoryAccount(appId);
    List<CompletableFuture<Void>> futures = new ArrayList<>();
    for (ServerShuffle s : app.shuffles.values()) {
      futures.add(s.discard());
    }
    return CompletableFuture.allOf(futures.toArray(new CompletableFuture<?>[0]))
        .thenCompose(v -> dirs.deleteApplicationDirs(appId));
  }

  /**
   * Unregisters every application not heard from for {@code timeoutMillis}.
   *
   * @return completes when their files are deleted
   */
  public CompletableFuture<Void> expire(long timeoutMillis) {
    return expire(timeoutMillis, () -> {});
  }

  /**
   * Like {@link #expire(long)}, running {@code onExpired} once per expired application. An
   * application is taken out only if it is still silent at that instant (atomically with its
   * registrations and heartbeats), so one heard while expiry runs keeps everything it registered.
   */
  public CompletableFuture<Void> expire(long timeoutMillis, Runnable onExpired) {
    List<CompletableFuture<Void>> expired = new ArrayList<>();
    for (String appId : new ArrayList<>(apps.keySet())) {
      Application[] taken = {null};
      apps.computeIfPresent(
          appId,
          (id, a) -> {
            if (clock.millis() - a.lastHeard > timeoutMillis) {
              taken[0] = a;
              return null;
            }
            return a;
          });
      Application app = taken[0];
      if (app != null) {
        LOG.info(
            "Application {} sent no heartbeat for {} ms (sluice.app.timeout {} ms); deleting its"
                + " {} shuffle(s)",
            appId,
            clock.millis() - app.lastHeard,
            timeoutMillis,
            app.shuffles.size());
        onExpired.run();
        expired.add(discard(app));
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
    if (handed < bytesToFree) {
      // then the memory tier, largest first: written to their files, their memory is freed
      List<ReducePartitionSplit> held = heldInMemory(candidates, 0);
      held.sort((a, b) -> Long.compare(b.inMemory().size(), a.inMemory().size()));
      for (ReducePartitionSplit split : held) {
        if (handed >= bytesToFree) {
          break;
        }
        handed += split.inMemory().size();
        split.writeBack();
      }
    }
    return handed;
  }

  /**
   * Writes the memory-tier splits committed at least {@code minAgeNanos} ago to their files (0: all
   * of them, before the server stops).
   *
   * @return completes when they are written; exceptionally when one failed (it stays in memory)
   */
  public CompletableFuture<Void> writeBackMemorySplits(long minAgeNanos) {
    List<ReducePartitionSplit> all = new ArrayList<>();
    for (Application app : apps.values()) {
      for (ServerShuffle s : app.shuffles.values()) {
        s.collectSplits(all);
      }
    }
    List<CompletableFuture<Void>> futures = new ArrayList<>();
    for (ReducePartitionSplit split : heldInMemory(all, minAgeNanos)) {
      futures.add(split.writeBack());
    }
    return CompletableFuture.allOf(futures.toArray(new CompletableFuture<?>[0]));
  }

  private static List<ReducePartitionSplit> heldInMemory(
      List<ReducePartitionSplit> splits, long minAgeNanos) {
    List<ReducePartitionSplit> held = new ArrayList<>();
    for (ReducePartitionSplit split : splits) {
      InMemorySplit m = split.inMemory();
      if (m != null && m.isHeld() && m.ageNanos() >= minAgeNanos) {
        held.add(split);
      }
    }
    return held;
  }

  public int applicationCount() {
    return apps.size();
  }

  /**
   * Map partitions (Flink) being written whose writers sent data after {@code sinceNanos} ({@link
   * System#nanoTime}), over every shuffle.
   */
  public int mapPartitionsBeingWrittenSince(long sinceNanos) {
    int n = 0;
    for (Application app : apps.values()) {
      for (ServerShuffle s : app.shuffles.values()) {
        n += s.mapPartitionsBeingWrittenSince(sinceNanos);
      }
    }
    return n;
  }

  /**
   * Server stop, first step: no new split from now on (pushes for one are answered HARD_SPLIT), and
   * every open split is sealed and committed with all it accepted, and recorded.
   *
   * @return completes, never exceptionally, with the splits committed
   */
  public CompletableFuture<List<CommittedSplitFile>> sealAndCommitOpenSplits() {
    admission.stop();
    return sealAndCommitSplits(true);
  }

  /**
   * Decommission: no new shuffle and no new split from now on (registrations are answered
   * DECOMMISSIONING, pushes for a new split HARD_SPLIT), every open split is sealed and committed
   * with all it accepted, and recorded; map partitions already placed here finish. Reads go on.
   *
   * @return completes, never exceptionally, with the splits committed
   */
  public CompletableFuture<List<CommittedSplitFile>> decommission() {
    admission.decommission(true);
    return sealAndCommitSplits(false);
  }

  /**
   * Takes new shuffles and splits again. The splits committed by the decommission stay committed:
   * their partitions already moved on.
   */
  public void cancelDecommission() {
    admission.decommission(false);
  }

  public boolean isDecommissioning() {
    return admission.isDecommissioning();
  }

  private CompletableFuture<List<CommittedSplitFile>> sealAndCommitSplits(
      boolean sealMapPartitions) {
    List<CompletableFuture<List<CommittedSplitFile>>> futures = new ArrayList<>();
    for (Application app : apps.values()) {
      for (ServerShuffle s : app.shuffles.values()) {
        futures.add(s.sealAndCommitSplits(sealMapPartitions));
      }
    }
    return CompletableFuture.allOf(futures.toArray(new CompletableFuture<?>[0]))
        .thenApply(
            v -> {
              List<CommittedSplitFile> files = new ArrayList<>();
              for (CompletableFuture<List<CommittedSplitFile>> f : futures) {
                files.addAll(f.join());
              }
              return files;
            });
  }

  /**
   * Server stop, last step: deletes the files of splits that are not committed (a commit failed or
   * did not finish in time). Committed files and their records stay.
   */
  public CompletableFuture<Void> discardUncommitted() {
    admission.stop();
    List<CompletableFuture<Void>> futures = new ArrayList<>();
    for (Application app : apps.values()) {
      for (ServerShuffle s : app.shuffles.values()) {
        futures.add(s.discardUncommittedSplits());
      }
    }
    return CompletableFuture.allOf(futures.toArray(new CompletableFuture<?>[0]));
  }

  /** Counts bytes pushed to (taken by) {@code shuffle}; nothing for an unknown application. */
  public void countPushed(ServerShuffle shuffle, long bytes) {
    shuffle.countPushed(bytes);
    Application app = apps.get(shuffle.appId());
    if (app != null) {
      app.pushedBytes.add(bytes);
    }
  }

  /**
   * Bytes of the shuffles of {@code appId} still registered here ({@link
   * ServerShuffle#countedBytes}; 0 for an unknown application): what its stored-bytes limit counts.
   */
  public long storedBytes(String appId) {
    Application app = apps.get(appId);
    long bytes = 0;
    if (app != null) {
      for (ServerShuffle s : app.shuffles.values()) {
        bytes += s.countedBytes();
      }
    }
    return bytes;
  }

  /**
   * Keeps the limits application {@code appId} asked for at its latest registration (nothing for an
   * unknown application).
   */
  public void requestLimits(String appId, RequestedLimits limits) {
    Application app = apps.get(appId);
    if (app != null) {
      app.requestedLimits = limits;
    }
  }

  /**
   * The limits application {@code appId} asked for at its latest registration; none (the default
   * instance) for an unknown application or one restored after a restart and not registered since.
   */
  public RequestedLimits requestedLimits(String appId) {
    Application app = apps.get(appId);
    return app == null ? RequestedLimits.getDefaultInstance() : app.requestedLimits;
  }

  /**
   * Counts bytes of a push of {@code appId} refused for its limit; nothing for an unknown one.
   *
   * @return true for the application's first refusal
   */
  public boolean countRefused(String appId, long bytes) {
    Application app = apps.get(appId);
    if (app == null) {
      return false;
    }
    boolean first = app.refusedBytes.sum() == 0;
    app.refusedBytes.add(bytes);
    return first;
  }

  /** Counts bytes read from a shuffle of {@code appId}; nothing for an unknown one. */
  public void countRead(String appId, long bytes) {
    Application app = apps.get(appId);
    if (app != null) {
      app.readBytes.add(bytes);
    }
  }

  /** What every registered application holds here now, in no particular order. */
  public List<ApplicationInfo> applications() {
    List<ApplicationInfo> list = new ArrayList<>();
    for (Application app : apps.values()) {
      list.add(info(app));
    }
    return list;
  }

  /** What application {@code appId} holds here now, or null when it is not registered. */
  public ApplicationInfo application(String appId) {
    Application app = apps.get(appId);
    return app == null ? null : info(app);
  }

  private ApplicationInfo info(Application app) {
    List<ServerShuffle> shuffles = new ArrayList<>(app.shuffles.values());
    shuffles.sort(Comparator.comparingInt(ServerShuffle::shuffleId));
    return new ApplicationInfo(
        app.appId,
        Math.max(0, clock.millis() - app.lastHeard),
        shuffles,
        app.pushedBytes.sum(),
        app.readBytes.sum(),
        app.refusedBytes.sum());
  }

  /** Shuffles registered now, over every application. */
  public int shuffleCount() {
    int n = 0;
    for (Application app : apps.values()) {
      n += app.shuffles.size();
    }
    return n;
  }
}
