package org.apache.spark.shuffle.sluice;

import org.apache.spark.ShuffleDependency;
import org.apache.spark.TaskContext;
import org.apache.spark.scheduler.MapStatus;
import org.apache.spark.scheduler.MapStatus$;
import org.apache.spark.serializer.Serializer;
import org.apache.spark.shuffle.checksum.RowBasedChecksum;
import org.apache.spark.storage.BlockManagerId;
import org.apache.spark.util.collection.ExternalSorter;
import scala.Option;
import scala.math.Ordering;

/**
 * What differs between the Spark lines the client is built for, on Spark 4.1 and later (Scala
 * 2.13). The lines before have their own class of this name ({@code spark-client/src/spark-3});
 * each build compiles exactly one.
 *
 * <p>Spark 4.1 added an order-independent checksum of each map's output ({@code
 * spark.sql.shuffle.orderIndependentChecksum.enabled}): the scheduler compares it across attempts
 * of a map to find indeterminate output and retry its consumers. The writer computes it over the
 * records it pushes, with the dependency's own row checksums, as Spark's sort shuffle writer does,
 * and reports it in the map status.
 */
final class SparkLine {
  private static final RowBasedChecksum[] NO_ROW_CHECKSUMS = new RowBasedChecksum[0];

  private SparkLine() {}

  static MapChecksum mapChecksum(ShuffleDependency<?, ?, ?> dep) {
    RowBasedChecksum[] rows = dep.rowBasedChecksums();
    if (rows == null || rows.length == 0) {
      return MapChecksum.NONE;
    }
    return new MapChecksum() {
      @Override
      void update(int partition, Object key, Object value) {
        rows[partition].update(key, value);
      }

      @Override
      long value() {
        return RowBasedChecksum.getAggregatedChecksumValue(rows);
      }
    };
  }

  static MapStatus mapStatus(
      BlockManagerId location, long[] partitionLengths, long mapTaskId, MapChecksum checksum) {
    return MapStatus$.MODULE$.apply(location, partitionLengths, mapTaskId, checksum.value());
  }

  /** A sorter of a reduce task's records by key, as Spark's own reader sorts them. */
  static <K, C> ExternalSorter<K, C, C> keySorter(
      TaskContext context, Option<Ordering<K>> ordering, Serializer serializer) {
    return new ExternalSorter<>(
        context, Option.empty(), Option.empty(), ordering, serializer, NO_ROW_CHECKSUMS);
  }
}
