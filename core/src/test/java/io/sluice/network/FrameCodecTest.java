package io.sluice.network;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import com.google.protobuf.MessageLite;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.DecoderException;
import io.sluice.protocol.MessageType;
import io.sluice.protocol.SluiceProtocol;
import io.sluice.protocol.proto.AppRegistration;
import io.sluice.protocol.proto.AuthHello;
import io.sluice.protocol.proto.AuthProof;
import io.sluice.protocol.proto.CloseStream;
import io.sluice.protocol.proto.CommitMapPartition;
import io.sluice.protocol.proto.CommitResult;
import io.sluice.protocol.proto.CommitShuffle;
import io.sluice.protocol.proto.CommittedSplit;
import io.sluice.protocol.proto.FetchChunk;
import io.sluice.protocol.proto.GetCommittedSplits;
import io.sluice.protocol.proto.GetShuffleLocations;
import io.sluice.protocol.proto.Heartbeat;
import io.sluice.protocol.proto.Hello;
import io.sluice.protocol.proto.MapPartitionRef;
import io.sluice.protocol.proto.MapperEnd;
import io.sluice.protocol.proto.OpenMapStream;
import io.sluice.protocol.proto.OpenStream;
import io.sluice.protocol.proto.PushData;
import io.sluice.protocol.proto.PushMerged;
import io.sluice.protocol.proto.ReadMapBuffer;
import io.sluice.protocol.proto.RegionData;
import io.sluice.protocol.proto.RegionFinish;
import io.sluice.protocol.proto.RegionStart;
import io.sluice.protocol.proto.RegisterShuffle;
import io.sluice.protocol.proto.ReleaseMapPartition;
import io.sluice.protocol.proto.ReportChecksumFailure;
import io.sluice.protocol.proto.Response;
import io.sluice.protocol.proto.RevivePartition;
import io.sluice.protocol.proto.Status;
import io.sluice.protocol.proto.UnregisterApplication;
import io.sluice.protocol.proto.UnregisterShuffle;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Every message through the real encoder and decoder, byte by byte, and the failure paths. */
class FrameCodecTest {
  private static final int MAX_FRAME = 1 << 20;

  /** A server's inbound memory that always has room (and counts nothing). */
  private static final InboundMemory UNBOUNDED_MEMORY =
      new InboundMemory() {
        @Override
        public boolean tryReserve(long bytes) {
          return true;
        }

        @Override
        public void release(long bytes) {}

        @Override
        public long max() {
          return Long.MAX_VALUE;
        }
      };

  private static Map<MessageType, MessageLite> samples() {
    Map<MessageType, MessageLite> m = new EnumMap<>(MessageType.class);
    m.put(
        MessageType.AUTH_HELLO,
        AuthHello.newBuilder()
            .setRequestId(4)
            .setAppId("app-1")
            .setClientNonce(ByteString.copyFrom(new byte[16]))
            .setRegistration(
                AppRegistration.newBuilder()
                    .setNonce(ByteString.copyFrom(new byte[16]))
                    .setSealedKey(ByteString.copyFrom(new byte[32]))
                    .setMac(ByteString.copyFrom(new byte[32])))
            .build());
    m.put(
        MessageType.HELLO,
        Hello.newBuilder().setRequestId(3).setProtocolVersion(2).setRelease("0.2.0").build());
    m.put(
        MessageType.AUTH_PROOF,
        AuthProof.newBuilder()
            .setRequestId(5)
            .setClientProof(ByteString.copyFrom(new byte[32]))
            .build());
    m.put(
        MessageType.RESPONSE,
        Response.newBuilder()
            .setRequestId(1)
            .setStatus(Status.OK)
            .setCommit(
                CommitResult.newBuilder()
                    .addSplits(
                        CommittedSplit.newBuilder()
                            .setPartitionId(3)
                            .setLength(10)
                            .addChunkOffsets(0)
                            .addChunkOffsets(10)))
            .build());
    m.put(
        MessageType.REGISTER_SHUFFLE,
        RegisterShuffle.newBuilder().setRequestId(2).setAppId("a").setShuffleId(1).build());
    m.put(MessageType.HEARTBEAT, Heartbeat.newBuilder().setRequestId(3).setAppId("a").build());
    m.put(
        MessageType.UNREGISTER_SHUFFLE,
        UnregisterShuffle.newBuilder().setRequestId(4).setAppId("a").setShuffleId(1).build());
    m.put(
        MessageType.UNREGISTER_APPLICATION,
        UnregisterApplication.newBuilder().setRequestId(5).setAppId("a").build());
    m.put(
        MessageType.PUSH_DATA,
        PushData.newBuilder()
            .setRequestId(6)
            .setAppId("a")
            .setShuffleId(1)
            .setPartitionId(7)
            .setEpoch(2)
            .build());
    m.put(
        MessageType.PUSH_MERGED,
        PushMerged.newBuilder()
            .setRequestId(6)
            .setAppId("a")
            .setShuffleId(1)
            .addPartitionIds(7)
            .addEpochs(2)
            .addLengths(100)
            .build());
    m.put(
        MessageType.COMMIT_SHUFFLE,
        CommitShuffle.newBuilder().setRequestId(7).setAppId("a").setShuffleId(1).build());
    m.put(
        MessageType.OPEN_STREAM,
        OpenStream.newBuilder()
            .setRequestId(8)
            .setAppId("a")
            .setShuffleId(1)
            .setPartitionId(2)
            .setStartMapIndex(0)
            .setEndMapIndex(5)
            .build());
    m.put(
        MessageType.FETCH_CHUNK,
        FetchChunk.newBuilder().setRequestId(9).setStreamId(11).setChunkIndex(3).build());
    m.put(
        MessageType.CLOSE_STREAM,
        CloseStream.newBuilder().setRequestId(10).setStreamId(11).build());
    m.put(
        MessageType.GET_SHUFFLE_LOCATIONS,
        GetShuffleLocations.newBuilder().setRequestId(11).setShuffleId(1).build());
    m.put(
        MessageType.MAPPER_END,
        MapperEnd.newBuilder()
            .setRequestId(12)
            .setShuffleId(1)
            .setMapIndex(4)
            .setAttempt(1)
            .build());
    m.put(
        MessageType.GET_COMMITTED_SPLITS,
        GetCommittedSplits.newBuilder()
            .setRequestId(13)
            .setShuffleId(1)
            .setStartPartition(0)
            .setEndPartition(9)
            .build());
    m.put(
        MessageType.REPORT_CHECKSUM_FAILURE,
        ReportChecksumFailure.newBuilder()
            .setRequestId(15)
            .setAppId("app-1")
            .setShuffleId(1)
            .setPartitionId(2)
            .setReason("test")
            .build());
    m.put(
        MessageType.REVIVE_PARTITION,
        RevivePartition.newBuilder()
            .setRequestId(14)
            .setShuffleId(1)
            .setPartitionId(2)
            .setFailedEpoch(0)
            .setReason("test")
            .build());
    MapPartitionRef ref =
        MapPartitionRef.newBuilder()
            .setAppId("app-1")
            .setShuffleId(1)
            .setMapIndex(2)
            .setAttempt(1)
            .build();
    m.put(
        MessageType.REGION_START,
        RegionStart.newBuilder()
            .setRequestId(15)
            .setPartition(ref)
            .setNumSubpartitions(8)
            .setRegionIndex(3)
            .setBroadcast(true)
            .build());
    m.put(
        MessageType.REGION_DATA,
        RegionData.newBuilder()
            .setRequestId(16)
            .setPartition(ref)
            .setRegionIndex(3)
            .setSequence(7)
            .build());
    m.put(
        MessageType.REGION_FINISH,
        RegionFinish.newBuilder().setRequestId(17).setPartition(ref).setRegionIndex(3).build());
    m.put(
        MessageType.COMMIT_MAP_PARTITION,
        CommitMapPartition.newBuilder()
            .setRequestId(18)
            .setPartition(ref)
            .setNumRegions(4)
            .build());
    m.put(
        MessageType.RELEASE_MAP_PARTITION,
        ReleaseMapPartition.newBuilder().setRequestId(19).setPartition(ref).build());
    m.put(
        MessageType.OPEN_MAP_STREAM,
        OpenMapStream.newBuilder()
            .setRequestId(20)
            .setPartition(ref)
            .setStartSubpartition(2)
            .setEndSubpartition(5)
            .build());
    m.put(
        MessageType.READ_MAP_BUFFER,
        ReadMapBuffer.newBuilder().setRequestId(21).setStreamId(99).build());
    return m;
  }

  private static EmbeddedChannel channel() {
    return new EmbeddedChannel(
        FrameEncoder.INSTANCE,
        new FrameDecoder(SluiceProtocol.INSTANCE, MAX_FRAME, MAX_FRAME, UNBOUNDED_MEMORY, false));
  }

  /** Encodes on one channel and returns the bytes as one buffer. */
  private static ByteBuf encode(Message message) {
    EmbeddedChannel out = channel();
    assertThat(out.writeOutbound(message)).isTrue();
    ByteBuf all = Unpooled.buffer();
    ByteBuf part;
    while ((part = out.readOutbound()) != null) {
      all.writeBytes(part);
      part.release();
    }
    out.finishAndReleaseAll();
    return all;
  }

  @Test
  void everyMessageTypeRoundTripsWithAndWithoutBody() {
    Map<MessageType, MessageLite> samples = samples();
    assertThat(samples.keySet()).containsExactlyInAnyOrder(MessageType.values());
    for (Map.Entry<MessageType, MessageLite> e : samples.entrySet()) {
      for (boolean withBody : new boolean[] {false, true}) {
        long id = SluiceProtocol.INSTANCE.requestId(e.getKey().id(), e.getValue());
        Message sent =
            withBody
                ? Message.withBody(
                    e.getKey().id(), e.getValue(), id, Unpooled.wrappedBuffer(new byte[] {1, 2, 3}))
                : Message.of(e.getKey().id(), e.getValue(), id);
        ByteBuf wire = encode(sent);
        int headerLength = e.getValue().getSerializedSize();
        assertThat(wire.getInt(0)).isEqualTo(5 + headerLength + (withBody ? 3 : 0));
        assertThat(wire.getByte(4)).isEqualTo(e.getKey().id());
        assertThat(wire.getInt(5)).isEqualTo(headerLength);

        EmbeddedChannel in = channel();
        in.writeInbound(wire);
        Message received = in.readInbound();
        assertThat(received.type()).isEqualTo(e.getKey().id());
        assertThat(received.header()).isEqualTo(e.getValue());
        assertThat(received.requestId()).isEqualTo(id);
        assertThat(received.bodyLength()).isEqualTo(withBody ? 3 : 0);
        if (withBody) {
          assertThat(received.body().getByte(received.body().readerIndex() + 2))
              .isEqualTo((byte) 3);
        }
        received.release();
        assertThat(in.finishAndReleaseAll()).isFalse();
      }
    }
  }

  /**
   * A merged push's large parts arrive in buffers of their own, small parts in a row share one
   * (written across them as the frame comes in, a few bytes at a time), so a large part a server
   * keeps does not keep the others' memory, and small parts cost one buffer per run.
   */
  @Test
  void mergedPushLargePartsArriveInBuffersOfTheirOwnAndSmallOnesShareOnePerRun() {
    int small = FrameDecoder.SHARED_PART_MAX;
    int[] lengths = {100, small + 1, 30, small, 40, 5000, 20};
    int[] runs = {100, small + 1, 30 + small + 40, 5000, 20};
    PushMerged.Builder header =
        PushMerged.newBuilder().setRequestId(6).setAppId("a").setShuffleId(1);
    ByteBuf body = Unpooled.buffer();
    for (int i = 0; i < lengths.length; i++) {
      header.addPartitionIds(i).addEpochs(0).addLengths(lengths[i]);
      for (int b = 0; b < lengths[i]; b++) {
        body.writeByte(i * 30 + b % 30);
      }
    }
    ByteBuf wire = encode(Message.withBody(MessageType.PUSH_MERGED.id(), header.build(), 6, body));
    EmbeddedChannel in = channel();
    while (wire.isReadable()) {
      in.writeInbound(wire.readRetainedSlice(Math.min(7, wire.readableBytes())));
    }
    wire.release();
    Message m = in.readInbound();

    assertThat(m.body()).isInstanceOf(CompositeByteBuf.class);
    CompositeByteBuf parts = (CompositeByteBuf) m.body();
    assertThat(parts.numComponents()).isEqualTo(runs.length);
    ByteBuf[] buffers = new ByteBuf[runs.length];
    for (int i = 0; i < runs.length; i++) {
      buffers[i] = parts.internalComponent(i);
      assertThat(buffers[i].readableBytes()).isEqualTo(runs[i]);
    }
    // the third run holds parts 2, 3 and 4 back to back
    assertThat(buffers[2].getByte(buffers[2].readerIndex() + 7)).isEqualTo((byte) (2 * 30 + 7));
    assertThat(buffers[2].getByte(buffers[2].readerIndex() + 30 + small + 7))
        .isEqualTo((byte) (4 * 30 + 7));
    ByteBuf kept = parts.component(3).retain();
    m.release();
    for (int i : new int[] {0, 1, 2, 4}) {
      assertThat(buffers[i].refCnt()).as("a run not kept").isZero();
    }
    assertThat(kept.refCnt()).isEqualTo(1);
    assertThat(kept.getByte(kept.readerIndex() + 4999)).isEqualTo((byte) (5 * 30 + 4999 % 30));
    kept.release();
    assertThat(in.finishAndReleaseAll()).isFalse();
  }

  /**
   * Random merged pushes of small and large parts, received a few bytes at a time: every part comes
   * out of the received body with its own bytes, a large part as a whole buffer of its own and a
   * small one as a slice; once the message and the parts are released, nothing is held.
   */
  @Test
  void everyPartOfRandomMergedPushesComesOutWithItsBytes() {
    java.util.Random random = new java.util.Random(42);
    int small = FrameDecoder.SHARED_PART_MAX;
    for (int round = 0; round < 200; round++) {
      int count = 1 + random.nextInt(12);
      int[] lengths = new int[count];
      PushMerged.Builder header =
          PushMerged.newBuilder().setRequestId(round).setAppId("a").setShuffleId(1);
      ByteBuf body = Unpooled.buffer();
      for (int i = 0; i < count; i++) {
        int kind = random.nextInt(4);
        lengths[i] =
            kind == 0
                ? 1 + random.nextInt(60)
                : kind == 1 ? small - 2 + random.nextInt(5) : 1 + random.nextInt(3 * small);
        header.addPartitionIds(i).addEpochs(0).addLengths(lengths[i]);
        for (int b = 0; b < lengths[i]; b++) {
          body.writeByte(i * 17 + b);
        }
      }
      ByteBuf wire =
          encode(Message.withBody(MessageType.PUSH_MERGED.id(), header.build(), round, body));
      EmbeddedChannel in = channel();
      while (wire.isReadable()) {
        in.writeInbound(
            wire.readRetainedSlice(Math.min(1 + random.nextInt(500), wire.readableBytes())));
      }
      wire.release();
      Message m = in.readInbound();
      ByteBuf[] parts = new ByteBuf[count];
      int offset = m.body().readerIndex();
      for (int i = 0; i < count; i++) {
        parts[i] = FrameDecoder.retainedPart(m.body(), offset, lengths[i]);
        offset += lengths[i];
      }
      m.release();
      for (int i = 0; i < count; i++) {
        ByteBuf part = parts[i];
        assertThat(part.readableBytes()).as("round %d part %d", round, i).isEqualTo(lengths[i]);
        byte[] bytes = new byte[lengths[i]];
        part.getBytes(part.readerIndex(), bytes);
        for (int b = 0; b < lengths[i]; b++) {
          if (bytes[b] != (byte) (i * 17 + b)) {
            throw new AssertionError("round " + round + " part " + i + " byte " + b + " differs");
          }
        }
        if (lengths[i] > small) {
          assertThat(part.capacity())
              .as("a large part is a buffer of its own")
              .isEqualTo(lengths[i]);
        }
        assertThat(part.release())
            .as("round %d part %d was the last reference", round, i)
            .isEqualTo(lengths[i] > small || lastOfItsRun(lengths, i, small));
      }
      assertThat(in.finishAndReleaseAll()).isFalse();
    }
  }

  /**
   * A small part borrowed from a received merged push (as the server's intake does, to copy it) has
   * its own bytes and takes no reference: the body's buffers are freed by the message's release
   * alone.
   */
  @Test
  void aBorrowedSmallPartHasItsBytesAndTakesNoReference() {
    int small = FrameDecoder.SHARED_PART_MAX;
    int[] lengths = {10, small, 3 * small, 1, small - 1, 2 * small + 1, 7};
    PushMerged.Builder header =
        PushMerged.newBuilder().setRequestId(1).setAppId("a").setShuffleId(1);
    ByteBuf body = Unpooled.buffer();
    for (int i = 0; i < lengths.length; i++) {
      header.addPartitionIds(i).addEpochs(0).addLengths(lengths[i]);
      for (int b = 0; b < lengths[i]; b++) {
        body.writeByte(i * 31 + b);
      }
    }
    ByteBuf wire = encode(Message.withBody(MessageType.PUSH_MERGED.id(), header.build(), 1, body));
    EmbeddedChannel in = channel();
    while (wire.isReadable()) {
      in.writeInbound(wire.readRetainedSlice(Math.min(333, wire.readableBytes())));
    }
    wire.release();
    Message m = in.readInbound();
    CompositeByteBuf runs = (CompositeByteBuf) m.body();
    int[] refCounts = new int[runs.numComponents()];
    for (int c = 0; c < refCounts.length; c++) {
      refCounts[c] = runs.internalComponent(c).refCnt();
    }
    int offset = m.body().readerIndex();
    for (int i = 0; i < lengths.length; i++) {
      if (lengths[i] <= small) {
        ByteBuf part = FrameDecoder.borrowedPart(m.body(), offset, lengths[i]);
        assertThat(part.readableBytes()).as("part %d", i).isEqualTo(lengths[i]);
        for (int b = 0; b < lengths[i]; b++) {
          assertThat(part.getByte(part.readerIndex() + b))
              .as("part %d byte %d", i, b)
              .isEqualTo((byte) (i * 31 + b));
        }
      }
      offset += lengths[i];
    }
    for (int c = 0; c < refCounts.length; c++) {
      assertThat(runs.internalComponent(c).refCnt()).as("run %d", c).isEqualTo(refCounts[c]);
    }
    ByteBuf[] buffers = new ByteBuf[refCounts.length];
    for (int c = 0; c < buffers.length; c++) {
      buffers[c] = runs.internalComponent(c);
    }
    m.release();
    for (ByteBuf b : buffers) {
      assertThat(b.refCnt()).as("freed with the message").isZero();
    }
    assertThat(in.finishAndReleaseAll()).isFalse();
  }

  /**
   * Whether small part {@code i} is the last of its run (the small parts in a row that share a
   * buffer): released in order, it is the one that frees the buffer.
   */
  private static boolean lastOfItsRun(int[] lengths, int i, int small) {
    int after = i + 1;
    return after >= lengths.length || lengths[after] > small;
  }

  @Test
  void frameSplitAcrossReadsDecodesOnceComplete() {
    MessageLite header = samples().get(MessageType.PUSH_DATA);
    ByteBuf wire =
        encode(
            Message.withBody(
                MessageType.PUSH_DATA.id(), header, 6, Unpooled.wrappedBuffer(new byte[100])));
    EmbeddedChannel in = channel();
    while (wire.readableBytes() > 7) {
      in.writeInbound(wire.readRetainedSlice(7));
      if (wire.readableBytes() > 7) {
        assertThat(in.inboundMessages()).isEmpty();
      }
    }
    in.writeInbound(wire.readRetainedSlice(wire.readableBytes()));
    wire.release();
    Message m = in.readInbound();
    assertThat(m.bodyLength()).isEqualTo(100);
    m.release();
    in.finishAndReleaseAll();
  }

  /** Inbound memory of {@code max} bytes that counts what it holds. */
  private static final class CountedMemory implements InboundMemory {
    final long max;
    long held;

    CountedMemory(long max) {
      this.max = max;
    }

    @Override
    public boolean tryReserve(long bytes) {
      if (held + bytes > max) {
        return false;
      }
      held += bytes;
      return true;
    }

    @Override
    public void release(long bytes) {
      held -= bytes;
    }

    @Override
    public long max() {
      return max;
    }
  }

  /**
   * A data frame that began arriving while the budget was full waits for memory with a retry; if
   * the rest of it arrives before the retry succeeds (a read already under way when the connection
   * paused), it goes on unreserved (to be answered CONGESTED), and the retry must stop: a retry
   * that succeeded later would reserve memory for a frame already gone, which no message and no
   * split would ever give back, and would leave the connection's reads paused.
   */
  @Test
  void aFrameThatArrivesWholeWhileWaitingForMemoryLeavesNoReservationBehind() {
    CountedMemory memory = new CountedMemory(1000);
    assertThat(memory.tryReserve(1000)).as("the budget is full").isTrue();
    EmbeddedChannel in =
        new EmbeddedChannel(
            new FrameDecoder(SluiceProtocol.INSTANCE, MAX_FRAME, MAX_FRAME, memory, false));
    ByteBuf wire =
        encode(
            Message.withBody(
                MessageType.PUSH_DATA.id(),
                samples().get(MessageType.PUSH_DATA),
                6,
                Unpooled.wrappedBuffer(new byte[100])));
    in.writeInbound(wire.readRetainedSlice(40)); // the prefix, the header, some of the body
    assertThat(ReadGate.isPaused(in, ReadGate.RESERVATION)).as("waits for memory").isTrue();
    in.writeInbound(wire.readRetainedSlice(wire.readableBytes()));
    wire.release();
    Message m = in.readInbound();
    assertThat(m.bodyLength()).as("the frame, passed on unreserved").isEqualTo(100);
    m.release();

    memory.release(1000); // room again: a retry still scheduled would now reserve
    in.advanceTimeBy(1, TimeUnit.SECONDS);
    in.runScheduledPendingTasks();
    assertThat(memory.held).as("bytes reserved for no frame").isZero();
    assertThat(ReadGate.isPaused(in, ReadGate.RESERVATION)).as("still paused").isFalse();
    in.finishAndReleaseAll();
  }

  @Test
  void truncatedFrameYieldsNothingAndHoldsNoBufferAfterClose() {
    ByteBuf wire =
        encode(Message.of(MessageType.HEARTBEAT.id(), samples().get(MessageType.HEARTBEAT), 3));
    EmbeddedChannel in = channel();
    in.writeInbound(wire.readRetainedSlice(wire.readableBytes() - 1));
    wire.release();
    assertThat(in.inboundMessages()).isEmpty();
    in.finishAndReleaseAll();
  }

  @Test
  void oversizedFrameIsRejected() {
    ByteBuf wire = Unpooled.buffer().writeInt(MAX_FRAME + 1).writeByte(20).writeInt(0);
    EmbeddedChannel in = channel();
    assertThatThrownBy(() -> in.writeInbound(wire))
        .isInstanceOf(DecoderException.class)
        .hasMessageContaining("exceeds sluice.network.maxFrameSize");
    in.finishAndReleaseAll();
  }

  @Test
  void negativeAndTooSmallLengthsAreRejected() {
    for (int length : new int[] {-1, 0, 4}) {
      ByteBuf wire = Unpooled.buffer().writeInt(length).writeZero(8);
      EmbeddedChannel in = channel();
      assertThatThrownBy(() -> in.writeInbound(wire))
          .isInstanceOf(DecoderException.class)
          .hasMessageContaining("below the minimum");
      in.finishAndReleaseAll();
    }
  }

  @Test
  void headerLengthBeyondTheFrameIsRejected() {
    ByteBuf wire = Unpooled.buffer().writeInt(9).writeByte(11).writeInt(100).writeZero(4);
    EmbeddedChannel in = channel();
    assertThatThrownBy(() -> in.writeInbound(wire))
        .isInstanceOf(DecoderException.class)
        .hasMessageContaining("does not fit");
    in.finishAndReleaseAll();
  }

  @Test
  void unknownTypeIsRejected() {
    ByteBuf wire = Unpooled.buffer().writeInt(5).writeByte(99).writeInt(0);
    EmbeddedChannel in = channel();
    assertThatThrownBy(() -> in.writeInbound(wire))
        .isInstanceOf(DecoderException.class)
        .hasMessageContaining("unknown message type id 99");
    in.finishAndReleaseAll();
  }

  @Test
  void garbageHeaderIsRejected() {
    ByteBuf wire =
        Unpooled.buffer()
            .writeInt(9)
            .writeByte(MessageType.PUSH_DATA.id())
            .writeInt(4)
            .writeInt(-1);
    EmbeddedChannel in = channel();
    assertThatThrownBy(() -> in.writeInbound(wire))
        .isInstanceOf(DecoderException.class)
        .hasMessageContaining("header of PUSH_DATA does not parse");
    in.finishAndReleaseAll();
  }
}
