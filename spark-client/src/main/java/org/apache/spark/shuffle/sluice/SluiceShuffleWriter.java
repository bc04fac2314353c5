package org.apache.spark.shuffle.sluice;

import io.sluice.client.ClientContext;
import io.sluice.client.PartitionLocations;
import io.sluice.client.coordinator.CoordinatorClient;
import io.sluice.client.push.MapOutputPusher;
import io.sluice.protocol.StatusException;
import java.io.IOException;
import org.apache.spark.Partitioner;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.TaskContext;
import org.apache.spark.scheduler.MapStatus;
import org.apache.spark.shuffle.ShuffleWriteMetricsReporter;
import org.apache.spark.shuffle.ShuffleWriter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Option;
import scala.Product2;
import scala.collection.Iterator;

/**
 * Writes one map task's output to Sluice. Combines on the map side when the dependency asks
 * (Spark's aggregator, which spills to disk under memory pressure, as Spark's own writer does),
 * partitions and serializes every record with the dependency's serializer, and pushes batches as
 * per-partition buffers fill, compressed with the core's codec ({@code sluice.push.compression}).
 * The buffers are accounted with Spark's task memory manager; when it runs short they are pushed
 * early. At the end it waits for every push to be acknowledged, reports the map to the coordinator
 * and returns a {@link MapStatus} with the bytes pushed per partition, which is what AQE coalesces
 * and splits on.
 *
 * <p>The bytes it reports to Spark's write metrics are the records' serialized bytes, the payloads
 * of its batches before compression and without batch headers: what {@link SluiceRecordIterator}
 * counts as read, so written and read bytes of a shuffle are one count.
 *
 * <p>The map writes to its shuffle's open generation (a rerun after the shuffle was read goes to a
 * new one) as attempt {@link MapOutputLocation#attemptOf its task attempt id}; the status's
 * location records both ({@link MapOutputLocation}).
 */
final class SluiceShuffleWriter<K, V, C> extends ShuffleWriter<K, V> {
  private static final Logger LOG = LoggerFactory.getLogger(SluiceShuffleWriter.class);

  private final SluiceShuffleHandle<K, V, C> handle;
  private final ShuffleDependency<K, V, C> dep;
  private final ClientContext client;
  private final CoordinatorClient coordinator;
  private final TaskContext context;
  private final ShuffleWriteMetricsReporter metrics;
  private final long mapTaskId;
  private final int mapIndex;
  private final int attempt;

  private MapOutputPusher pusher;
  private PushBufferMemory memory;
  private long[] partitionLengths;
  private MapStatus status;
  private boolean stopping;

  SluiceShuffleWriter(
      SluiceShuffleHandle<K, V, C> handle,
      long mapTaskId,
      TaskContext context,
      ShuffleWriteMetricsReporter metrics,
      SluiceClients clients) {
    this.handle = handle;
    this.dep = handle.dependency();
    this.client = clients.context();
    this.coordinator = clients.coordinator(handle.appId(), handle.coordinator());
    this.context = context;
    this.metrics = metrics;
    this.mapTaskId = mapTaskId;
    this.mapIndex = context.partitionId();
    this.attempt = MapOutputLocation.attemptOf(context.taskAttemptId());
  }

  @Override
  public void write(Iterator<Product2<K, V>> records) throws IOException {
    PartitionLocations generation = openGeneration();
    pusher =
        new MapOutputPusher(
            client,
            coordinator,
            handle.appId(),
            generation.shuffleId(),
            mapIndex,
            attempt,
            generation);
    Partitioner partitioner = dep.partitioner();
    RecordSerializer serializer =
        RecordSerializer.create(
            dep.serializer(), pusher, client.conf().pushBufferSize(), partitioner.numPartitions());
    memory =
        new PushBufferMemory(
            context.taskMemoryManager(),
            client.conf().pushBufferSize(),
            () -> {
              long start = System.nanoTime();
              serializer.flushToPusher();
              pusher.flush();
              metrics.incWriteTime(System.nanoTime() - start);
            });
    Iterator<? extends Product2<K, ?>> input = records;
    if (dep.mapSideCombine()) {
      if (dep.aggregator().isEmpty()) {
        throw new IllegalStateException(
            "map-side combine without an aggregator in " + handle.describe());
      }
      input = dep.aggregator().get().combineValuesByKey(records, context);
    }
    MapChecksum checksum = SparkLine.mapChecksum(dep);
    long count = 0;
    while (input.hasNext()) {
      Product2<K, ?> record = input.next();
      int partition = partitioner.getPartition(record._1());
      memory.beforeWrite(partition);
      serializer.write(partition, record._1(), record._2());
      checksum.update(partition, record._1(), record._2());
      count++;
    }
    long start = System.nanoTime();
    serializer.close();
    partitionLengths = pusher.finish();
    metrics.incWriteTime(System.nanoTime() - start);
    memory.releaseAll();
    long total = 0;
    for (long l : partitionLengths) {
      total += l;
    }
    metrics.incRecordsWritten(count);
    metrics.incBytesWritten(serializer.bytesSerialized());
    status =
        SparkLine.mapStatus(
            MapOutputLocation.of(
                generation.shuffleId(), MapOutputLocation.hostHere(generation.shuffleId())),
            partitionLengths,
            // the map id is the attempt whose batches count (see MapOutputLocation)
            context.taskAttemptId(),
            checksum);
    LOG.debug(
        "Map {} (task {}, attempt {}) of {} pushed {} records, {} bytes to generation {}; {}"
            + " early spill(s)",
        mapIndex,
        mapTaskId,
        attempt,
        handle.describe(),
        count,
        total,
        generation.shuffleId(),
        memory.spills());
  }

  /**
   * The generation to write to, from the coordinator (within {@code
   * sluice.network.requestTimeout}).
   *
   * @throws IOException naming the map, the application and the shuffle when the coordinator
   *     refused or did not answer
   */
  private PartitionLocations openGeneration() throws IOException {
    try {
      return coordinator.openGeneration(handle.shuffleId());
    } catch (StatusException e) {
      throw new IOException(
          "Sluice coordinator refused map "
              + mapIndex
              + " of "
              + handle.describe()
              + ": "
              + e.getMessage(),
          e);
    } catch (IOException e) {
      throw new IOException(
          "Map " + mapIndex + " of " + handle.describe() + " cannot start: " + e.getMessage(), e);
    }
  }

  @Override
  public Option<MapStatus> stop(boolean success) {
    if (stopping) {
      return Option.empty();
    }
    stopping = true;
    if (memory != null) {
      memory.releaseAll();
    }
    if (pusher != null) {
      pusher.close();
    }
    return success && status != null ? Option.apply(status) : Option.empty();
  }

  @Override
  public long[] getPartitionLengths() {
    return partitionLengths;
  }
}
