package io.sluice.protocol;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageLite;
import io.netty.channel.ChannelHandler;
import io.sluice.common.SluiceVersion;
import io.sluice.network.MessageSchema;
import io.sluice.network.TransportClient;
import io.sluice.protocol.proto.PushMerged;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;

/** The {@link MessageSchema} of Sluice's protocol: the transport's view of {@link MessageType}. */
public final class SluiceProtocol implements MessageSchema {
  public static final SluiceProtocol INSTANCE = new SluiceProtocol();

  private final ProtocolVersion versions = new ProtocolVersion(SluiceVersion.get());

  private SluiceProtocol() {}

  @Override
  public MessageLite parseHeader(byte type, ByteBuffer header)
      throws InvalidProtocolBufferException {
    return MessageType.of(type).parse(header);
  }

  @Override
  public long requestId(byte type, MessageLite header) {
    return MessageType.of(type).requestIdOf(header);
  }

  @Override
  public boolean isResponse(byte type) {
    return type == MessageType.RESPONSE.id();
  }

  @Override
  public int[] bodyParts(byte type, MessageLite header) {
    if (type != MessageType.PUSH_MERGED.id()) {
      return null;
    }
    PushMerged h = (PushMerged) header;
    int[] parts = new int[h.getLengthsCount()];
    for (int i = 0; i < parts.length; i++) {
      parts[i] = h.getLengths(i);
    }
    return parts;
  }

  @Override
  public boolean carriesData(byte type) {
    return type == MessageType.PUSH_DATA.id()
        || type == MessageType.PUSH_MERGED.id()
        || type == MessageType.REGION_DATA.id();
  }

  @Override
  public CompletableFuture<Void> greet(TransportClient client, long timeoutMillis) {
    return versions.greet(client, timeoutMillis);
  }

  @Override
  public ChannelHandler greeter() {
    return versions.greeter();
  }

  @Override
  public String typeName(byte type) {
    try {
      return MessageType.of(type).name();
    } catch (IllegalArgumentException e) {
      return "unknown type " + type;
    }
  }
}
