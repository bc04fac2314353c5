package org.apache.spark.shuffle.sluice;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.client.push.MapOutputPusher;
import io.sluice.client.read.PartitionReader;
import io.sluice.client.read.ShuffleBatch;
import io.sluice.testutil.TestCluster;
import java.io.ByteArrayInputStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.SparkConf;
import org.apache.spark.serializer.JavaSerializer;
import org.apache.spark.serializer.KryoSerializer;
import org.apache.spark.serializer.Serializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import scala.Tuple2;
import scala.collection.Iterator;

/**
 * Records serialized by a map task, pushed to a real server and read back: every batch decodes on
 * its own (a batch is a run of whole records, in the order written), and the bytes counted as
 * serialized are the bytes read.
 */
class RecordSerializerTest {
  private static final int BUFFER = 1024;
  private static final int PARTITIONS = 3;

  @TempDir Path tmp;

  private static List<String> decode(Serializer serializer, byte[] bytes, int length) {
    Iterator<Tuple2<Object, Object>> it =
        serializer
            .newInstance()
            .deserializeStream(new ByteArrayInputStream(bytes, 0, length))
            .asKeyValueIterator();
    List<String> out = new ArrayList<>();
    while (it.hasNext()) {
      Tuple2<Object, Object> t = it.next();
      out.add(t._1() + "=" + t._2());
    }
    return out;
  }

  /** Writes 500 records, some past the buffer size; returns the largest batch read. */
  private int roundTrip(Serializer serializer) throws Exception {
    Map<String, String> conf = Map.of("sluice.push.bufferSize", "" + BUFFER);
    try (TestCluster cluster = TestCluster.start(tmp, 1, conf)) {
      cluster.coordinator().registerShuffle(0, 1, PARTITIONS);
      Map<Integer, List<String>> expected = new HashMap<>();
      long serialized;
      try (MapOutputPusher pusher = cluster.pusher(0, 0, 0)) {
        RecordSerializer records = RecordSerializer.create(serializer, pusher, BUFFER, PARTITIONS);
        for (int i = 0; i < 500; i++) {
          int p = i % PARTITIONS;
          String value = "value-" + i + "-" + "x".repeat(i % 97 == 3 ? 3000 : i % 40);
          records.write(p, i, value);
          expected.computeIfAbsent(p, k -> new ArrayList<>()).add(i + "=" + value);
        }
        records.close();
        pusher.finish();
        serialized = records.bytesSerialized();
      }
      Map<Integer, List<String>> decoded = new HashMap<>();
      long read = 0;
      int largest = 0;
      try (PartitionReader reader = cluster.reader(0, 0, PARTITIONS, 0, 1)) {
        for (ShuffleBatch b = reader.next(); b != null; b = reader.next()) {
          List<String> batch = decode(serializer, b.bytes(), b.length());
          // a batch holds records in the order they were written
          List<Integer> ids = new ArrayList<>();
          batch.forEach(r -> ids.add(Integer.parseInt(r.substring(0, r.indexOf('=')))));
          assertThat(ids).isSorted();
          decoded.computeIfAbsent(b.partitionId(), k -> new ArrayList<>()).addAll(batch);
          read += b.length();
          largest = Math.max(largest, b.length());
        }
      }
      // batches of one map may arrive in another order than pushed (each is acknowledged alone)
      for (int p = 0; p < PARTITIONS; p++) {
        assertThat(decoded.get(p)).containsExactlyInAnyOrderElementsOf(expected.get(p));
      }
      assertThat(serialized).isEqualTo(read);
      return largest;
    }
  }

  @Test
  void relocatableSerializerWritesWholeRecordsIntoThePushBuffers() throws Exception {
    KryoSerializer kryo = new KryoSerializer(new SparkConf(false));
    assertThat(kryo.supportsRelocationOfSerializedObjects()).isTrue();
    // records packed up to the buffer size; a record past it travels alone
    assertThat(roundTrip(kryo)).isGreaterThan(3000).isLessThan(3000 + BUFFER);
  }

  @Test
  void otherSerializersHandOverWholeStreamsOfAboutABufferEach() throws Exception {
    JavaSerializer java = new JavaSerializer(new SparkConf(false));
    assertThat(java.supportsRelocationOfSerializedObjects()).isFalse();
    assertThat(roundTrip(java)).isGreaterThan(3000);
  }

  @Test
  void mapTasksGiveTheirKryoBackToSparksPool() throws Exception {
    KryoSerializer kryo =
        new KryoSerializer(
            new SparkConf(false)
                .set("spark.kryo.registrator", CountingKryoRegistrator.class.getName()));
    assertThat(kryo.supportsRelocationOfSerializedObjects()).isTrue();
    int before = CountingKryoRegistrator.BUILT.get();
    try (TestCluster cluster = TestCluster.start(tmp, 1, Map.of())) {
      cluster.coordinator().registerShuffle(0, 5, PARTITIONS);
      for (int map = 0; map < 5; map++) {
        try (MapOutputPusher pusher = cluster.pusher(0, map, 0)) {
          RecordSerializer records = RecordSerializer.create(kryo, pusher, BUFFER, PARTITIONS);
          for (int i = 0; i < 10; i++) {
            records.write(i % PARTITIONS, i, "value-" + i);
          }
          records.close();
          pusher.finish();
        }
      }
    }
    // one instance, borrowed and given back by every task; not one built per task
    assertThat(CountingKryoRegistrator.BUILT.get() - before).isLessThanOrEqualTo(1);
  }
}
