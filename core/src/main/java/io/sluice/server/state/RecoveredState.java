package io.sluice.server.state;

import io.sluice.protocol.proto.StateMapPartition;
import io.sluice.protocol.proto.StateSplit;
import io.sluice.server.storage.ShuffleShape;
import io.sluice.server.storage.SplitKey;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** What the state store held when the server started: applications, shuffles and their splits. */
public final class RecoveredState {
  /** One recorded shuffle. */
  public static final class Shuffle {
    private final String appId;
    private final int shuffleId;
    private boolean stageCommitted;
    private ShuffleShape shape = ShuffleShape.UNKNOWN;
    private final List<StateSplit> committedSplits = new ArrayList<>();
    private final List<SplitKey> openSplits = new ArrayList<>();
    private final List<StateMapPartition> mapPartitions = new ArrayList<>();

    Shuffle(String appId, int shuffleId) {
      this.appId = appId;
      this.shuffleId = shuffleId;
    }

    public String appId() {
      return appId;
    }

    public int shuffleId() {
      return shuffleId;
    }

    /** The shape the shuffle registered ({@link ShuffleShape#UNKNOWN} if not recorded). */
    public ShuffleShape shape() {
      return shape;
    }

    /** True when the shuffle's stage commit had finished. */
    public boolean stageCommitted() {
      return stageCommitted;
    }

    public List<StateSplit> committedSplits() {
      return Collections.unmodifiableList(committedSplits);
    }

    /** Committed map partitions (Flink). */
    public List<StateMapPartition> mapPartitions() {
      return Collections.unmodifiableList(mapPartitions);
    }

    /** Splits that were being written and never committed: their data is lost. */
    public List<SplitKey> openSplits() {
      return Collections.unmodifiableList(openSplits);
    }
  }

  private final Map<String, Map<Integer, Shuffle>> apps = new TreeMap<>();

  private final Map<String, byte[]> authKeys = new TreeMap<>();

  void addApplication(String appId, byte[] authKey) {
    apps.computeIfAbsent(appId, id -> new TreeMap<>());
    if (authKey != null) {
      authKeys.put(appId, authKey);
    }
  }

  /** The key an application's coordinator registered (sluice.auth.enabled), or null. */
  public byte[] authKey(String appId) {
    return authKeys.get(appId);
  }

  Shuffle shuffle(String appId, int shuffleId) {
    return apps.computeIfAbsent(appId, id -> new TreeMap<>())
        .computeIfAbsent(shuffleId, id -> new Shuffle(appId, id));
  }

  void markStageCommitted(String appId, int shuffleId, boolean committed, ShuffleShape shape) {
    Shuffle s = shuffle(appId, shuffleId);
    s.stageCommitted = committed;
    s.shape = shape;
  }

  void addCommittedSplit(StateSplit split) {
    shuffle(split.getAppId(), split.getShuffleId()).committedSplits.add(split);
  }

  void addMapPartition(StateMapPartition m) {
    shuffle(m.getAppId(), m.getShuffleId()).mapPartitions.add(m);
  }

  void addOpenSplit(SplitKey key) {
    shuffle(key.appId(), key.shuffleId()).openSplits.add(key);
  }

  /** Application ids, sorted. */
  public Collection<String> applications() {
    return Collections.unmodifiableSet(apps.keySet());
  }

  /** Every shuffle of every application, by application then shuffle id. */
  public List<Shuffle> shuffles() {
    List<Shuffle> all = new ArrayList<>();
    for (Map<Integer, Shuffle> shuffles : apps.values()) {
      all.addAll(shuffles.values());
    }
    return all;
  }

  public int committedSplitCount() {
    int n = 0;
    for (Shuffle s : shuffles()) {
      n += s.committedSplits.size();
    }
    return n;
  }

  public boolean isEmpty() {
    return apps.isEmpty();
  }
}
