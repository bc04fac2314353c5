package io.sluice.protocol;

/**
 * The maxima a server checks requests against, besides the shape each shuffle registered ({@code
 * RegisterShuffle}: map indexes below {@code num_maps}, partitions or subpartitions below {@code
 * num_partitions}). Every count, index and length in a request is checked against one of them
 * before anything is allocated for it, and a request that breaks one is answered BAD_REQUEST naming
 * the field, its value and the limit. Clients never build a request that breaks them.
 */
public final class RequestLimits {
  /**
   * Epochs of one partition: each revive of a partition moves it to the next epoch, so a job that
   * reaches this many moves of one partition has a server problem no further move fixes.
   */
  public static final int MAX_EPOCHS = 1 << 16;

  /**
   * Subpartitions of one map partition (Flink): the server keeps an offset and a length per
   * subpartition while a region is written and writes them to the index at its end. Flink's largest
   * parallelism is 32768.
   */
  public static final int MAX_SUBPARTITIONS = 1 << 16;

  /**
   * Credits (unanswered ReadMapBuffer requests) one map partition stream may have queued on the
   * server; a reader needs only a few to keep its disk busy.
   */
  public static final int MAX_CREDITS_PER_STREAM = 1024;

  /**
   * Parts of one merged push (PushMerged): a map task merges at most this many small batches into
   * one request; the server keeps an outcome per part until it answers.
   */
  public static final int MAX_MERGED_PARTS = 4096;

  /** Regions of one map partition: its index has one record per region. */
  public static final int MAX_REGIONS = 1 << 24;

  private RequestLimits() {}

  /**
   * Checks the shape a shuffle registers.
   *
   * @return null when it is valid, else what is wrong with it
   */
  public static String checkShape(int numMaps, int numPartitions) {
    if (numMaps < 0) {
      return "num_maps " + numMaps + " is negative";
    }
    if (numPartitions < 0) {
      return "num_partitions " + numPartitions + " is negative";
    }
    return null;
  }

  /**
   * Checks an index against its bound.
   *
   * @return null when {@code 0 <= value < bound}, else a message naming {@code field}
   */
  public static String checkIndex(String field, long value, long bound, String boundName) {
    if (value < 0 || value >= bound) {
      return field + " " + value + " is outside [0, " + bound + ") (" + boundName + ")";
    }
    return null;
  }
}
