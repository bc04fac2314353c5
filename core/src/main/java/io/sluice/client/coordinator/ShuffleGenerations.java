package io.sluice.client.coordinator;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntPredicate;

/**
 * The generations of a coordinator's shuffles. A shuffle is written in generations: the first is
 * the shuffle itself; once a generation's commit has started, writers that still come (the engine
 * reran maps: a stage retry after a fetch failure, an output lost with its executor) get a new
 * generation with its own shuffle id, placement, files, winners and commit, so data written after a
 * read began never mixes with the data that read saw. Readers learn from their engine which
 * generation holds the counted attempt of each map.
 *
 * <p>Generation ids count down from {@link Integer#MAX_VALUE}, far from the engine's own shuffle
 * ids, which count up from 0. Thread safe.
 */
final class ShuffleGenerations {
  // guarded by this: shuffle id -> ids of its later generations, oldest first
  private final Map<Integer, List<Integer>> later = new HashMap<>();
  private final Map<Integer, Integer> shuffleOf = new HashMap<>();
  private int nextId = Integer.MAX_VALUE;

  /** The newest generation of the shuffle: the shuffle itself until a rerun began. */
  synchronized int latest(int shuffleId) {
    List<Integer> ids = later.get(shuffleId);
    return ids == null || ids.isEmpty() ? shuffleId : ids.get(ids.size() - 1);
  }

  /** An id for a new generation that {@code taken} does not claim; not yet recorded. */
  synchronized int nextFreeId(IntPredicate taken) {
    while (taken.test(nextId) || shuffleOf.containsKey(nextId)) {
      nextId--;
    }
    return nextId;
  }

  /** Records {@code generationId} as the newest generation of {@code shuffleId}. */
  synchronized void add(int shuffleId, int generationId) {
    later.computeIfAbsent(shuffleId, s -> new ArrayList<>()).add(generationId);
    shuffleOf.put(generationId, shuffleId);
    if (generationId == nextId) {
      nextId--;
    }
  }

  /** True when {@code id} is a later generation of some shuffle. */
  synchronized boolean isGeneration(int id) {
    return shuffleOf.containsKey(id);
  }

  /** Forgets the shuffle; returns the ids of its later generations. */
  synchronized List<Integer> remove(int shuffleId) {
    List<Integer> ids = later.remove(shuffleId);
    if (ids == null) {
      return List.of();
    }
    for (int id : ids) {
      shuffleOf.remove(id);
    }
    return ids;
  }
}
