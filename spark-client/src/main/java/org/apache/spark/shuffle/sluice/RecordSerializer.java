package org.apache.spark.shuffle.sluice;

import io.sluice.client.push.MapOutputPusher;
import io.sluice.client.push.RecordStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import org.apache.spark.serializer.SerializationStream;
import org.apache.spark.serializer.Serializer;
import org.apache.spark.serializer.SerializerInstance;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;

/**
 * Serializes a map task's records with the dependency's serializer into whole-record writes to the
 * pusher, so that every batch payload deserializes on its own.
 *
 * <p>A serializer that supports relocation of serialized objects (Kryo with auto-reset, Spark SQL's
 * UnsafeRow serializer) writes each record through one shared stream and hands its bytes to the
 * pusher, which packs them into per-partition batches: any concatenation of records reads back.
 * Others (Java serialization) need a stream per batch: each partition gets its own stream, closed
 * and pushed as one batch when it holds {@code sluice.push.bufferSize} bytes. Not thread safe.
 */
abstract class RecordSerializer {
  @SuppressWarnings("rawtypes")
  static final ClassTag OBJECT = ClassTag$.MODULE$.AnyRef();

  /** The records' serialized bytes written so far; for the write metrics. */
  abstract long bytesSerialized();

  /** Serializes one record into {@code partition}. */
  abstract void write(int partition, Object key, Object value) throws IOException;

  /** Hands every serialized byte held here to the pusher (which may still buffer them). */
  abstract void flushToPusher() throws IOException;

  /**
   * After the last record: hands every byte to the pusher and closes the serializer's streams,
   * which gives back what they borrowed. A Kryo stream holds one of Spark's pooled Kryo instances
   * until it is closed; one never closed is lost to the pool, and the next task builds a new
   * instance (class registrations, field serializers by reflection: milliseconds, and code to
   * compile again).
   */
  abstract void close() throws IOException;

  static RecordSerializer create(
      Serializer serializer, MapOutputPusher pusher, int bufferSize, int numPartitions) {
    SerializerInstance instance = serializer.newInstance();
    return serializer.supportsRelocationOfSerializedObjects()
        ? new Shared(instance, pusher)
        : new PerPartition(instance, pusher, bufferSize, numPartitions);
  }

  /** A growable byte buffer whose array is handed out without a copy. */
  static final class Bytes extends ByteArrayOutputStream {
    Bytes(int size) {
      super(size);
    }

    byte[] array() {
      return buf;
    }
  }

  /**
   * One stream for all records, writing each record straight into its partition's buffer in the
   * pusher ({@link RecordStream}): the serializer's bytes are copied once.
   */
  private static final class Shared extends RecordSerializer {
    private final RecordStream records;
    private final SerializationStream stream;
    private long total;

    Shared(SerializerInstance instance, MapOutputPusher pusher) {
      this.records = pusher.recordStream();
      this.stream = instance.serializeStream(records);
    }

    @Override
    @SuppressWarnings("unchecked")
    void write(int partition, Object key, Object value) throws IOException {
      records.startRecord(partition);
      stream.writeKey(key, OBJECT);
      stream.writeValue(value, OBJECT);
      stream.flush();
      total += records.endRecord();
    }

    @Override
    void flushToPusher() {}

    /** The stream wrote each record whole and flushed it, so closing it writes nothing more. */
    @Override
    void close() throws IOException {
      stream.close();
    }

    @Override
    long bytesSerialized() {
      return total;
    }
  }

  /** A stream per partition, each closed into one batch. */
  private static final class PerPartition extends RecordSerializer {
    private final SerializerInstance instance;
    private final MapOutputPusher pusher;
    private final int bufferSize;
    private final Bytes[] buffers;
    private final SerializationStream[] streams;
    private long total;

    PerPartition(
        SerializerInstance instance, MapOutputPusher pusher, int bufferSize, int numPartitions) {
      this.instance = instance;
      this.pusher = pusher;
      this.bufferSize = bufferSize;
      this.buffers = new Bytes[numPartitions];
      this.streams = new SerializationStream[numPartitions];
    }

    @Override
    @SuppressWarnings("unchecked")
    void write(int partition, Object key, Object value) throws IOException {
      SerializationStream s = streams[partition];
      if (s == null) {
        if (buffers[partition] == null) {
          buffers[partition] = new Bytes(Math.min(bufferSize, 8192));
        }
        s = instance.serializeStream(buffers[partition]);
        streams[partition] = s;
      }
      s.writeKey(key, OBJECT);
      s.writeValue(value, OBJECT);
      if (buffers[partition].size() >= bufferSize) {
        closeInto(partition);
      }
    }

    /** Closes the partition's stream and hands its bytes to the pusher as one write. */
    private void closeInto(int partition) throws IOException {
      streams[partition].close();
      streams[partition] = null;
      Bytes b = buffers[partition];
      pusher.write(partition, b.array(), 0, b.size());
      total += b.size();
      buffers[partition] = null;
    }

    @Override
    void flushToPusher() throws IOException {
      for (int p = 0; p < streams.length; p++) {
        if (streams[p] != null) {
          closeInto(p);
        }
      }
    }

    /** Each partition's stream is closed when it goes to the pusher. */
    @Override
    void close() throws IOException {
      flushToPusher();
    }

    @Override
    long bytesSerialized() {
      return total;
    }
  }
}
