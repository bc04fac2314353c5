package org.apache.spark.shuffle.sluice;

import org.apache.spark.ShuffleDependency;
import org.apache.spark.TaskContext;
import org.apache.spark.scheduler.MapStatus;
import org.apache.spark.scheduler.MapStatus$;
import org.apache.spark.serializer.Serializer;
import org.apache.spark.storage.BlockManagerId;
import org.apache.spark.util.collection.ExternalSorter;
import scala.Option;
import scala.math.Ordering;

/**
 * What differs between the Spark lines the client is built for, on Spark 3.3 to 4.0 (Scala 2.12 and
 * 2.13). Spark 4.1 and later have their own class of this name ({@code spark-client/src/spark-4});
 * each build compiles exactly one. Which Spark a jar runs in is checked by {@link SparkLines}.
 */
final class SparkLine {
  private SparkLine() {}

  /** Spark before 4.1 has no order-independent map output checksum: nothing to compute. */
  static MapChecksum mapChecksum(ShuffleDependency<?, ?, ?> dep) {
    return MapChecksum.NONE;
  }

  static MapStatus mapStatus(
      BlockManagerId location, long[] partitionLengths, long mapTaskId, MapChecksum checksum) {
    return MapStatus$.MODULE$.apply(location, partitionLengths, mapTaskId);
  }

  /** A sorter of a reduce task's records by key, as Spark's own reader sorts them. */
  static <K, C> ExternalSorter<K, C, C> keySorter(
      TaskContext context, Option<Ordering<K>> ordering, Serializer serializer) {
    return new ExternalSorter<>(context, Option.empty(), Option.empty(), ordering, serializer);
  }
}
