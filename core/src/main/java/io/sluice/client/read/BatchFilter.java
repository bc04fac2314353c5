package io.sluice.client.read;

import java.util.BitSet;
import java.util.List;

/**
 * Decides which batches a reader keeps: only the winning attempt of each map, only maps in
 * [startMapIndex, endMapIndex), and each (map, batch id) once; duplicates come from retried pushes
 * and from a batch resent to a new location. Not thread safe.
 */
final class BatchFilter {
  private final int[] winningAttempts;
  private final int startMapIndex;
  private final int endMapIndex;
  private final BitSet[] seen;

  BatchFilter(List<Integer> winningAttempts, int startMapIndex, int endMapIndex) {
    this.winningAttempts = winningAttempts.stream().mapToInt(Integer::intValue).toArray();
    this.startMapIndex = startMapIndex;
    this.endMapIndex = Math.min(endMapIndex, this.winningAttempts.length);
    this.seen = new BitSet[this.winningAttempts.length];
  }

  /** True the first time a batch of a winning attempt in range is offered. */
  boolean accept(int mapIndex, int attempt, int batchId) {
    if (mapIndex < startMapIndex || mapIndex >= endMapIndex) {
      return false;
    }
    if (winningAttempts[mapIndex] != attempt) {
      return false;
    }
    BitSet s = seen[mapIndex];
    if (s == null) {
      s = new BitSet();
      seen[mapIndex] = s;
    }
    if (s.get(batchId)) {
      return false;
    }
    s.set(batchId);
    return true;
  }
}
