package io.sluice.testutil;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageLite;
import io.netty.channel.ChannelHandler;
import io.sluice.network.MessageSchema;
import io.sluice.network.TransportClient;
import io.sluice.protocol.MessageType;
import io.sluice.protocol.SluiceProtocol;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;

/**
 * Sluice's protocol as a peer of another release speaks it: this release's messages, with another
 * greeting. {@link #withoutVersions()} is a release before versions were stated: its clients send
 * no greeting and its servers take a greeting for an unknown message type (and close the
 * connection); {@link #greetingWith} answers greetings with a handler of the test's.
 */
public final class AnotherRelease implements MessageSchema {
  private final boolean knowsHello;
  private final ChannelHandler greeter;

  private AnotherRelease(boolean knowsHello, ChannelHandler greeter) {
    this.knowsHello = knowsHello;
    this.greeter = greeter;
  }

  public static AnotherRelease withoutVersions() {
    return new AnotherRelease(false, null);
  }

  public static AnotherRelease greetingWith(ChannelHandler greeter) {
    return new AnotherRelease(true, greeter);
  }

  @Override
  public MessageLite parseHeader(byte type, ByteBuffer header)
      throws InvalidProtocolBufferException {
    if (!knowsHello && type == MessageType.HELLO.id()) {
      throw new IllegalArgumentException("unknown message type " + type);
    }
    return SluiceProtocol.INSTANCE.parseHeader(type, header);
  }

  @Override
  public long requestId(byte type, MessageLite header) {
    return SluiceProtocol.INSTANCE.requestId(type, header);
  }

  @Override
  public boolean isResponse(byte type) {
    return SluiceProtocol.INSTANCE.isResponse(type);
  }

  @Override
  public boolean carriesData(byte type) {
    return SluiceProtocol.INSTANCE.carriesData(type);
  }

  @Override
  public int[] bodyParts(byte type, MessageLite header) {
    return SluiceProtocol.INSTANCE.bodyParts(type, header);
  }

  @Override
  public String typeName(byte type) {
    return SluiceProtocol.INSTANCE.typeName(type);
  }

  @Override
  public CompletableFuture<Void> greet(TransportClient client, long timeoutMillis) {
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public ChannelHandler greeter() {
    return greeter;
  }
}
