package io.sluice.flink;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.flink.core.memory.MemorySegment;
import org.apache.flink.runtime.io.network.buffer.BufferPool;
import org.apache.flink.runtime.io.network.buffer.NetworkBufferPool;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The sort buffer on Flink's own network memory: segments from a real {@link BufferPool}. */
class RegionSortBufferTest {
  private static final int SEGMENT = 1024;

  private NetworkBufferPool network;
  private BufferPool pool;
  private final List<MemorySegment> taken = new ArrayList<>();

  @BeforeEach
  void setUp() throws Exception {
    network = new NetworkBufferPool(16, SEGMENT);
    pool = network.createBufferPool(6, 6);
  }

  @AfterEach
  void tearDown() {
    for (MemorySegment s : taken) {
      pool.recycle(s);
    }
    pool.lazyDestroy();
    assertThat(network.getNumberOfAvailableMemorySegments()).isEqualTo(16);
    network.destroy();
  }

  private List<MemorySegment> segments(int n) throws Exception {
    List<MemorySegment> list = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      MemorySegment s = pool.requestMemorySegmentBlocking();
      list.add(s);
      taken.add(s);
    }
    return list;
  }

  /** What a drain handed out: each subpartition's bytes, and the order subpartitions came in. */
  private static final class Collected implements RegionSortBuffer.Sink {
    final Map<Integer, ByteArrayOutputStream> bytes = new HashMap<>();
    final List<Integer> order = new ArrayList<>();
    int maxChunk;

    @Override
    public void write(int subpartition, ByteBuffer data) {
      if (order.isEmpty() || order.get(order.size() - 1) != subpartition) {
        order.add(subpartition);
      }
      maxChunk = Math.max(maxChunk, data.remaining());
      byte[] b = new byte[data.remaining()];
      data.get(b);
      bytes.computeIfAbsent(subpartition, s -> new ByteArrayOutputStream()).writeBytes(b);
    }

    byte[] of(int subpartition) {
      ByteArrayOutputStream out = bytes.get(subpartition);
      return out == null ? new byte[0] : out.toByteArray();
    }
  }

  private static byte[] record(Random random, int length) {
    byte[] b = new byte[length];
    random.nextBytes(b);
    return b;
  }

  @Test
  void handsOutRecordsGroupedBySubpartitionInAppendOrder() throws Exception {
    List<MemorySegment> segments = segments(5);
    RegionSortBuffer buffer = new RegionSortBuffer(segments.subList(1, 5), 4);
    Random random = new Random(7);
    Map<Integer, ByteArrayOutputStream> expected = new HashMap<>();
    int appended = 0;
    while (true) {
      int sub = random.nextInt(4);
      // lengths from empty to beyond a segment, so records straddle segments
      byte[] r = record(random, random.nextInt(3) == 0 ? random.nextInt(1500) : random.nextInt(40));
      ByteBuffer rb = ByteBuffer.wrap(r);
      if (!buffer.append(rb, sub)) {
        assertThat(rb.remaining()).as("a refused record is left untouched").isEqualTo(r.length);
        break;
      }
      assertThat(rb.hasRemaining()).isFalse();
      expected.computeIfAbsent(sub, s -> new ByteArrayOutputStream()).writeBytes(r);
      appended++;
    }
    assertThat(appended).isGreaterThan(10);
    assertThat(buffer.numRecords()).isEqualTo(appended);

    Collected out = new Collected();
    int calls = buffer.drainTo(out, segments.get(0));
    assertThat(calls).isGreaterThanOrEqualTo(out.order.size());
    assertThat(out.order).isSorted().doesNotHaveDuplicates();
    assertThat(out.maxChunk).isLessThanOrEqualTo(SEGMENT);
    for (int sub = 0; sub < 4; sub++) {
      ByteArrayOutputStream e = expected.get(sub);
      assertThat(out.of(sub)).isEqualTo(e == null ? new byte[0] : e.toByteArray());
    }
    assertThat(buffer.isEmpty()).isTrue();
  }

  @Test
  void isReusedAfterADrain() throws Exception {
    List<MemorySegment> segments = segments(3);
    RegionSortBuffer buffer = new RegionSortBuffer(segments.subList(1, 3), 3);
    Random random = new Random(11);
    for (int round = 0; round < 5; round++) {
      Map<Integer, ByteArrayOutputStream> expected = new HashMap<>();
      for (int i = 0; i < 20; i++) {
        int sub = (i * 7 + round) % 3;
        byte[] r = record(random, 30 + round);
        assertThat(buffer.append(ByteBuffer.wrap(r), sub)).isTrue();
        expected.computeIfAbsent(sub, s -> new ByteArrayOutputStream()).writeBytes(r);
      }
      Collected out = new Collected();
      buffer.drainTo(out, segments.get(0));
      for (int sub = 0; sub < 3; sub++) {
        assertThat(out.of(sub))
            .as("round %d sub %d", round, sub)
            .isEqualTo(expected.get(sub).toByteArray());
      }
    }
  }

  @Test
  void refusesRecordsLargerThanTheWholeBuffer() throws Exception {
    List<MemorySegment> segments = segments(3);
    RegionSortBuffer buffer = new RegionSortBuffer(segments.subList(1, 3), 2);
    int capacity = 2 * SEGMENT - RegionSortBuffer.HEADER_SIZE;
    assertThat(buffer.fitsWhenEmpty(capacity)).isTrue();
    assertThat(buffer.fitsWhenEmpty(capacity + 1)).isFalse();

    ByteBuffer tooLarge = ByteBuffer.wrap(new byte[capacity + 1]);
    assertThat(buffer.append(tooLarge, 1)).isFalse();
    assertThat(tooLarge.position()).isZero();
    assertThat(buffer.isEmpty()).isTrue();

    byte[] exact = record(new Random(3), capacity);
    assertThat(buffer.append(ByteBuffer.wrap(exact), 1)).isTrue();
    assertThat(buffer.append(ByteBuffer.wrap(new byte[0]), 0)).isFalse();
    Collected out = new Collected();
    buffer.drainTo(out, segments.get(0));
    assertThat(out.of(1)).isEqualTo(exact);
    assertThat(out.order).containsExactly(1);
  }

  @Test
  void broadcastRecordsKeptInOneListComeOutOnce() throws Exception {
    // the partition keeps broadcast records in a buffer of their own under subpartition 0
    List<MemorySegment> segments = segments(2);
    RegionSortBuffer buffer = new RegionSortBuffer(segments.subList(1, 2), 5);
    ByteArrayOutputStream expected = new ByteArrayOutputStream();
    for (int i = 0; i < 10; i++) {
      byte[] r = ("broadcast-" + i).getBytes(java.nio.charset.StandardCharsets.UTF_8);
      assertThat(buffer.append(ByteBuffer.wrap(r), 0)).isTrue();
      expected.writeBytes(r);
    }
    Collected out = new Collected();
    assertThat(buffer.drainTo(out, segments.get(0))).isEqualTo(1);
    assertThat(out.order).containsExactly(0);
    assertThat(out.of(0)).isEqualTo(expected.toByteArray());
  }

  @Test
  void skipsSegmentTailsTooShortForAHeader() throws Exception {
    List<MemorySegment> segments = segments(3);
    RegionSortBuffer buffer = new RegionSortBuffer(segments.subList(1, 3), 2);
    // leaves 5 bytes in the first segment: the next header goes to the second
    byte[] first = record(new Random(5), SEGMENT - RegionSortBuffer.HEADER_SIZE - 5);
    byte[] second = record(new Random(6), 100);
    assertThat(buffer.append(ByteBuffer.wrap(first), 1)).isTrue();
    assertThat(buffer.append(ByteBuffer.wrap(second), 1)).isTrue();
    Collected out = new Collected();
    buffer.drainTo(out, segments.get(0));
    ByteArrayOutputStream expected = new ByteArrayOutputStream();
    expected.writeBytes(first);
    expected.writeBytes(second);
    assertThat(out.of(1)).isEqualTo(expected.toByteArray());
  }
}
