package org.apache.spark.shuffle.sluice;

import org.apache.spark.InterruptibleIterator;
import org.apache.spark.MapOutputTracker;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.TaskContext;
import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import org.apache.spark.shuffle.ShuffleReader;
import org.apache.spark.util.CompletionIterator$;
import org.apache.spark.util.TaskCompletionListener;
import org.apache.spark.util.collection.ExternalSorter;
import scala.Option;
import scala.Product2;
import scala.collection.Iterator;
import scala.math.Ordering;
import scala.runtime.AbstractFunction0;
import scala.runtime.BoxedUnit;

/**
 * Reads a reduce task's ranges — any [startMapIndex, endMapIndex) x [startPartition, endPartition)
 * AQE asks for: coalesced partition ranges, skew-join map ranges of one partition, the local
 * shuffle reader's per-mapper specs — and then does what Spark's BlockStoreShuffleReader does:
 * aggregates with the dependency's aggregator (combiners when the map side combined), sorts with
 * Spark's ExternalSorter when the dependency has a key ordering, and stays interruptible.
 *
 * <p>Which attempt of each map counts, and which Sluice generation holds it, comes from Spark's map
 * output tracker; a map whose output is not registered fails the task with Spark's own
 * MetadataFetchFailedException, and data that cannot be read with a FetchFailedException that makes
 * Spark rerun the maps of that generation.
 */
final class SluiceShuffleReader<K, C> implements ShuffleReader<K, C> {
  private final SluiceShuffleHandle<K, ?, C> handle;
  private final int startMapIndex;
  private final int endMapIndex;
  private final int startPartition;
  private final int endPartition;
  private final TaskContext context;
  private final ShuffleReadMetricsReporter metrics;
  private final SluiceClients clients;
  private final MapOutputTracker tracker;

  SluiceShuffleReader(
      SluiceShuffleHandle<K, ?, C> handle,
      int startMapIndex,
      int endMapIndex,
      int startPartition,
      int endPartition,
      TaskContext context,
      ShuffleReadMetricsReporter metrics,
      SluiceClients clients,
      MapOutputTracker tracker) {
    this.handle = handle;
    this.startMapIndex = startMapIndex;
    this.endMapIndex = Math.min(endMapIndex, handle.numMaps());
    this.startPartition = startPartition;
    this.endPartition = endPartition;
    this.context = context;
    this.metrics = metrics;
    this.clients = clients;
    this.tracker = tracker;
  }

  @Override
  @SuppressWarnings({"unchecked", "rawtypes"})
  public Iterator<Product2<K, C>> read() {
    ShuffleDependency<K, ?, C> dep = handle.dependency();
    MapOutputsByGeneration outputs =
        new MapOutputsByGeneration(
            tracker.getMapSizesByExecutorId(
                handle.shuffleId(), startMapIndex, endMapIndex, startPartition, endPartition),
            handle.numMaps());
    SluiceRecordIterator records =
        new SluiceRecordIterator(
            handle,
            outputs,
            clients,
            dep.serializer().newInstance(),
            dep.serializer().supportsRelocationOfSerializedObjects(),
            metrics,
            startMapIndex,
            endMapIndex,
            startPartition,
            endPartition);
    context.addTaskCompletionListener((TaskCompletionListener) ctx -> records.close());
    Iterator<Product2<Object, Object>> withMetrics =
        CompletionIterator$.MODULE$.apply(
            (Iterator) records,
            new AbstractFunction0<BoxedUnit>() {
              @Override
              public BoxedUnit apply() {
                context.taskMetrics().mergeShuffleReadMetrics();
                return BoxedUnit.UNIT;
              }
            });
    InterruptibleIterator<Product2<Object, Object>> interruptible =
        new InterruptibleIterator<>(context, withMetrics);

    Iterator<Product2<K, C>> aggregated;
    if (dep.aggregator().isDefined()) {
      Iterator combined =
          dep.mapSideCombine()
              ? dep.aggregator().get().combineCombinersByKey((Iterator) interruptible, context)
              : dep.aggregator().get().combineValuesByKey((Iterator) interruptible, context);
      aggregated = combined;
    } else {
      aggregated = (Iterator) interruptible;
    }
    Option<Ordering<K>> ordering = dep.keyOrdering();
    Iterator<Product2<K, C>> result;
    if (ordering.isDefined()) {
      ExternalSorter<K, C, C> sorter = SparkLine.keySorter(context, ordering, dep.serializer());
      result = sorter.insertAllAndUpdateMetrics(aggregated);
    } else {
      result = aggregated;
    }
    if (result instanceof InterruptibleIterator) {
      return result;
    }
    // aggregation or sorting consumed the interruptible input; stay interruptible on the way out
    return new InterruptibleIterator<>(context, result);
  }
}
