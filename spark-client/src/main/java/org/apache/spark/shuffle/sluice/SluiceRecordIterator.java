package org.apache.spark.shuffle.sluice;

import io.sluice.client.ApplicationLimitException;
import io.sluice.client.ClientContext;
import io.sluice.client.coordinator.CoordinatorClient;
import io.sluice.client.read.PartitionReader;
import io.sluice.client.read.ShuffleBatch;
import io.sluice.protocol.StatusException;
import io.sluice.protocol.proto.CommittedShuffle;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.TimeUnit;
import org.apache.spark.serializer.DeserializationStream;
import org.apache.spark.serializer.SerializerInstance;
import org.apache.spark.shuffle.FetchFailedException;
import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import scala.Tuple2;
import scala.collection.AbstractIterator;
import scala.collection.Iterator;

/**
 * The deserialized records of a reduce task's ranges: generation after generation, the committed
 * splits of partitions [startPartition, endPartition) read for maps [startMapIndex, endMapIndex),
 * keeping only the attempts Spark registered, each batch once. Updates the read metrics: bytes read
 * are the serialized records of the batches kept (payloads after decompression, without batch
 * headers), the count {@link SluiceShuffleWriter} reports as written. Any failure to get or read
 * the data (lost partitions, an unreachable or failing server, a corrupt chunk) is thrown as a
 * {@link FetchFailedException} naming the generation's location, so Spark unregisters that
 * generation's outputs and reruns its maps. Closes what it opened when exhausted or when {@link
 * #close} is called (task end). Task thread only.
 *
 * <p>With a serializer whose records can be relocated (Kryo, Spark SQL's rows: {@code
 * supportsRelocationOfSerializedObjects}), every batch is one piece of a single stream that one
 * deserialization stream reads, so a batch of a few records costs no stream, no borrowed Kryo
 * instance and no input buffer of its own (small blocks: 400 batches of two records per reducer).
 * Other serializers (Java serialization writes a stream header) get a stream per batch.
 */
final class SluiceRecordIterator extends AbstractIterator<Tuple2<Object, Object>> {
  private final SluiceShuffleHandle<?, ?, ?> handle;
  private final ClientContext client;
  private final CoordinatorClient coordinator;
  private final CommittedSplitsCache commits;
  private final SerializerInstance serializer;
  private final boolean oneStream;
  private final ShuffleReadMetricsReporter metrics;
  private final int startMapIndex;
  private final int endMapIndex;
  private final int startPartition;
  private final int endPartition;
  private final Deque<MapOutputsByGeneration.Generation> pending = new ArrayDeque<>();

  private MapOutputsByGeneration.Generation generation;
  private PartitionReader reader;
  private Iterator<Tuple2<Object, Object>> records;

  /**
   * The stream {@link #records} reads: closed when read to its end, or by {@link #close} when the
   * task stops early (a limit), so its pooled Kryo instance goes back to Spark's pool.
   */
  private DeserializationStream stream;

  private boolean closed;

  SluiceRecordIterator(
      SluiceShuffleHandle<?, ?, ?> handle,
      MapOutputsByGeneration outputs,
      SluiceClients clients,
      SerializerInstance serializer,
      boolean relocatableRecords,
      ShuffleReadMetricsReporter metrics,
      int startMapIndex,
      int endMapIndex,
      int startPartition,
      int endPartition) {
    this.handle = handle;
    this.client = clients.context();
    this.coordinator = clients.coordinator(handle.appId(), handle.coordinator());
    this.commits = clients.commits();
    this.serializer = serializer;
    this.oneStream = relocatableRecords;
    this.metrics = metrics;
    this.startMapIndex = startMapIndex;
    this.endMapIndex = endMapIndex;
    this.startPartition = startPartition;
    this.endPartition = endPartition;
    for (MapOutputsByGeneration.Generation g : outputs.generations()) {
      pending.add(g);
    }
  }

  @Override
  public boolean hasNext() {
    while (records == null || !records.hasNext()) {
      if (closed) {
        return false;
      }
      if (oneStream) {
        if (records != null) {
          close(); // the one stream ended: every batch is read
          return false;
        }
        stream = serializer.deserializeStream(new BatchesStream());
        records = stream.asKeyValueIterator();
        continue;
      }
      ShuffleBatch batch = nextBatch();
      if (batch == null) {
        return false;
      }
      // the batch's bytes stay valid until reader.next(), called once these records are read
      stream =
          serializer.deserializeStream(new ByteArrayInputStream(batch.bytes(), 0, batch.length()));
      records = stream.asKeyValueIterator();
    }
    return true;
  }

  /**
   * The batches, one after another, as one stream. A batch's bytes are copied out (into the
   * deserializer's buffer) before the next is fetched, which invalidates them.
   */
  private final class BatchesStream extends InputStream {
    private ShuffleBatch batch;
    private int position;

    @Override
    public int read() {
      byte[] one = new byte[1];
      return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] into, int off, int len) {
      if (len == 0) {
        return 0;
      }
      while (batch == null || position == batch.length()) {
        batch = nextBatch();
        position = 0;
        if (batch == null) {
          return -1;
        }
      }
      int n = Math.min(len, batch.length() - position);
      System.arraycopy(batch.bytes(), position, into, off, n);
      position += n;
      return n;
    }
  }

  @Override
  public Tuple2<Object, Object> next() {
    if (!hasNext()) {
      throw new java.util.NoSuchElementException("no more records in " + describe());
    }
    metrics.incRecordsRead(1);
    return records.next();
  }

  /**
   * The next batch, opening generations as needed, or null (everything closed) when all is read.
   * Its bytes stay valid until the next call.
   */
  private ShuffleBatch nextBatch() {
    while (true) {
      if (reader == null) {
        if (pending.isEmpty() || closed) {
          closeReaders(); // not the stream: it is reading these last bytes
          return null;
        }
        generation = pending.poll();
        reader = open(generation);
      }
      ShuffleBatch batch;
      long start = System.nanoTime();
      try {
        batch = reader.next();
      } catch (ApplicationLimitException e) {
        // the server holds the application to a limit: rerunning the maps would not help
        close();
        throw new IllegalStateException(e.getMessage(), e);
      } catch (IOException e) {
        throw fetchFailed(e);
      } finally {
        metrics.incFetchWaitTime(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
      }
      if (batch == null) {
        metrics.incRemoteBlocksFetched(generation.blocks);
        reader.close();
        reader = null;
        continue;
      }
      metrics.incRemoteBytesRead(batch.length());
      return batch;
    }
  }

  private PartitionReader open(MapOutputsByGeneration.Generation g) {
    try {
      CommittedShuffle committed =
          commits.committedSplits(
              coordinator,
              handle.shuffleId(),
              g.id,
              handle.dependency().partitioner().numPartitions(),
              g.attempts.length,
              startPartition,
              endPartition,
              startMapIndex,
              endMapIndex);
      // the attempts that count are the ones Spark registered, not the coordinator's winners
      CommittedShuffle.Builder b = committed.toBuilder().clearWinningAttempts();
      for (int a : g.attempts) {
        b.addWinningAttempts(a);
      }
      return new PartitionReader(
          client, handle.appId(), g.id, b.build(), startMapIndex, endMapIndex);
    } catch (IOException | StatusException e) {
      throw fetchFailed(e);
    }
  }

  private RuntimeException fetchFailed(Exception cause) {
    close();
    String message =
        "Cannot read "
            + describe()
            + " from Sluice generation "
            + generation.id
            + ": "
            + cause.getMessage();
    return Sneaky.raise(
        new FetchFailedException(
            MapOutputLocation.of(generation.id, MapOutputLocation.hostHere(generation.id)),
            handle.shuffleId(),
            -1L,
            -1,
            startPartition,
            message,
            cause));
  }

  private String describe() {
    return handle.describe()
        + " partitions ["
        + startPartition
        + ", "
        + endPartition
        + ") maps ["
        + startMapIndex
        + ", "
        + endMapIndex
        + ")";
  }

  /** Releases fetched chunks and closes the deserialization stream; idempotent. */
  void close() {
    closeReaders();
    if (stream != null) {
      stream.close(); // a second time when it was read to its end: harmless
      stream = null;
    }
  }

  /** Drops the generations not read yet and releases the open reader's chunks. */
  private void closeReaders() {
    closed = true;
    pending.clear();
    records = null;
    if (reader != null) {
      reader.close();
      reader = null;
    }
  }
}
