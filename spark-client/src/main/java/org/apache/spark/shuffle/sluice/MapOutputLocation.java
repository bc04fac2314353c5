package org.apache.spark.shuffle.sluice;

import org.apache.spark.storage.BlockManagerId;
import org.apache.spark.storage.BlockManagerId$;
import scala.Option;

/**
 * Where Spark's map output tracker believes a map's output lives: a {@link BlockManagerId} that
 * names the Sluice generation holding it (executor id and host {@code sluice-gen-<id>}, so no
 * executor or host ever matches it) and, in the topology field, the attempt whose batches count.
 *
 * <p>This makes Spark's own bookkeeping do Sluice's: the registered status of each map index tells
 * readers which generation and attempt to keep (task retries, speculation and stage reruns
 * included), reduce tasks get no locality preference for hosts that hold nothing, losing an
 * executor loses no output, and a {@code FetchFailedException} that names this location makes the
 * DAG scheduler unregister exactly the outputs of that generation ("executor lost, files lost"), so
 * their maps rerun into a new generation.
 */
final class MapOutputLocation {
  static final String PREFIX = "sluice-gen-";

  /** BlockManagerId requires a positive port; nothing connects to it. */
  private static final int PORT = 1;

  private MapOutputLocation() {}

  /** The location of the output of {@code attempt} written to generation {@code generationId}. */
  static BlockManagerId of(int generationId, int attempt) {
    String name = PREFIX + generationId;
    return BlockManagerId$.MODULE$.apply(name, name, PORT, Option.apply(Integer.toString(attempt)));
  }

  /** The location that names a whole generation (for fetch failures). */
  static BlockManagerId ofGeneration(int generationId) {
    String name = PREFIX + generationId;
    return BlockManagerId$.MODULE$.apply(name, name, PORT, Option.empty());
  }

  /**
   * The generation of a location written by {@link #of}.
   *
   * @throws IllegalStateException naming the location when Sluice did not write it
   */
  static int generation(BlockManagerId location) {
    String id = location.executorId();
    if (!id.startsWith(PREFIX)) {
      throw new IllegalStateException(
          "map output at "
              + location
              + " was not written by Sluice (is spark.shuffle.manager the same for every JVM?)");
    }
    return Integer.parseInt(id.substring(PREFIX.length()));
  }

  /** The attempt of a location written by {@link #of}. */
  static int attempt(BlockManagerId location) {
    Option<String> topology = location.topologyInfo();
    if (topology.isEmpty()) {
      throw new IllegalStateException("map output location " + location + " names no attempt");
    }
    return Integer.parseInt(topology.get());
  }

  /**
   * The attempt number pushed in batch headers: unique per map index within a generation, because
   * tasks of different stage attempts may write the same generation.
   */
  static int encodeAttempt(int stageAttemptNumber, int taskAttemptNumber) {
    if (stageAttemptNumber < 0 || stageAttemptNumber >= (1 << 15)) {
      throw new IllegalArgumentException("stage attempt " + stageAttemptNumber + " out of range");
    }
    if (taskAttemptNumber < 0 || taskAttemptNumber >= (1 << 16)) {
      throw new IllegalArgumentException("task attempt " + taskAttemptNumber + " out of range");
    }
    return (stageAttemptNumber << 16) | taskAttemptNumber;
  }
}
