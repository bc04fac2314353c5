package io.sluice.network;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageLite;
import io.netty.channel.ChannelHandler;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;

/**
 * What the transport needs to know about a protocol: how to parse the header of each type id and
 * where its request id is. Implemented by the protocol layer; the transport stays free of shuffle
 * concepts.
 */
public interface MessageSchema {
  /**
   * Parses a header.
   *
   * @throws InvalidProtocolBufferException when the bytes are not a valid header of that type
   * @throws IllegalArgumentException when the type id is unknown
   */
  MessageLite parseHeader(byte type, ByteBuffer header) throws InvalidProtocolBufferException;

  /** The request id carried in {@code header}, a parsed header of type {@code type}. */
  long requestId(byte type, MessageLite header);

  /** True when frames of this type answer a request (and complete a pending request). */
  boolean isResponse(byte type);

  /**
   * True when frames of this type carry bulk data (pushed batches, region data): their bodies may
   * be as large as {@code sluice.network.maxFrameSize} and a server reserves them in its {@link
   * InboundMemory} before reading them. Every other frame is a control frame and must be small.
   */
  boolean carriesData(byte type);

  /**
   * The lengths of the parts the body of a data frame of this type is taken apart into, each kept
   * and released on its own (a merged push: one batch per partition), or null for a body kept
   * whole. A server receives each part into a buffer of its own, so a part kept long (a partition
   * that is not flushed yet) does not keep the memory of the others, which the budget no longer
   * counts once they are released.
   */
  default int[] bodyParts(byte type, MessageLite header) {
    return null;
  }

  /** A readable name for logs and errors. */
  String typeName(byte type);

  /**
   * What a client sends on every new connection before anything else (the versions it speaks),
   * completing when the server's answer lets the connection be used, within {@code timeoutMillis};
   * fails with an {@link java.io.IOException} naming why not. Never blocks. None by default.
   */
  default CompletableFuture<Void> greet(TransportClient client, long timeoutMillis) {
    return CompletableFuture.completedFuture(null);
  }

  /**
   * The handler a server puts in every connection's pipeline ahead of authentication to answer the
   * clients' greetings ({@link #greet}), passing every other frame on; null for none.
   */
  default ChannelHandler greeter() {
    return null;
  }
}
