package io.sluice.protocol;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageLite;
import com.google.protobuf.Parser;
import io.sluice.protocol.proto.AuthHello;
import io.sluice.protocol.proto.AuthProof;
import io.sluice.protocol.proto.CloseStream;
import io.sluice.protocol.proto.CommitMapPartition;
import io.sluice.protocol.proto.CommitShuffle;
import io.sluice.protocol.proto.FetchChunk;
import io.sluice.protocol.proto.GetCommittedSplits;
import io.sluice.protocol.proto.GetShuffleLocations;
import io.sluice.protocol.proto.Heartbeat;
import io.sluice.protocol.proto.Hello;
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
import io.sluice.protocol.proto.UnregisterApplication;
import io.sluice.protocol.proto.UnregisterShuffle;
import java.nio.ByteBuffer;
import java.util.function.ToLongFunction;

/**
 * The type id of every frame and the protobuf header it carries. Ids are never reused; a retired
 * message keeps its id reserved here.
 */
public enum MessageType {
  RESPONSE(1, Response.parser(), h -> ((Response) h).getRequestId()),

  // a connection's first request: the versions each side speaks (ProtocolVersion)
  HELLO(3, Hello.parser(), h -> ((Hello) h).getRequestId()),

  // authentication (sluice.auth.enabled): a connection's first two requests after HELLO
  AUTH_HELLO(70, AuthHello.parser(), h -> ((AuthHello) h).getRequestId()),
  AUTH_PROOF(71, AuthProof.parser(), h -> ((AuthProof) h).getRequestId()),

  // server: lifecycle
  REGISTER_SHUFFLE(10, RegisterShuffle.parser(), h -> ((RegisterShuffle) h).getRequestId()),
  HEARTBEAT(11, Heartbeat.parser(), h -> ((Heartbeat) h).getRequestId()),
  UNREGISTER_SHUFFLE(12, UnregisterShuffle.parser(), h -> ((UnregisterShuffle) h).getRequestId()),
  UNREGISTER_APPLICATION(
      13, UnregisterApplication.parser(), h -> ((UnregisterApplication) h).getRequestId()),
  // server: write
  PUSH_DATA(20, PushData.parser(), h -> ((PushData) h).getRequestId()),
  PUSH_MERGED(21, PushMerged.parser(), h -> ((PushMerged) h).getRequestId()),
  COMMIT_SHUFFLE(30, CommitShuffle.parser(), h -> ((CommitShuffle) h).getRequestId()),
  // server: read
  OPEN_STREAM(40, OpenStream.parser(), h -> ((OpenStream) h).getRequestId()),
  FETCH_CHUNK(41, FetchChunk.parser(), h -> ((FetchChunk) h).getRequestId()),
  CLOSE_STREAM(42, CloseStream.parser(), h -> ((CloseStream) h).getRequestId()),
  REPORT_CHECKSUM_FAILURE(
      43, ReportChecksumFailure.parser(), h -> ((ReportChecksumFailure) h).getRequestId()),
  // server: map partitions (Flink)
  REGION_START(60, RegionStart.parser(), h -> ((RegionStart) h).getRequestId()),
  REGION_DATA(61, RegionData.parser(), h -> ((RegionData) h).getRequestId()),
  REGION_FINISH(62, RegionFinish.parser(), h -> ((RegionFinish) h).getRequestId()),
  COMMIT_MAP_PARTITION(
      63, CommitMapPartition.parser(), h -> ((CommitMapPartition) h).getRequestId()),
  RELEASE_MAP_PARTITION(
      64, ReleaseMapPartition.parser(), h -> ((ReleaseMapPartition) h).getRequestId()),
  OPEN_MAP_STREAM(65, OpenMapStream.parser(), h -> ((OpenMapStream) h).getRequestId()),
  READ_MAP_BUFFER(66, ReadMapBuffer.parser(), h -> ((ReadMapBuffer) h).getRequestId()),
  // coordinator
  GET_SHUFFLE_LOCATIONS(
      50, GetShuffleLocations.parser(), h -> ((GetShuffleLocations) h).getRequestId()),
  MAPPER_END(51, MapperEnd.parser(), h -> ((MapperEnd) h).getRequestId()),
  GET_COMMITTED_SPLITS(
      52, GetCommittedSplits.parser(), h -> ((GetCommittedSplits) h).getRequestId()),
  REVIVE_PARTITION(53, RevivePartition.parser(), h -> ((RevivePartition) h).getRequestId());

  private static final MessageType[] BY_ID = new MessageType[128];

  static {
    for (MessageType t : values()) {
      if (BY_ID[t.id] != null) {
        throw new ExceptionInInitializerError("duplicate message type id " + t.id);
      }
      BY_ID[t.id] = t;
    }
  }

  private final byte id;
  private final Parser<? extends MessageLite> parser;
  private final ToLongFunction<MessageLite> requestId;

  MessageType(int id, Parser<? extends MessageLite> parser, ToLongFunction<MessageLite> requestId) {
    this.id = (byte) id;
    this.parser = parser;
    this.requestId = requestId;
  }

  public byte id() {
    return id;
  }

  /**
   * The type with this id.
   *
   * @throws IllegalArgumentException naming the id when no type has it
   */
  public static MessageType of(byte id) {
    MessageType t = id >= 0 ? BY_ID[id] : null;
    if (t == null) {
      throw new IllegalArgumentException("unknown message type id " + id);
    }
    return t;
  }

  MessageLite parse(ByteBuffer header) throws InvalidProtocolBufferException {
    return parser.parseFrom(header);
  }

  long requestIdOf(MessageLite header) {
    return requestId.applyAsLong(header);
  }
}
