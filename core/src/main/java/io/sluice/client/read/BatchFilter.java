package io.sluice.client.read;

import java.util.List;

/**
 * Decides which batches a reader keeps: only the winning attempt of each map, only maps in
 * [startMapIndex, endMapIndex), and each (partition, map, batch id) once; duplicates come from
 * retried pushes and from a batch resent to a new location. Batch ids count per (map attempt,
 * partition), so the same id of a map in two partitions names two batches. Memory grows with the
 * (partition, map) pairs seen, as bounded in {@link SeenBatchIds}. Not thread safe.
 */
final class BatchFilter {
  private final int[] winningAttempts;
  private final int startMapIndex;
  private final int endMapIndex;
  private final SeenBatchIds seen = new SeenBatchIds();

  BatchFilter(List<Integer> winningAttempts, int startMapIndex, int endMapIndex) {
    this.winningAttempts = winningAttempts.stream().mapToInt(Integer::intValue).toArray();
    this.startMapIndex = startMapIndex;
    this.endMapIndex = Math.min(endMapIndex, this.winningAttempts.length);
  }

  /**
   * True the first time a batch of a winning attempt in range is offered.
   *
   * @param partitionId the partition of the split the batch was read from, not negative
   * @param batchId not negative, below {@link Integer#MAX_VALUE}
   */
  boolean accept(int partitionId, int mapIndex, int attempt, int batchId) {
    if (mapIndex < startMapIndex || mapIndex >= endMapIndex) {
      return false;
    }
    if (winningAttempts[mapIndex] != attempt) {
      return false;
    }
    return seen.add(partitionId, mapIndex, batchId);
  }

  /** Bytes held to remember seen batches ({@link SeenBatchIds#footprintBytes}). */
  long footprintBytes() {
    return seen.footprintBytes();
  }
}
