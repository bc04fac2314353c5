package io.sluice.server.storage;

import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;

/**
 * Where a split lives once committed ({@code sluice.storage.policy}): the tiers a server may use,
 * always in the order memory, local, hdfs, whatever order the setting names them in.
 *
 * <ul>
 *   <li><b>memory</b>: a split that was never flushed and holds at most {@code
 *       sluice.storage.memory.maxSplitSize} is committed in memory while held memory is at or below
 *       the resume watermark, and written to its local file later (pressure, age, a stop).
 *   <li><b>local</b>: the server's data directories. Always present: every split is written there
 *       while it takes data.
 *   <li><b>hdfs</b>: a Hadoop file system ({@code sluice.storage.hdfs.dir}, HDFS or any other with
 *       its connector on the class path). A committed split goes there when it holds at least
 *       {@code sluice.storage.hdfs.minSplitSize}, or when its local directory is past {@code
 *       sluice.disk.maxUsage}; its local file is then deleted and readers read it from the
 *       distributed file system, so it outlives the server.
 * </ul>
 */
public final class StoragePolicy {
  /** A storage tier. */
  public enum Tier {
    MEMORY,
    LOCAL,
    HDFS;

    String settingName() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  private final Set<Tier> tiers;

  private StoragePolicy(Set<Tier> tiers) {
    this.tiers = tiers;
  }

  /**
   * Parses {@code sluice.storage.policy}: a comma-separated list of memory, local and hdfs that
   * names local.
   *
   * @throws IllegalArgumentException naming the setting and what is wrong with it
   */
  public static StoragePolicy parse(String setting, String value) {
    Set<Tier> tiers = EnumSet.noneOf(Tier.class);
    for (String part : value.split(",", -1)) {
      String name = part.trim();
      Tier tier = null;
      for (Tier t : Tier.values()) {
        if (t.settingName().equals(name.toLowerCase(Locale.ROOT))) {
          tier = t;
        }
      }
      if (tier == null) {
        throw new IllegalArgumentException(
            setting
                + " names '"
                + name
                + "' in '"
                + value
                + "'; the tiers are memory, local and hdfs, for example local or"
                + " memory,local,hdfs");
      }
      if (!tiers.add(tier)) {
        throw new IllegalArgumentException(
            setting + " names " + name + " twice in '" + value + "'");
      }
    }
    if (!tiers.contains(Tier.LOCAL)) {
      throw new IllegalArgumentException(
          setting
              + " is '"
              + value
              + "' but must name local: every split is written to a local data directory while it"
              + " takes data");
    }
    return new StoragePolicy(tiers);
  }

  public boolean uses(Tier tier) {
    return tiers.contains(tier);
  }

  @Override
  public String toString() {
    StringBuilder s = new StringBuilder();
    for (Tier t : tiers) {
      s.append(s.length() == 0 ? "" : ",").append(t.settingName());
    }
    return s.toString();
  }
}
