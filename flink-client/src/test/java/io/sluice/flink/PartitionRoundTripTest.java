package io.sluice.flink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.client.mappartition.MapPartitionPlacement;
import io.sluice.protocol.MapPartitionId;
import io.sluice.testutil.TestCluster;
import java.io.ByteArrayOutputStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.apache.flink.runtime.event.AbstractEvent;
import org.apache.flink.runtime.io.network.TaskEventDispatcher;
import org.apache.flink.runtime.io.network.api.EndOfData;
import org.apache.flink.runtime.io.network.api.EndOfPartitionEvent;
import org.apache.flink.runtime.io.network.api.StopMode;
import org.apache.flink.runtime.io.network.buffer.Buffer;
import org.apache.flink.runtime.io.network.buffer.NetworkBufferPool;
import org.apache.flink.runtime.io.network.partition.PartitionNotFoundException;
import org.apache.flink.runtime.io.network.partition.ResultPartitionID;
import org.apache.flink.runtime.io.network.partition.ResultPartitionManager;
import org.apache.flink.runtime.io.network.partition.ResultPartitionType;
import org.apache.flink.runtime.io.network.partition.consumer.BufferOrEvent;
import org.apache.flink.runtime.io.network.partition.consumer.InputGate;
import org.apache.flink.runtime.jobgraph.IntermediateDataSetID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A {@link SluiceResultPartition} writes to a real server and a {@link SluiceInputGate} reads it
 * back, on Flink's own network buffers: every channel gets exactly its bytes, broadcast data and
 * events reach every channel, records larger than the sort buffer pass, and a lost partition is a
 * {@link PartitionNotFoundException}.
 */
class PartitionRoundTripTest {
  private static final int SEGMENT = 4096;
  private static final int SUBPARTITIONS = 3;
  private static final String APP = "flink-roundtrip";

  @TempDir Path tmp;
  private TestCluster cluster;
  private NetworkBufferPool network;
  private MapPartitionPlacement placement;
  private InetSocketAddress server;

  @BeforeEach
  void setUp() throws Exception {
    cluster = TestCluster.start(tmp, 1);
    network = new NetworkBufferPool(64, SEGMENT);
    server = InetSocketAddress.createUnresolved("127.0.0.1", cluster.server(0).port());
    placement = new MapPartitionPlacement(cluster.context(), APP, List.of(server), s -> {});
    placement.place(0, 4, SUBPARTITIONS).get(10, TimeUnit.SECONDS);
  }

  @AfterEach
  void tearDown() {
    placement.close();
    cluster.close();
    assertThat(network.getNumberOfAvailableMemorySegments())
        .as("every network buffer returned")
        .isEqualTo(64);
    network.destroy();
  }

  /** What one producer wrote, channel by channel, as the gate should deliver it. */
  private static final class Written {
    final SluiceShuffleDescriptor descriptor;
    final Map<Integer, ByteArrayOutputStream> bytes = new HashMap<>();
    long[] counted;

    Written(SluiceShuffleDescriptor descriptor) {
      this.descriptor = descriptor;
    }

    void add(int sub, byte[] b) {
      bytes.computeIfAbsent(sub, s -> new ByteArrayOutputStream()).writeBytes(b);
    }

    byte[] of(int sub) {
      ByteArrayOutputStream out = bytes.get(sub);
      return out == null ? new byte[0] : out.toByteArray();
    }
  }

  private SluiceShuffleDescriptor descriptor(int mapIndex) {
    return new SluiceShuffleDescriptor(
        new ResultPartitionID(),
        new MapPartitionId(APP, 0, mapIndex, 0),
        server.getHostString(),
        server.getPort(),
        SUBPARTITIONS);
  }

  private SluiceResultPartition partition(SluiceShuffleDescriptor d) throws Exception {
    SluiceResultPartition p =
        new SluiceResultPartition(
            "producer",
            0,
            d,
            ResultPartitionType.BLOCKING,
            SUBPARTITIONS,
            SUBPARTITIONS,
            new ResultPartitionManager(),
            // one staging buffer and a sort buffer of three
            () -> network.createBufferPool(4, 4),
            cluster.context(),
            SEGMENT);
    p.setup();
    return p;
  }

  /** Unicast records, a broadcast run, a record larger than the sort buffer, then end of data. */
  private Written produce(int mapIndex, long seed) throws Exception {
    Written w = new Written(descriptor(mapIndex));
    SluiceResultPartition p = partition(w.descriptor);
    Random random = new Random(seed);
    try {
      for (int i = 0; i < 400; i++) {
        int sub = random.nextInt(SUBPARTITIONS);
        byte[] r = new byte[1 + random.nextInt(200)];
        random.nextBytes(r);
        p.emitRecord(ByteBuffer.wrap(r), sub);
        w.add(sub, r);
        if (i == 150) {
          for (int j = 0; j < 5; j++) {
            byte[] b = ("broadcast " + mapIndex + "/" + j).getBytes("UTF-8");
            p.broadcastRecord(ByteBuffer.wrap(b));
            for (int s = 0; s < SUBPARTITIONS; s++) {
              w.add(s, b);
            }
          }
        }
        if (i == 300) {
          byte[] huge = new byte[5 * SEGMENT + 17];
          random.nextBytes(huge);
          p.emitRecord(ByteBuffer.wrap(huge), 2);
          w.add(2, huge);
        }
      }
      p.notifyEndOfData(StopMode.DRAIN);
      p.finish();
      w.counted = p.getResultPartitionBytes().createSnapshot().getSubpartitionBytes();
    } finally {
      p.close();
    }
    return w;
  }

  private SluiceInputGate gate(List<SluiceShuffleDescriptor> producers, int start, int end)
      throws Exception {
    List<ConsumedPartition> consumed = new ArrayList<>();
    for (SluiceShuffleDescriptor p : producers) {
      consumed.add(new ConsumedPartition(p, start, end));
    }
    return gate(consumed);
  }

  private SluiceInputGate gate(List<ConsumedPartition> consumed) throws Exception {
    FlinkChannelShim shim =
        new FlinkChannelShim(
            "consumer",
            0,
            new IntermediateDataSetID(),
            ResultPartitionType.BLOCKING,
            ConsumedPartition.channels(consumed),
            (dataSet, partition, handler) -> {},
            network,
            new ResultPartitionManager(),
            new TaskEventDispatcher());
    SluiceInputGate gate =
        new SluiceInputGate(
            "consumer",
            0,
            consumed,
            shim,
            () -> network.createBufferPool(2, 2),
            cluster.context(),
            1,
            SEGMENT);
    gate.setup();
    return gate;
  }

  /** Everything a gate delivered, per channel. */
  private static final class Read {
    final Map<Integer, ByteArrayOutputStream> bytes = new HashMap<>();
    final Map<Integer, List<Class<? extends AbstractEvent>>> events = new HashMap<>();

    byte[] of(int channel) {
      ByteArrayOutputStream out = bytes.get(channel);
      return out == null ? new byte[0] : out.toByteArray();
    }
  }

  private static Read readAll(InputGate gate) throws Exception {
    Read read = new Read();
    while (true) {
      Optional<BufferOrEvent> next = gate.pollNext();
      if (next.isEmpty()) {
        if (gate.isFinished()) {
          break;
        }
        gate.getAvailableFuture().get(30, TimeUnit.SECONDS);
        continue;
      }
      BufferOrEvent boe = next.get();
      int channel = boe.getChannelInfo().getInputChannelIdx();
      if (boe.isBuffer()) {
        Buffer buffer = boe.getBuffer();
        assertThat(buffer.getSize()).isLessThanOrEqualTo(SEGMENT);
        ByteBuffer nio = buffer.getNioBufferReadable();
        byte[] b = new byte[nio.remaining()];
        nio.get(b);
        buffer.recycleBuffer();
        read.bytes.computeIfAbsent(channel, c -> new ByteArrayOutputStream()).writeBytes(b);
      } else {
        read.events.computeIfAbsent(channel, c -> new ArrayList<>()).add(boe.getEvent().getClass());
      }
    }
    return read;
  }

  @Test
  void everyChannelGetsItsBytesThenEndOfDataThenEndOfPartition() throws Exception {
    Written a = produce(0, 1);
    Written b = produce(1, 2);
    assertThat(a.counted[2]).isEqualTo(a.of(2).length);

    SluiceInputGate gate = gate(List.of(a.descriptor, b.descriptor), 0, SUBPARTITIONS - 1);
    try {
      Read read = readAll(gate);
      assertThat(gate.getUnfinishedChannels()).isEmpty();
      assertThat(gate.hasReceivedEndOfData()).isEqualTo(InputGate.EndOfDataStatus.DRAINED);
      List<Written> producers = List.of(a, b);
      for (int p = 0; p < 2; p++) {
        for (int s = 0; s < SUBPARTITIONS; s++) {
          int channel = p * SUBPARTITIONS + s;
          assertThat(read.of(channel)).as("channel %d", channel).isEqualTo(producers.get(p).of(s));
          assertThat(read.events.get(channel))
              .containsExactly(EndOfData.class, EndOfPartitionEvent.class);
        }
      }
    } finally {
      gate.close();
    }
  }

  @Test
  void readsASubpartitionRange() throws Exception {
    Written a = produce(0, 3);
    SluiceInputGate gate = gate(List.of(a.descriptor), 1, 2);
    try {
      Read read = readAll(gate);
      assertThat(gate.getNumberOfInputChannels()).isEqualTo(2);
      assertThat(read.of(0)).isEqualTo(a.of(1));
      assertThat(read.of(1)).isEqualTo(a.of(2));
      assertThat(gate.getChannel(1).getConsumedSubpartitionIndexSet().contains(2)).isTrue();
    } finally {
      gate.close();
    }
  }

  /**
   * Flink 2.x's adaptive batch scheduler hands a consumer a range per producer (a skewed
   * subpartition's share of producers, or several small subpartitions): each producer's channels
   * carry its own range, producer-major.
   */
  @Test
  void readsARangePerProducer() throws Exception {
    Written a = produce(0, 5);
    Written b = produce(1, 6);
    SluiceInputGate gate =
        gate(
            List.of(
                new ConsumedPartition(a.descriptor, 2, 2),
                new ConsumedPartition(b.descriptor, 0, 1)));
    try {
      Read read = readAll(gate);
      assertThat(gate.getNumberOfInputChannels()).isEqualTo(3);
      assertThat(read.of(0)).isEqualTo(a.of(2));
      assertThat(read.of(1)).isEqualTo(b.of(0));
      assertThat(read.of(2)).isEqualTo(b.of(1));
      assertThat(gate.getChannel(0).getConsumedSubpartitionIndexSet().contains(2)).isTrue();
      assertThat(gate.getChannel(2).getConsumedSubpartitionIndexSet().contains(1)).isTrue();
      for (int channel = 0; channel < 3; channel++) {
        assertThat(read.events.get(channel))
            .containsExactly(EndOfData.class, EndOfPartitionEvent.class);
      }
    } finally {
      gate.close();
    }
  }

  @Test
  void aRangeOutsideThePartitionIsRefusedNamingIt() {
    SluiceShuffleDescriptor d = descriptor(0);
    assertThatThrownBy(() -> new ConsumedPartition(d, 1, SUBPARTITIONS))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("[1, 3]")
        .hasMessageContaining("3 subpartitions");
  }

  @Test
  void aLostPartitionIsAPartitionNotFoundExceptionForItsProducer() throws Exception {
    Written a = produce(0, 4);
    cluster.server(0).close();
    SluiceInputGate gate = gate(List.of(a.descriptor), 0, SUBPARTITIONS - 1);
    try {
      assertThatThrownBy(() -> readAll(gate))
          .isInstanceOf(PartitionNotFoundException.class)
          .satisfies(
              e ->
                  assertThat(((PartitionNotFoundException) e).getPartitionId())
                      .isEqualTo(a.descriptor.getResultPartitionID()));
    } finally {
      gate.close();
    }
  }
}
