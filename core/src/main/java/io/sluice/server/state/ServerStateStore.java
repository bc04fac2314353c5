package io.sluice.server.state;

import com.codahale.metrics.MetricRegistry;
import com.google.protobuf.InvalidProtocolBufferException;
import io.sluice.auth.AuthCodes;
import io.sluice.common.Ids;
import io.sluice.protocol.MapPartitionId;
import io.sluice.protocol.proto.StateApplication;
import io.sluice.protocol.proto.StateMapPartition;
import io.sluice.protocol.proto.StateShuffle;
import io.sluice.protocol.proto.StateSplit;
import io.sluice.server.storage.CommittedMapPartition;
import io.sluice.server.storage.CommittedSplitFile;
import io.sluice.server.storage.OwnerOnly;
import io.sluice.server.storage.ShuffleShape;
import io.sluice.server.storage.ShuffleStateListener;
import io.sluice.server.storage.SplitKey;
import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.rocksdb.InfoLogLevel;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server's state that survives a restart, in a RocksDB database of its own: registered
 * applications and shuffles, the splits being written, and every committed split's file, length,
 * chunk offsets and map indexes. Key layout and format version: {@link StateKeys}.
 *
 * <p><b>Who writes.</b> One thread of the store's own, {@code sluice-state-writer}, applies every
 * change, in the order they were made: network threads only queue a change and go on (a RocksDB
 * write appends to its log and can stall behind a flush or compaction; no event loop waits for it).
 * The writer also builds each change's batch, so the first push to a split, which queues its record
 * on an event loop while holding its shuffle's lock, makes no call into RocksDB. Commit records are
 * also synced when {@code sluice.commit.fsync} is on. {@link #recorded()} completes when every
 * change queued before it is written (and synced, for commit records): a commit completes only
 * then, so it is answered once its record would survive a power loss like the split file itself,
 * and a registration is answered then, so once answered it survives a crash of the process (kill
 * -9). No thread waits for the store; callers compose on that future.
 *
 * <p>An open split's record is not waited for (pushes are answered without it), and neither it nor
 * a registration is synced: a crash right after the first push to a split, or a power loss, can
 * lose it, and the restarted server would not know that split's data was lost. The coordinator
 * catches exactly that: a commit holding fewer bytes than the servers acknowledged to ended map
 * attempts is reported lost ({@code io.sluice.client.coordinator.CommitCompleteness}).
 *
 * <p><b>Failures.</b> A change that cannot be written is logged, naming the split, and counted in
 * {@code sluice.server.state.writeFailures}; the server goes on serving it, but that data would not
 * survive a restart. Opening a store that another process holds, or of an unknown format version,
 * fails with an error naming the directory.
 *
 * <p>Thread safe. Calls after {@link #close()} record nothing.
 */
public final class ServerStateStore implements ShuffleStateListener, Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(ServerStateStore.class);
  private static final long WRITE_BUFFER_BYTES = 4L << 20;

  private final Path dir;
  private final Options options;
  private final RocksDB db;
  private final WriteOptions writes;
  private final boolean syncCommits;
  private final StateMetrics metrics;
  // applies every change, in order; shut down (after the changes queued) by close()
  private final ExecutorService writer =
      Executors.newSingleThreadExecutor(
          r -> {
            Thread t = new Thread(r, "sluice-state-writer");
            t.setDaemon(true);
            return t;
          });
  private volatile boolean closed;

  private ServerStateStore(
      Path dir, Options options, RocksDB db, boolean syncCommits, StateMetrics metrics) {
    this.dir = dir;
    this.options = options;
    this.db = db;
    this.writes = new WriteOptions();
    this.syncCommits = syncCommits;
    this.metrics = metrics;
  }

  /**
   * Opens (or creates) the store in {@code dir}.
   *
   * @param syncCommits sync commit records to disk ({@code sluice.commit.fsync})
   * @throws IOException naming the directory when it cannot be created, is held by another process,
   *     or holds a store this version cannot read
   */
  public static ServerStateStore open(Path dir, boolean syncCommits, MetricRegistry registry)
      throws IOException {
    try {
      RocksDB.loadLibrary();
    } catch (RuntimeException | UnsatisfiedLinkError e) {
      throw new IOException(
          "Cannot load RocksDB's native library for the state store in " + dir + ": " + e, e);
    }
    try {
      OwnerOnly.directory(dir);
    } catch (IOException e) {
      throw new IOException("Cannot create the state directory " + dir + ": " + e, e);
    }
    Options options =
        new Options()
            .setCreateIfMissing(true)
            .setWriteBufferSize(WRITE_BUFFER_BYTES)
            .setMaxWriteBufferNumber(2)
            .setKeepLogFileNum(2)
            .setInfoLogLevel(InfoLogLevel.WARN_LEVEL);
    RocksDB db;
    try {
      db = RocksDB.open(options, dir.toString());
    } catch (RocksDBException e) {
      options.close();
      throw new IOException(
          "Cannot open the state store in " + dir + " (" + hint(e) + "): " + e.getMessage(), e);
    }
    try {
      checkFormat(db, dir);
    } catch (IOException e) {
      db.close();
      options.close();
      throw e;
    }
    return new ServerStateStore(dir, options, db, syncCommits, new StateMetrics(registry));
  }

  /** What to do about a store RocksDB cannot open: in use, or unreadable. */
  private static String hint(RocksDBException e) {
    String message = String.valueOf(e.getMessage());
    if (message.contains("LOCK") || message.contains("lock")) {
      return "is another Sluice server using it?";
    }
    return "it is damaged, or was written by a newer RocksDB than this server's: to start with an"
        + " empty store, stop the server and move the directory away; the splits it recorded are"
        + " then not served again";
  }

  private static void checkFormat(RocksDB db, Path dir) throws IOException {
    try {
      byte[] format = db.get(StateKeys.FORMAT);
      if (format == null) {
        try (RocksIterator it = db.newIterator()) {
          it.seekToFirst();
          if (it.isValid()) {
            throw new IOException(
                "The state store in "
                    + dir
                    + " has records but no format version (first key '"
                    + StateKeys.string(it.key())
                    + "'); it was not written by Sluice. Move it away to start with an empty one.");
          }
        }
        db.put(StateKeys.FORMAT, StateKeys.version(StateKeys.VERSION));
        return;
      }
      int version;
      try {
        version = StateKeys.readVersion(format);
      } catch (IllegalArgumentException e) {
        throw new IOException("The state store in " + dir + " is damaged: " + e.getMessage(), e);
      }
      if (version != StateKeys.VERSION) {
        throw new IOException(
            "The state store in "
                + dir
                + " has format version "
                + version
                + "; this server reads version "
                + StateKeys.VERSION
                + ". Start the Sluice version that wrote it, or move the directory away to start"
                + " with an empty one (its committed shuffle data is then deleted).");
      }
    } catch (RocksDBException e) {
      throw new IOException("Cannot read the state store in " + dir + ": " + e.getMessage(), e);
    }
  }

  public Path directory() {
    return dir;
  }

  /**
   * Reads every record, after the changes queued before the call are written (it waits: at start
   * and in tests, never on a network thread). Records that do not parse are logged, deleted and
   * left out.
   *
   * @throws IOException naming the directory when the database cannot be read
   */
  public RecoveredState load() throws IOException {
    recorded().join(); // every change made before reads back
    RecoveredState state = new RecoveredState();
    try (RocksIterator it = db.newIterator()) {
      for (it.seekToFirst(); it.isValid(); it.next()) {
        byte[] key = it.key();
        String name = StateKeys.string(key);
        try {
          readRecord(state, name, it.value());
        } catch (InvalidProtocolBufferException | IllegalArgumentException e) {
          LOG.error(
              "State store {}: record '{}' is damaged and is dropped: {}", dir, name, e.toString());
          db.delete(key);
        }
      }
      it.status();
    } catch (RocksDBException e) {
      throw new IOException("Cannot read the state store in " + dir + ": " + e.getMessage(), e);
    }
    return state;
  }

  private void readRecord(RecoveredState state, String key, byte[] value)
      throws InvalidProtocolBufferException {
    if (key.startsWith(StateKeys.APP)) {
      StateApplication app = StateApplication.parseFrom(value);
      String appId = Ids.checkAppId(app.getAppId());
      byte[] authKey = app.getAuthKey().isEmpty() ? null : app.getAuthKey().toByteArray();
      if (authKey != null && authKey.length != AuthCodes.SEALED_AT_REST_BYTES) {
        LOG.warn(
            "State store {}: the key of application {} was recorded unsealed by an earlier"
                + " version and is dropped; its coordinator's next registration binds it again",
            dir,
            appId);
        authKey = null;
      }
      state.addApplication(appId, authKey);
    } else if (key.startsWith(StateKeys.SHUFFLE)) {
      StateShuffle s = StateShuffle.parseFrom(value);
      state.markStageCommitted(
          Ids.checkAppId(s.getAppId()),
          s.getShuffleId(),
          s.getCommitted(),
          ShuffleShape.recorded(s.getNumMaps(), s.getNumPartitions()));
    } else if (key.startsWith(StateKeys.OPEN)) {
      state.addOpenSplit(splitKey(StateSplit.parseFrom(value)));
    } else if (key.startsWith(StateKeys.MAP)) {
      StateMapPartition m = StateMapPartition.parseFrom(value);
      Ids.checkAppId(m.getAppId());
      state.addMapPartition(m);
    } else if (key.startsWith(StateKeys.SPLIT)) {
      StateSplit split = StateSplit.parseFrom(value);
      splitKey(split);
      state.addCommittedSplit(split);
    } else if (!key.equals(StateKeys.string(StateKeys.FORMAT))) {
      throw new IllegalArgumentException("unknown key prefix");
    }
  }

  private static SplitKey splitKey(StateSplit s) {
    return new SplitKey(
        Ids.checkAppId(s.getAppId()), s.getShuffleId(), s.getPartitionId(), s.getEpoch());
  }

  private static StateSplit keyOnly(SplitKey key) {
    return StateSplit.newBuilder()
        .setAppId(key.appId())
        .setShuffleId(key.shuffleId())
        .setPartitionId(key.partitionId())
        .setEpoch(key.epoch())
        .build();
  }

  @Override
  public void applicationRegistered(String appId, byte[] authKey) {
    StateApplication.Builder record = StateApplication.newBuilder().setAppId(appId);
    if (authKey != null) {
      record.setAuthKey(com.google.protobuf.ByteString.copyFrom(authKey));
    }
    write(
        () -> "register application " + appId,
        false,
        batch -> batch.put(StateKeys.app(appId), record.build().toByteArray()));
  }

  private static byte[] shuffleRecord(
      String appId, int shuffleId, ShuffleShape shape, boolean committed) {
    return StateShuffle.newBuilder()
        .setAppId(appId)
        .setShuffleId(shuffleId)
        .setCommitted(committed)
        .setNumMaps(shape.numMaps())
        .setNumPartitions(shape.numPartitions())
        .build()
        .toByteArray();
  }

  @Override
  public void shuffleRegistered(String appId, int shuffleId, ShuffleShape shape) {
    write(
        () -> "register " + Ids.shuffle(appId, shuffleId),
        false,
        batch ->
            batch.put(
                StateKeys.shuffle(appId, shuffleId),
                shuffleRecord(appId, shuffleId, shape, false)));
  }

  @Override
  public void splitOpened(SplitKey key) {
    write(
        () -> "record the new split " + key,
        false,
        batch -> batch.put(StateKeys.openSplit(key), keyOnly(key).toByteArray()));
  }

  @Override
  public void splitCommitted(CommittedSplitFile file) {
    SplitKey key = file.key();
    StateSplit record =
        keyOnly(key).toBuilder()
            .setPath(file.path().toString())
            .setLength(file.length())
            .addAllChunkOffsets(file.chunkOffsets())
            .addAllMapRuns(MapRuns.toList(file.mapIndexes()))
            .setRemotePath(file.remotePath() == null ? "" : file.remotePath())
            .build();
    write(
        () ->
            "record the commit of "
                + key
                + " (file "
                + (file.remotePath() == null ? file.path() : file.remotePath())
                + ")",
        true,
        batch -> {
          batch.delete(StateKeys.openSplit(key));
          batch.put(StateKeys.committedSplit(key), record.toByteArray());
        });
  }

  @Override
  public void mapPartitionCommitted(CommittedMapPartition partition) {
    MapPartitionId key = partition.key();
    StateMapPartition record =
        StateMapPartition.newBuilder()
            .setAppId(key.appId())
            .setShuffleId(key.shuffleId())
            .setMapIndex(key.mapIndex())
            .setAttempt(key.attempt())
            .setDataPath(partition.dataPath().toString())
            .setIndexPath(partition.indexPath().toString())
            .setNumSubpartitions(partition.numSubpartitions())
            .setNumRegions(partition.numRegions())
            .setLength(partition.length())
            .build();
    write(
        () -> "record the commit of " + key,
        true,
        batch -> batch.put(StateKeys.mapPartition(key), record.toByteArray()));
  }

  @Override
  public void mapPartitionRemoved(MapPartitionId key) {
    write(() -> "remove " + key, false, batch -> batch.delete(StateKeys.mapPartition(key)));
  }

  @Override
  public void shuffleCommitted(String appId, int shuffleId, ShuffleShape shape) {
    write(
        () -> "record the commit of " + Ids.shuffle(appId, shuffleId),
        true,
        batch ->
            batch.put(
                StateKeys.shuffle(appId, shuffleId), shuffleRecord(appId, shuffleId, shape, true)));
  }

  @Override
  public void shuffleRemoved(String appId, int shuffleId) {
    write(
        () -> "remove " + Ids.shuffle(appId, shuffleId),
        false,
        batch -> {
          batch.delete(StateKeys.shuffle(appId, shuffleId));
          for (String prefix : new String[] {StateKeys.OPEN, StateKeys.SPLIT, StateKeys.MAP}) {
            batch.deleteRange(
                StateKeys.shuffleStart(prefix, appId, shuffleId),
                StateKeys.shuffleEnd(prefix, appId, shuffleId));
          }
        });
  }

  @Override
  public void applicationRemoved(String appId) {
    write(
        () -> "remove application " + appId,
        false,
        batch -> {
          batch.delete(StateKeys.app(appId));
          for (String prefix :
              new String[] {StateKeys.SHUFFLE, StateKeys.OPEN, StateKeys.SPLIT, StateKeys.MAP}) {
            batch.deleteRange(
                StateKeys.applicationStart(prefix, appId), StateKeys.applicationEnd(prefix, appId));
          }
        });
  }

  /**
   * Recovery: the committed file of {@code key} is gone or damaged. Its record becomes an open one,
   * so the shuffle stays known to have lost data across further restarts.
   */
  void splitLost(SplitKey key) {
    write(
        () -> "record the loss of " + key,
        true,
        batch -> {
          batch.delete(StateKeys.committedSplit(key));
          batch.put(StateKeys.openSplit(key), keyOnly(key).toByteArray());
        });
  }

  StateMetrics metrics() {
    return metrics;
  }

  /** Fills one atomic batch. */
  private interface BatchFiller {
    void fill(WriteBatch batch) throws RocksDBException;
  }

  /**
   * Queues one atomic change for the writer thread; a {@code commit} change is also synced when
   * {@code sluice.commit.fsync} is on. Never waits: a caller that needs the change durable composes
   * on {@link #recorded()}.
   */
  private void write(Supplier<String> what, boolean commit, BatchFiller filler) {
    try {
      writer.execute(() -> apply(what, commit, filler));
    } catch (RejectedExecutionException e) {
      LOG.warn("State store {} is closed; cannot {}", dir, what.get());
      metrics.writeFailures().inc();
    }
  }

  /**
   * On the writer thread: builds the change and writes it (and syncs the log for a commit). The
   * batch is built here, not by the caller, so a push that opens a split (on an event loop, under
   * its shuffle's lock) only queues its record.
   */
  private void apply(Supplier<String> what, boolean commit, BatchFiller filler) {
    if (closed) {
      LOG.warn("State store {} is closed; cannot {}", dir, what.get());
      metrics.writeFailures().inc();
      return;
    }
    try (WriteBatch batch = new WriteBatch()) {
      filler.fill(batch);
      db.write(writes, batch);
      if (commit && syncCommits) {
        db.syncWal();
      }
      metrics.writes().mark();
    } catch (RocksDBException e) {
      failed(what.get(), e);
    }
  }

  private void failed(String what, RocksDBException e) {
    metrics.writeFailures().inc();
    LOG.error(
        "State store {}: cannot {}; it will not survive a restart: {}", dir, what, e.toString());
  }

  /**
   * Completes when every change queued before this call is in the store's log (so it survives a
   * crash of the process); at once when the store is closed.
   */
  @Override
  public CompletableFuture<Void> recorded() {
    CompletableFuture<Void> done = new CompletableFuture<>();
    try {
      writer.execute(() -> done.complete(null));
    } catch (RejectedExecutionException e) {
      done.complete(null);
    }
    return done;
  }

  /** Flushes and closes the database. Idempotent. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    // the changes queued so far are written first
    writer.shutdown();
    try {
      if (!writer.awaitTermination(1, TimeUnit.MINUTES)) {
        LOG.warn("State store {}: changes still queued after a minute are dropped", dir);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    closed = true;
    writer.shutdownNow();
    try {
      db.syncWal();
    } catch (RocksDBException e) {
      LOG.warn("State store {}: syncing the log at close failed: {}", dir, e.toString());
    }
    db.close();
    writes.close();
    options.close();
  }

  @Override
  public String toString() {
    return dir.toString();
  }
}
