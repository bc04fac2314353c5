package io.sluice.server.storage;

import io.netty.buffer.ByteBuf;
import io.sluice.protocol.MapBlockFormat;
import io.sluice.protocol.MapPartitionId;
import io.sluice.protocol.PartitionRecords;
import io.sluice.server.ServerMetrics;
import io.sluice.server.memory.MemoryAccount;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A map partition being written: one data file and one index file ({@link MapPartitionIndex}) in
 * {@code <dir>/<appId>/<shuffleId>/}, named {@code map-<mapIndex>-<attempt>.data} and {@code
 * .index}, with an {@code .inprogress} suffix until the commit renames them.
 *
 * <p>The writer sends regions in order: start, data frames, finish. Each data frame's blocks are
 * checked (subpartitions in range and non-decreasing within a region) and their offsets recorded;
 * at the region's finish its index record is appended. Frames are written in arrival order on the
 * partition's flusher thread, which releases each frame and its memory reservation once written.
 *
 * <p>A failed write fails the partition: later frames and the commit are refused naming the
 * failure, and the engine reruns the producer. Thread safe.
 *
 * <p><b>Memory.</b> The open region's bookkeeping ({@link RegionEntries}: where each subpartition
 * with data lies) grows with the blocks the region takes, not with the subpartitions its writer
 * claims, and its growth is reserved in the memory budget with the frame that needs it: a frame
 * whose bookkeeping does not fit is refused ({@link #append} returns false) like a frame that does
 * not fit. At the region's finish the bookkeeping, still reserved, goes to the flusher, which
 * writes the region's full index record from it a piece at a time and then releases it: so open
 * partitions and the index records queued for the flusher stay within {@code sluice.memory.max},
 * and a writer that opens regions of many subpartitions without data holds next to nothing. A
 * partition keeps no bookkeeping between regions, after its commit or once dropped. At most {@link
 * #MAX_EMPTY_REGIONS} regions without data are taken per partition: each costs a full index record
 * on disk.
 */
public final class MapPartitionFile {
  private static final Logger LOG = LoggerFactory.getLogger(MapPartitionFile.class);
  static final String IN_PROGRESS_SUFFIX = ".inprogress";

  /**
   * Regions without data one partition may finish. Each still writes an index record of 16 bytes
   * per subpartition (1 MiB at 65,536), so empty regions are bounded well below {@code
   * RequestLimits.MAX_REGIONS}.
   */
  public static final int MAX_EMPTY_REGIONS = 16;

  private enum State {
    WRITING,
    COMMITTING,
    COMMITTED,
    DISCARDED
  }

  private final MapPartitionId key;
  private final int numSubpartitions;
  private final DataDirectory dir;
  private final DataDirectories dirs;
  private final Executor flusher;
  private final MemoryAccount memory;
  private final ServerMetrics metrics;
  private final boolean fsync;

  // guarded by this
  private State state = State.WRITING;
  private boolean sealed;
  private int regionsFinished;
  private boolean regionOpen;
  private boolean regionBroadcast;
  private long regionStart;
  private int lastSubpartition;

  /** Where the open region's subpartitions lie; null when no region is open. */
  private RegionEntries entries;

  /** Bytes of the budget {@link #entries} holds. */
  private long entriesHeld;

  private int emptyRegions;
  private long lastWriteNanos = System.nanoTime();
  private long accepted;
  private int nextSequence;
  private String failure;
  private CompletableFuture<CommittedMapPartition> commit;
  private CommittedMapPartition committed;

  /**
   * What the writer reported per subpartition at commit (CommitMapPartition.subpartition_records),
   * handed to readers; null when it reported none. Kept in memory only: after a restart the
   * restored partition has none and its readers do not compare.
   */
  private volatile PartitionRecords records;

  // flusher thread only
  private FileChannel data;
  private FileWriteback dataWriteback;
  private FileChannel index;

  public MapPartitionFile(
      MapPartitionId key,
      int numSubpartitions,
      DataDirectory dir,
      DataDirectories dirs,
      MemoryAccount memory,
      ServerMetrics metrics,
      boolean fsync) {
    if (numSubpartitions < 1) {
      throw new IllegalArgumentException(
          key + " must have at least one subpartition, got " + numSubpartitions);
    }
    this.key = key;
    this.numSubpartitions = numSubpartitions;
    this.dir = dir;
    this.dirs = dirs;
    this.flusher = dir.assignFlusher();
    this.memory = memory;
    this.metrics = metrics;
    this.fsync = fsync;
  }

  /** Restart: a partition committed before the server stopped, whose files were found whole. */
  static MapPartitionFile restored(
      CommittedMapPartition committed,
      DataDirectory dir,
      DataDirectories dirs,
      MemoryAccount memory,
      ServerMetrics metrics) {
    MapPartitionFile f =
        new MapPartitionFile(
            committed.key(), committed.numSubpartitions(), dir, dirs, memory, metrics, false);
    synchronized (f) {
      f.state = State.COMMITTED;
      f.committed = committed;
      f.regionsFinished = committed.numRegions();
      f.accepted = committed.length();
      f.commit = CompletableFuture.completedFuture(committed);
    }
    return f;
  }

  /** Bytes this map partition took, on disk or buffered. */
  public synchronized long acceptedBytes() {
    return accepted;
  }

  public MapPartitionId key() {
    return key;
  }

  public int numSubpartitions() {
    return numSubpartitions;
  }

  private Path path(String suffix) {
    return dir.root()
        .resolve(key.appId())
        .resolve(Integer.toString(key.shuffleId()))
        .resolve("map-" + key.mapIndex() + "-" + key.attempt() + suffix);
  }

  /**
   * Opens region {@code regionIndex}; it holds no memory until its blocks come.
   *
   * @throws IllegalArgumentException naming the partition when regions come out of order, the
   *     subpartition count differs from the first region's, or the partition takes no more data
   */
  public synchronized void startRegion(int regionIndex, int subpartitions, boolean broadcast) {
    checkWritable();
    if (subpartitions != numSubpartitions) {
      throw new IllegalArgumentException(
          key + " has " + numSubpartitions + " subpartitions, region claims " + subpartitions);
    }
    if (regionOpen || regionIndex != regionsFinished) {
      throw new IllegalArgumentException(
          "region "
              + regionIndex
              + " of "
              + key
              + " started out of order: "
              + regionsFinished
              + " regions finished"
              + (regionOpen ? " and region " + regionsFinished + " still open" : ""));
    }
    entries = new RegionEntries();
    entriesHeld = 0;
    lastWriteNanos = System.nanoTime();
    regionOpen = true;
    regionBroadcast = broadcast;
    regionStart = accepted;
    lastSubpartition = 0;
  }

  /**
   * Whether frame {@code sequence} is the next one. A later frame means an earlier one was refused
   * (CONGESTED) and is being sent again: refuse it too, so frames are stored in order.
   *
   * @throws IllegalArgumentException when the frame was already taken
   */
  public synchronized boolean isNextFrame(int sequence) {
    if (sequence < nextSequence) {
      throw new IllegalArgumentException(
          "frame " + sequence + " of " + key + " was already taken (next is " + nextSequence + ")");
    }
    return sequence == nextSequence;
  }

  /**
   * Appends frame {@code sequence} of blocks, whose size is already reserved in the memory budget.
   * On success the partition owns the body and its reservation; on false (the region's bookkeeping
   * for the frame does not fit in the budget: send it again) or an exception the caller keeps both.
   *
   * @throws IllegalArgumentException naming the partition and the problem when the frame is
   *     malformed, out of order or the partition takes no more data
   */
  public synchronized boolean append(int regionIndex, int sequence, ByteBuf body) {
    checkWritable();
    if (sequence != nextSequence) {
      throw new IllegalArgumentException(
          "frame " + sequence + " of " + key + " out of order: expected " + nextSequence);
    }
    if (!regionOpen || regionIndex != regionsFinished) {
      throw new IllegalArgumentException(
          "data for region " + regionIndex + " of " + key + ", which is not the open region");
    }
    // one pass over the headers both checks the frame and indexes it; a malformed frame leaves
    // the region's index half-updated, so it fails the partition (its writer is broken anyway)
    long base = accepted;
    entries.mark();
    int lastBefore = lastSubpartition;
    String problem;
    try {
      problem =
          MapBlockFormat.check(
              body,
              numSubpartitions,
              (offset, sub, kind, raw, length) ->
                  indexBlock(regionIndex, base + offset, sub, length));
    } catch (IllegalArgumentException e) {
      problem = e.getMessage();
    } catch (NoRoomForBookkeeping e) {
      entries.rollBack();
      lastSubpartition = lastBefore;
      return false;
    }
    if (problem != null) {
      failure = "malformed region data: " + problem;
      releaseOpenRegion();
      throw new IllegalArgumentException("malformed region data for " + key + ": " + problem);
    }
    int bytes = body.readableBytes();
    memory.adopt(bytes); // the decoder reserved it; it is now this partition's application's
    accepted += bytes;
    nextSequence++;
    lastWriteNanos = System.nanoTime();
    flusher.execute(() -> writeData(body, bytes));
    return true;
  }

  /** The budget has no room for the bookkeeping of a frame's blocks. */
  private static final class NoRoomForBookkeeping extends RuntimeException {
    private static final long serialVersionUID = 1L;

    NoRoomForBookkeeping() {
      super(null, null, false, false);
    }
  }

  /** Caller holds the lock. Records one block of the open region in its index. */
  private void indexBlock(int regionIndex, long offset, int sub, int length) {
    if (regionBroadcast) {
      return;
    }
    if (sub < lastSubpartition) {
      throw new IllegalArgumentException(
          "blocks of region "
              + regionIndex
              + " go back from subpartition "
              + lastSubpartition
              + " to "
              + sub);
    }
    lastSubpartition = sub;
    if (!entries.continuesLast(sub)) {
      long growth = entries.growthForNewEntry();
      if (growth > 0) {
        if (!memory.tryReserve(growth)) {
          throw new NoRoomForBookkeeping();
        }
        entriesHeld += growth;
      }
    }
    entries.add(sub, offset, MapBlockFormat.HEADER_SIZE + length);
  }

  /**
   * Closes the open region and queues its index record; the region's bookkeeping and its
   * reservation go to the flusher, which releases them once the record is written.
   *
   * @throws IllegalArgumentException naming the partition and the limit when the region is not the
   *     open one, or is empty and the partition already finished {@link #MAX_EMPTY_REGIONS} empty
   *     regions; the region stays open
   */
  public synchronized void finishRegion(int regionIndex) {
    checkWritable();
    if (!regionOpen || regionIndex != regionsFinished) {
      throw new IllegalArgumentException(
          "finish of region " + regionIndex + " of " + key + ", which is not the open region");
    }
    boolean empty = accepted == regionStart;
    if (empty && emptyRegions >= MAX_EMPTY_REGIONS) {
      throw new IllegalArgumentException(
          "region "
              + regionIndex
              + " of "
              + key
              + " has no data, and "
              + emptyRegions
              + " empty regions were finished already: at most"
              + " MapPartitionFile.MAX_EMPTY_REGIONS ("
              + MAX_EMPTY_REGIONS
              + ") are taken per map partition");
    }
    if (empty) {
      emptyRegions++;
    }
    RegionEntries region = entries;
    long reserved = entriesHeld;
    long start = regionStart;
    long end = accepted;
    boolean broadcast = regionBroadcast;
    entries = null;
    entriesHeld = 0;
    regionOpen = false;
    regionsFinished++;
    flusher.execute(
        () -> {
          try {
            writeIndex(region, start, end, broadcast);
          } finally {
            memory.release(reserved);
          }
        });
  }

  /** Caller holds the lock. Gives back the open region's bookkeeping, if any. */
  private void releaseOpenRegion() {
    if (entries != null) {
      entries = null;
      regionOpen = false;
      memory.release(entriesHeld);
      entriesHeld = 0;
    }
  }

  private void checkWritable() {
    if (state != State.WRITING) {
      throw new IllegalArgumentException(
          key + " is " + state.name().toLowerCase() + "; no more data");
    }
    if (sealed) {
      throw new IllegalArgumentException(key + " takes no more data: the server is stopping");
    }
    if (failure != null) {
      throw new IllegalArgumentException(key + " failed and takes no more data: " + failure);
    }
  }

  /**
   * Flushes, fsyncs, closes and renames the files. Idempotent. Fails naming the partition when a
   * region is still open, the region count differs from {@code numRegions} or a write failed.
   */
  public synchronized CompletableFuture<CommittedMapPartition> commit(int numRegions) {
    if (commit != null) {
      return commit;
    }
    commit = new CompletableFuture<>();
    CompletableFuture<CommittedMapPartition> result = commit;
    if (state != State.WRITING) {
      result.completeExceptionally(new IOException(key + " was dropped before its commit"));
      return result;
    }
    if (regionOpen || numRegions != regionsFinished) {
      result.completeExceptionally(
          new IllegalArgumentException(
              "cannot commit "
                  + key
                  + " with "
                  + numRegions
                  + " regions: the server finished "
                  + regionsFinished
                  + (regionOpen ? " and one is still open" : "")));
      return result;
    }
    state = State.COMMITTING;
    long length = accepted;
    flusher.execute(
        () -> {
          try {
            result.complete(finishFiles(numRegions, length));
          } catch (IOException | RuntimeException e) {
            result.completeExceptionally(e);
          }
        });
    return result;
  }

  /** The committed partition, or null when it is not committed. */
  /** Records the writer's integrity records, sent with the commit. */
  public void setRecords(PartitionRecords records) {
    this.records = records;
  }

  /** The writer's integrity records, or null when it reported none. */
  public PartitionRecords records() {
    return records;
  }

  public synchronized CommittedMapPartition committed() {
    return committed;
  }

  public synchronized boolean isCommitted() {
    return state == State.COMMITTED;
  }

  /**
   * Whether its writer is at it: it is being written or committed, and its writer sent a region or
   * a frame after {@code sinceNanos} ({@link System#nanoTime}).
   */
  public synchronized boolean isBeingWrittenSince(long sinceNanos) {
    return (state == State.WRITING || state == State.COMMITTING)
        && lastWriteNanos - sinceNanos >= 0;
  }

  /** Server stop: no more data; what is not committed is dropped. */
  public synchronized void seal() {
    sealed = true;
  }

  /** Flusher thread. */
  private CommittedMapPartition finishFiles(int numRegions, long length) throws IOException {
    stopWriteback(); // a writeback that failed has failed the partition when this returns
    String failed;
    synchronized (this) {
      failed = failure;
    }
    if (failed != null) {
      closeFiles();
      throw new IOException("cannot commit " + key + ": " + failed);
    }
    FileChannel d = dataChannel();
    FileChannel i = indexChannel();
    if (fsync) {
      d.force(true);
      i.force(true);
    }
    closeFiles();
    DurableRename.rename(path(".data" + IN_PROGRESS_SUFFIX), path(".data"), false);
    DurableRename.rename(path(".index" + IN_PROGRESS_SUFFIX), path(".index"), fsync);
    CommittedMapPartition c =
        new CommittedMapPartition(
            key, path(".data"), path(".index"), numSubpartitions, numRegions, length, dir);
    synchronized (this) {
      if (state == State.DISCARDED) {
        throw new IOException(key + " was dropped during its commit");
      }
      state = State.COMMITTED;
      committed = c;
    }
    dirs.mapPartitionWritten(memory);
    return c;
  }

  /** Flusher thread: writes one frame, then releases it and its reservation. */
  private void writeData(ByteBuf body, int bytes) {
    try {
      if (isDroppedOrFailed()) {
        return;
      }
      FileChannel ch = dataChannel();
      ByteBuffer[] nio = body.nioBuffers();
      long written = 0;
      while (written < bytes) {
        written += ch.write(nio);
      }
      metrics.bytesFlushed().mark(bytes);
      dir.bytesFlushed().mark(bytes);
      dataWriteback.written(bytes);
    } catch (IOException e) {
      fail("writing " + path(".data" + IN_PROGRESS_SUFFIX) + " failed: " + e, e);
    } finally {
      body.release();
      memory.release(bytes);
    }
  }

  /** Flusher thread. */
  /** Writes a finished region's index record, {@code [start, end)} of the data file. */
  private void writeIndex(RegionEntries region, long start, long end, boolean broadcast) {
    try {
      if (isDroppedOrFailed()) {
        return;
      }
      region.writeRecord(indexChannel(), numSubpartitions, start, end, broadcast);
    } catch (IOException e) {
      fail("writing " + path(".index" + IN_PROGRESS_SUFFIX) + " failed: " + e, e);
    }
  }

  private void fail(String reason, IOException cause) {
    synchronized (this) {
      if (failure == null) {
        failure = reason;
      }
      releaseOpenRegion(); // a failed partition takes no more regions
      if (state == State.DISCARDED) {
        return; // released while written: its files went on purpose
      }
    }
    LOG.error("{} failed: {}", key, reason);
    dirs.failed(dir, reason, cause);
  }

  private FileChannel dataChannel() throws IOException {
    if (data == null) {
      Path file = path(".data" + IN_PROGRESS_SUFFIX);
      data = create(file);
      dataWriteback =
          dir.writeback().track(data, file, e -> fail("writing back " + file + " failed: " + e, e));
    }
    return data;
  }

  /**
   * Flusher thread. Stops the data file's writeback, waiting for a running one. (The index file is
   * a few bytes per region: the commit's fsync of it has nothing to get ahead of.)
   */
  private void stopWriteback() {
    if (dataWriteback != null) {
      dataWriteback.stop();
      dataWriteback = null;
    }
  }

  private FileChannel indexChannel() throws IOException {
    if (index == null) {
      index = create(path(".index" + IN_PROGRESS_SUFFIX));
      ByteBuffer header = MapPartitionIndex.header(numSubpartitions);
      while (header.hasRemaining()) {
        index.write(header);
      }
    }
    return index;
  }

  private static FileChannel create(Path path) throws IOException {
    return OwnerOnly.createFile(path, false);
  }

  private synchronized boolean isDroppedOrFailed() {
    return state == State.DISCARDED || failure != null;
  }

  private void closeFiles() {
    stopWriteback();
    for (FileChannel ch : new FileChannel[] {data, index}) {
      if (ch != null) {
        try {
          ch.close();
        } catch (IOException e) {
          LOG.warn("Closing a file of {} failed: {}", key, e.toString());
        }
      }
    }
    data = null;
    index = null;
  }

  /**
   * Drops the partition: closes its files for readers and deletes them (after the writes already
   * queued). Idempotent.
   */
  public CompletableFuture<Void> discard() {
    CommittedMapPartition c;
    synchronized (this) {
      if (state == State.DISCARDED) {
        return CompletableFuture.completedFuture(null);
      }
      if (state != State.COMMITTED) {
        dirs.mapPartitionWritten(memory); // it was being written: one writer less
      }
      state = State.DISCARDED;
      releaseOpenRegion();
      c = committed;
    }
    if (c != null) {
      c.close();
    }
    CompletableFuture<Void> done = new CompletableFuture<>();
    flusher.execute(
        () -> {
          closeFiles();
          for (String suffix :
              new String[] {
                ".data", ".index", ".data" + IN_PROGRESS_SUFFIX, ".index" + IN_PROGRESS_SUFFIX
              }) {
            try {
              Files.deleteIfExists(path(suffix));
            } catch (IOException e) {
              LOG.warn("Could not delete {}: {}", path(suffix), e.toString());
            }
          }
          done.complete(null);
        });
    return done;
  }

  @Override
  public String toString() {
    return key.toString();
  }
}
