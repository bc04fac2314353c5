package org.apache.spark.shuffle.sluice;

import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.BlockManagerId;
import scala.Tuple2;
import scala.Tuple3;
import scala.collection.Iterator;
import scala.collection.Seq;

/**
 * The map outputs a reduce task reads, as Spark's map output tracker registered them, grouped by
 * the Sluice generation that holds them: for each generation, the attempt that counts for each map
 * index (-1 for maps it does not hold), and the number of the non-empty blocks (the sizes Spark
 * registered are rounded, so the bytes read are counted from the data itself). The tracker is the
 * one source of truth for which attempt of a map won, so task retries, speculative copies and stage
 * reruns count exactly as Spark counts them.
 */
final class MapOutputsByGeneration {
  /** The map outputs of one generation that a read covers. */
  static final class Generation {
    final int id;
    final int[] attempts;
    int blocks;

    Generation(int id, int numMaps) {
      this.id = id;
      this.attempts = new int[numMaps];
      Arrays.fill(attempts, -1);
    }
  }

  private final Map<Integer, Generation> generations = new TreeMap<>();

  /**
   * Groups the output of {@code MapOutputTracker.getMapSizesByExecutorId}: for each location, the
   * (block, size, map index) of every non-empty block in the asked ranges.
   */
  MapOutputsByGeneration(
      Iterator<Tuple2<BlockManagerId, Seq<Tuple3<BlockId, Object, Object>>>> statuses,
      int numMaps) {
    while (statuses.hasNext()) {
      Tuple2<BlockManagerId, Seq<Tuple3<BlockId, Object, Object>>> byLocation = statuses.next();
      int generationId = MapOutputLocation.generation(byLocation._1());
      Generation g = generations.computeIfAbsent(generationId, id -> new Generation(id, numMaps));
      Iterator<Tuple3<BlockId, Object, Object>> blocks = byLocation._2().iterator();
      while (blocks.hasNext()) {
        Tuple3<BlockId, Object, Object> block = blocks.next();
        int mapIndex = (Integer) block._3();
        g.attempts[mapIndex] = MapOutputLocation.attempt(block._1());
        g.blocks++;
      }
    }
  }

  /** The generations holding data of the read, in id order. */
  Iterable<Generation> generations() {
    return generations.values();
  }

  boolean isEmpty() {
    return generations.isEmpty();
  }
}
