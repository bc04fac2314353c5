package org.apache.spark.shuffle.sluice;

import java.util.Locale;
import org.apache.spark.SparkConf;

/**
 * When a shuffle runs on Spark's built-in sort shuffle instead of Sluice ({@code
 * spark.sluice.fallback}):
 *
 * <ul>
 *   <li>{@code auto} (the default): when no Sluice server takes the shuffle as it is registered
 *       (none configured or found, none reachable, all refusing), or when it has more than {@code
 *       spark.sluice.fallback.maxPartitions} partitions;
 *   <li>{@code never}: such a shuffle fails its stage with the reason;
 *   <li>{@code always}: every shuffle (Sluice stays installed, for example to compare).
 * </ul>
 *
 * <p>The choice is made per shuffle on the driver and logged with the reason; a later shuffle tries
 * Sluice again. A shuffle on the built-in path keeps its map output on the executors, so an
 * executor that goes (dynamic allocation releasing it too) costs a rerun of its maps.
 */
final class ShuffleFallback {
  /** {@code auto}, {@code never} or {@code always}. */
  static final String POLICY = "spark.sluice.fallback";

  /** Under {@code auto}, shuffles with more partitions than this go built-in; 0: no limit. */
  static final String MAX_PARTITIONS = "spark.sluice.fallback.maxPartitions";

  enum Policy {
    AUTO,
    NEVER,
    ALWAYS
  }

  private final Policy policy;
  private final int maxPartitions;

  ShuffleFallback(Policy policy, int maxPartitions) {
    this.policy = policy;
    this.maxPartitions = maxPartitions;
  }

  /**
   * The settings in {@code conf}.
   *
   * @throws IllegalArgumentException naming the setting and the values it takes
   */
  static ShuffleFallback fromConf(SparkConf conf) {
    String value = conf.get(POLICY, "auto").trim();
    Policy policy;
    try {
      policy = Policy.valueOf(value.toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          POLICY + "=" + value + " is not a fallback policy: use auto, never or always", e);
    }
    String limit = conf.get(MAX_PARTITIONS, "0").trim();
    int maxPartitions;
    try {
      maxPartitions = Integer.parseInt(limit);
    } catch (NumberFormatException e) {
      maxPartitions = -1;
    }
    if (maxPartitions < 0) {
      throw new IllegalArgumentException(
          MAX_PARTITIONS + "=" + limit + " is not a partition count: use 0 (no limit) or more");
    }
    return new ShuffleFallback(policy, maxPartitions);
  }

  /** Why a shuffle of {@code numPartitions} goes built-in before Sluice is asked; null if not. */
  String reasonBeforeRegistering(int numPartitions) {
    if (policy == Policy.ALWAYS) {
      return POLICY + "=always";
    }
    if (policy == Policy.AUTO && maxPartitions > 0 && numPartitions > maxPartitions) {
      return "it has "
          + numPartitions
          + " partitions, more than "
          + MAX_PARTITIONS
          + "="
          + maxPartitions;
    }
    return null;
  }

  /** Whether a shuffle no Sluice server took goes built-in rather than failing. */
  boolean whenNoServerTakesIt() {
    return policy == Policy.AUTO;
  }
}
