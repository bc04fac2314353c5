package org.apache.spark.shuffle.sluice;

import org.apache.spark.SparkContext$;
import org.apache.spark.SparkEnv;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.BlockManagerId;
import org.apache.spark.storage.BlockManagerId$;
import org.apache.spark.storage.ShuffleBlockId;
import org.apache.spark.util.Utils;
import scala.Option;

/**
 * Where Spark's map output tracker believes a map's output lives: a {@link BlockManagerId} whose
 * executor id names the Sluice generation holding it ({@code sluice-gen-<id>}, so no executor ever
 * matches it). The attempt whose batches count is the status's map id, the task attempt id Spark
 * itself registers ({@link #attemptOf}); every attempt of a generation has the same location, as
 * every attempt on one executor has with Spark's own shuffle (Spark's ShuffleSuite checks it).
 *
 * <p>This makes Spark's own bookkeeping do Sluice's: the registered status of each map index tells
 * readers which generation and attempt to keep (task retries, speculation and stage reruns
 * included), losing an executor loses no output, and a {@code FetchFailedException} that names the
 * generation's location makes the DAG scheduler unregister exactly the outputs of that generation
 * ("executor lost, files lost"), so their maps rerun into a new generation.
 *
 * <p>The host is also where Spark prefers to run the reduce tasks (reducer locality, and the map
 * ranges of skew splits and local shuffle reads). In a cluster it is {@code sluice-gen-<id>} too:
 * no executor has that host, so losing a host loses no output either, and a stage that reads only
 * Sluice shuffles schedules its tasks anywhere at once; a stage that also has tasks preferring real
 * hosts (cached blocks, file splits) holds the Sluice tasks for up to {@code spark.locality.wait},
 * then the scheduler's periodic offers place them. In local mode (tasks run in the driver) nothing
 * offers resources periodically, so such a stage waited forever (issue 20: a union of a shuffle
 * read and a cached table); there the host is the one the scheduler offers its only executor at, so
 * it always takes the task.
 */
final class MapOutputLocation {
  static final String PREFIX = "sluice-gen-";

  /** BlockManagerId requires a positive port; nothing connects to it. */
  private static final int PORT = 1;

  private MapOutputLocation() {}

  /**
   * The location of the outputs written to generation {@code generationId}, at {@code host} (see
   * {@link #host}); fetch failures name it too.
   */
  static BlockManagerId of(int generationId, String host) {
    return BlockManagerId$.MODULE$.apply(PREFIX + generationId, host, PORT, Option.empty());
  }

  /**
   * The host of a generation's locations for a task in a JVM with {@code executorId}: {@code
   * localHost} when the JVM is the driver (local mode; the host the scheduler offers its executor
   * at), else {@code sluice-gen-<id>}. See the class.
   */
  static String host(int generationId, String executorId, String localHost) {
    return SparkContext$.MODULE$.DRIVER_IDENTIFIER().equals(executorId)
        ? localHost
        : PREFIX + generationId;
  }

  /** {@link #host} for a task in this JVM. */
  static String hostHere(int generationId) {
    return host(generationId, SparkEnv.get().executorId(), Utils.localCanonicalHostName());
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

  /**
   * The attempt of the block a map output tracker lists for a map ({@code
   * getMapSizesByExecutorId}): its map id, which Sluice's writer registers as its task attempt id.
   *
   * @throws IllegalStateException naming the block when it is not a shuffle block
   */
  static int attempt(BlockId block) {
    if (!(block instanceof ShuffleBlockId)) {
      throw new IllegalStateException(
          "map output block " + block + " is not a shuffle block Sluice's writer registered");
    }
    return attemptOf(((ShuffleBlockId) block).mapId());
  }

  /**
   * The attempt number pushed in batch headers: the task's attempt id ({@code
   * TaskContext.taskAttemptId()}, unique in the application, which the writer also registers as its
   * status's map id, as Spark's own shuffle does), kept to 31 bits because headers carry a
   * non-negative int. Two attempts of one map index writing the same generation therefore always
   * differ: task retries, speculative copies, attempts of different stage attempts, and also two
   * writers a caller gave the same attempt number (Spark's ShuffleSuite does, SPARK-8029), whose
   * batches would otherwise share ids and be dropped as duplicates of each other. Ids are equal
   * only 2^31 tasks apart.
   */
  static int attemptOf(long taskAttemptId) {
    if (taskAttemptId < 0) {
      throw new IllegalArgumentException("task attempt id " + taskAttemptId + " is negative");
    }
    return (int) (taskAttemptId & Integer.MAX_VALUE);
  }
}
