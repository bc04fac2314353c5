package org.apache.spark.shuffle.sluice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyInt;
import static org.mockito.Mockito.doAnswer;
import static org.mockito.Mockito.mock;

import io.sluice.client.push.MapOutputPusher;
import java.io.ByteArrayInputStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.SparkConf;
import org.apache.spark.serializer.JavaSerializer;
import org.apache.spark.serializer.KryoSerializer;
import org.apache.spark.serializer.Serializer;
import org.junit.jupiter.api.Test;
import scala.Tuple2;
import scala.collection.Iterator;

/** Every write the writer hands the pusher must decode on its own (a batch is any run of them). */
class RecordSerializerTest {
  private static final int BUFFER = 1024;

  /** Pusher writes per partition, captured. */
  private static Map<Integer, List<byte[]>> capture(MapOutputPusher pusher) throws Exception {
    Map<Integer, List<byte[]>> writes = new HashMap<>();
    doAnswer(
            inv -> {
              byte[] src = inv.getArgument(1);
              int off = inv.getArgument(2);
              int len = inv.getArgument(3);
              byte[] copy = java.util.Arrays.copyOfRange(src, off, off + len);
              writes.computeIfAbsent(inv.getArgument(0), p -> new ArrayList<>()).add(copy);
              return null;
            })
        .when(pusher)
        .write(anyInt(), any(byte[].class), anyInt(), anyInt());
    return writes;
  }

  private static List<String> decode(Serializer serializer, byte[] bytes) {
    Iterator<Tuple2<Object, Object>> it =
        serializer
            .newInstance()
            .deserializeStream(new ByteArrayInputStream(bytes))
            .asKeyValueIterator();
    List<String> out = new ArrayList<>();
    while (it.hasNext()) {
      Tuple2<Object, Object> t = it.next();
      out.add(t._1() + "=" + t._2());
    }
    return out;
  }

  private static void roundTrip(Serializer serializer, boolean eachWriteIsOneRecord)
      throws Exception {
    MapOutputPusher pusher = mock(MapOutputPusher.class);
    Map<Integer, List<byte[]>> writes = capture(pusher);
    RecordSerializer records = RecordSerializer.create(serializer, pusher, BUFFER, 3);
    Map<Integer, List<String>> expected = new HashMap<>();
    for (int i = 0; i < 500; i++) {
      int p = i % 3;
      String value = "value-" + i + "-" + "x".repeat(i % 40);
      records.write(p, i, value);
      expected.computeIfAbsent(p, k -> new ArrayList<>()).add(i + "=" + value);
    }
    records.flushToPusher();
    for (int p = 0; p < 3; p++) {
      List<String> decoded = new ArrayList<>();
      for (byte[] w : writes.get(p)) {
        List<String> one = decode(serializer, w);
        if (eachWriteIsOneRecord) {
          assertThat(one).hasSize(1);
        }
        decoded.addAll(one);
      }
      assertThat(decoded).isEqualTo(expected.get(p));
    }
    assertThat(records.bytesSerialized())
        .isEqualTo(writes.values().stream().flatMap(List::stream).mapToLong(b -> b.length).sum());
  }

  @Test
  void relocatableSerializerHandsOverOneRecordAtATime() throws Exception {
    KryoSerializer kryo = new KryoSerializer(new SparkConf(false));
    assertThat(kryo.supportsRelocationOfSerializedObjects()).isTrue();
    roundTrip(kryo, true);
  }

  @Test
  void otherSerializersHandOverWholeStreamsOfAboutABufferEach() throws Exception {
    JavaSerializer java = new JavaSerializer(new SparkConf(false));
    assertThat(java.supportsRelocationOfSerializedObjects()).isFalse();
    roundTrip(java, false);
  }
}
