package io.sluice.server.state;

import io.sluice.protocol.MapPartitionId;
import io.sluice.protocol.MapRunIndex;
import io.sluice.protocol.proto.StateMapPartition;
import io.sluice.protocol.proto.StateSplit;
import io.sluice.server.storage.CommittedMapPartition;
import io.sluice.server.storage.DataDirectories;
import io.sluice.server.storage.DataDirectory;
import io.sluice.server.storage.MapIndexSet;
import io.sluice.server.storage.MapPartitionIndex;
import io.sluice.server.storage.ServerShuffle;
import io.sluice.server.storage.ShuffleRegistry;
import io.sluice.server.storage.SplitKey;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Brings a starting server back to what its state store recorded, before it serves: every
 * application and shuffle is registered again (heard from now, so one whose coordinator is gone
 * expires after {@code sluice.app.timeout}); every committed split whose file is still there,
 * whole, is served again; a record whose file is gone, damaged or outside the data directories is
 * dropped and its shuffle marked as having lost data, like a shuffle whose split was still being
 * written (a crash); split files no record refers to are deleted.
 */
public final class StateRecovery {
  private static final Logger LOG = LoggerFactory.getLogger(StateRecovery.class);

  /** What a recovery found and did. */
  public static final class Summary {
    private int applications;
    private int shuffles;
    private int splits;
    private long bytes;
    private int droppedSplits;
    private int mapPartitions;
    private int droppedMapPartitions;
    private int lostShuffles;
    private int deletedFiles;
    private long millis;

    public int applications() {
      return applications;
    }

    public int shuffles() {
      return shuffles;
    }

    /** Committed splits served again. */
    public int splits() {
      return splits;
    }

    public long bytes() {
      return bytes;
    }

    /** Records of committed splits whose files were gone or damaged. */
    public int droppedSplits() {
      return droppedSplits;
    }

    /** Committed map partitions (Flink) served again. */
    public int mapPartitions() {
      return mapPartitions;
    }

    /** Records of map partitions whose files were gone or damaged (their producers rerun). */
    public int droppedMapPartitions() {
      return droppedMapPartitions;
    }

    /** Shuffles that lost acknowledged data; their stage commit fails. */
    public int lostShuffles() {
      return lostShuffles;
    }

    /** Split files no record referred to. */
    public int deletedFiles() {
      return deletedFiles;
    }

    public long millis() {
      return millis;
    }

    @Override
    public String toString() {
      return String.format(
          "%d application(s), %d shuffle(s), %d committed split(s) of %d bytes, %d map"
              + " partition(s); dropped %d split and %d map partition record(s) whose files were"
              + " gone or damaged; %d shuffle(s) lost data; deleted %d unreferenced file(s); took"
              + " %d ms",
          applications,
          shuffles,
          splits,
          bytes,
          mapPartitions,
          droppedSplits,
          droppedMapPartitions,
          lostShuffles,
          deletedFiles,
          millis);
    }
  }

  private StateRecovery() {}

  /**
   * Restores {@code registry} from {@code store} and deletes the files nothing refers to.
   *
   * @throws IOException naming the state directory when it cannot be read
   */
  public static Summary recover(
      ServerStateStore store, ShuffleRegistry registry, DataDirectories dirs) throws IOException {
    long start = System.nanoTime();
    Summary summary = new Summary();
    RecoveredState state = store.load();
    Set<Path> keep = new HashSet<>();
    Set<String> keepRemote = new HashSet<>();
    for (String appId : state.applications()) {
      registry.restoreApplication(appId, state.authKey(appId));
      summary.applications++;
    }
    for (RecoveredState.Shuffle recorded : state.shuffles()) {
      ServerShuffle shuffle =
          registry.restore(recorded.appId(), recorded.shuffleId(), recorded.shape());
      summary.shuffles++;
      List<String> losses = new ArrayList<>();
      for (SplitKey open : recorded.openSplits()) {
        losses.add(
            "partition "
                + open.partitionId()
                + " epoch "
                + open.epoch()
                + " was not committed when the server stopped");
      }
      for (StateSplit split : recorded.committedSplits()) {
        SplitKey key =
            new SplitKey(
                split.getAppId(), split.getShuffleId(), split.getPartitionId(), split.getEpoch());
        Path path = Paths.get(split.getPath()).toAbsolutePath().normalize();
        String problem = problemWith(split, path, dirs);
        if (problem != null) {
          LOG.warn("Dropping the committed {} recorded in {}: {}", key, store, problem);
          store.splitLost(key);
          store.metrics().droppedSplits().inc();
          summary.droppedSplits++;
          losses.add("partition " + key.partitionId() + " epoch " + key.epoch() + ": " + problem);
          continue;
        }
        String remote = split.getRemotePath().isEmpty() ? null : split.getRemotePath();
        shuffle.restoreCommittedSplit(
            key,
            path,
            split.getLength(),
            split.getChunkOffsetsList(),
            split.getMapRunsCount() > 0 || split.getMapIndexes().isEmpty()
                ? MapIndexSet.fromRuns(MapRuns.toArray(split.getMapRunsList()))
                : MapIndexSet.of(BitSet.valueOf(split.getMapIndexes().toByteArray())),
            remote);
        if (remote == null) {
          keep.add(path);
        } else {
          keepRemote.add(remote);
        }
        store.metrics().recoveredSplits().inc();
        summary.splits++;
        summary.bytes += split.getLength();
      }
      for (StateMapPartition m : recorded.mapPartitions()) {
        if (restoreMapPartition(m, shuffle, store, dirs, keep)) {
          summary.mapPartitions++;
        } else {
          summary.droppedMapPartitions++;
        }
      }
      if (recorded.stageCommitted()) {
        shuffle.restoreStageCommitted();
      }
      if (!losses.isEmpty()) {
        String reason = shuffle + " lost acknowledged data in a restart of this server: " + losses;
        LOG.warn("{}; its commit will fail", reason);
        shuffle.markLost(reason);
        summary.lostShuffles++;
      }
    }
    // the losses are recorded before the files go (recovery runs before the server serves)
    store.recorded().join();
    summary.deletedFiles = dirs.deleteLeftovers(keep) + dirs.deleteRemoteLeftovers(keepRemote);
    summary.millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    return summary;
  }

  /**
   * Serves a recorded map partition again when both its files are whole; otherwise drops the record
   * (the engine reruns the producer when its readers do not find the partition).
   */
  private static boolean restoreMapPartition(
      StateMapPartition m,
      ServerShuffle shuffle,
      ServerStateStore store,
      DataDirectories dirs,
      Set<Path> keep) {
    MapPartitionId key =
        new MapPartitionId(m.getAppId(), m.getShuffleId(), m.getMapIndex(), m.getAttempt());
    Path data = Paths.get(m.getDataPath()).toAbsolutePath().normalize();
    Path index = Paths.get(m.getIndexPath()).toAbsolutePath().normalize();
    DataDirectory dir = dirs.directoryOf(data);
    String problem = null;
    if (dir == null || dir != dirs.directoryOf(index)) {
      problem =
          "its files "
              + data
              + " and "
              + index
              + " are not in one configured data directory (did sluice.server.dirs change?)";
    } else if (m.getNumSubpartitions() < 1 || m.getNumRegions() < 0) {
      problem = "its record names " + m.getNumSubpartitions() + " subpartitions";
    } else {
      long indexLength = MapPartitionIndex.fileLength(m.getNumRegions(), m.getNumSubpartitions());
      problem = sizeProblem(data, m.getLength());
      if (problem == null) {
        problem = sizeProblem(index, indexLength);
      }
    }
    if (problem != null) {
      LOG.warn("Dropping the committed {} recorded in {}: {}", key, store, problem);
      store.mapPartitionRemoved(key);
      return false;
    }
    shuffle.restoreMapPartition(
        new CommittedMapPartition(
            key, data, index, m.getNumSubpartitions(), m.getNumRegions(), m.getLength(), dir));
    keep.add(data);
    keep.add(index);
    return true;
  }

  private static String sizeProblem(Path file, long expected) {
    try {
      long size = Files.size(file);
      return size == expected
          ? null
          : "its file " + file + " has " + size + " bytes, expected " + expected;
    } catch (IOException e) {
      return "its file " + file + " is gone or unreadable: " + e;
    }
  }

  /** Why a recorded committed split cannot be served, or null when it can. */
  private static String problemWith(StateSplit split, Path path, DataDirectories dirs) {
    String fileProblem =
        split.getRemotePath().isEmpty()
            ? localProblem(split, path, dirs)
            : dirs.remoteProblem(split.getRemotePath());
    if (fileProblem != null) {
      return fileProblem;
    }
    List<Long> offsets = split.getChunkOffsetsList();
    if (offsets.isEmpty()
        || offsets.get(0) != 0
        || offsets.get(offsets.size() - 1) != split.getLength()) {
      return "its chunk offsets " + offsets + " do not span its " + split.getLength() + " bytes";
    }
    for (int i = 1; i < offsets.size(); i++) {
      if (offsets.get(i) < offsets.get(i - 1)) {
        return "its chunk offsets " + offsets + " are not in order";
      }
    }
    return null;
  }

  /** Why a recorded split's local file cannot be served, or null when it can. */
  private static String localProblem(StateSplit split, Path path, DataDirectories dirs) {
    if (!dirs.holds(path)) {
      return "its file "
          + path
          + " is not in a configured data directory (did sluice.server.dirs change?)";
    }
    if (!Files.isRegularFile(path)) {
      return "its file " + path + " is gone";
    }
    long size;
    try {
      size = Files.size(path);
    } catch (IOException e) {
      return "its file " + path + " cannot be read: " + e;
    }
    return MapRunIndex.sizeProblem(path, split.getLength(), size);
  }
}
