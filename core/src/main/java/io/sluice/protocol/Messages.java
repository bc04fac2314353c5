package io.sluice.protocol;

import com.google.protobuf.MessageLite;
import io.netty.buffer.ByteBuf;
import io.sluice.network.Message;
import io.sluice.protocol.proto.Response;
import io.sluice.protocol.proto.Status;

/** Builders for frames of this protocol, so call sites never handle type ids. */
public final class Messages {
  private Messages() {}

  public static Message request(MessageType type, MessageLite header, long requestId) {
    return Message.of(type.id(), header, requestId);
  }

  /** Takes ownership of {@code body}. */
  public static Message request(
      MessageType type, MessageLite header, long requestId, ByteBuf body) {
    return Message.withBody(type.id(), header, requestId, body);
  }

  public static Message response(Response response) {
    return Message.of(MessageType.RESPONSE.id(), response, response.getRequestId());
  }

  /** A response builder with the request id and status OK set. */
  public static Response.Builder okBuilder(long requestId) {
    return Response.newBuilder().setRequestId(requestId).setStatus(Status.OK);
  }

  public static Message ok(long requestId) {
    return response(Response.newBuilder().setRequestId(requestId).setStatus(Status.OK).build());
  }

  public static Message error(long requestId, Status status, String message) {
    return response(
        Response.newBuilder()
            .setRequestId(requestId)
            .setStatus(status)
            .setMessage(message)
            .build());
  }

  /**
   * The response header of {@code message}; throws {@link StatusException} (after releasing the
   * message) when the status is not OK or SOFT_SPLIT, so callers handle failures in one place.
   */
  public static Response expectOk(Message message) throws StatusException {
    Response response = message.header(Response.class);
    if (response.getStatus() != Status.OK && response.getStatus() != Status.SOFT_SPLIT) {
      message.release();
      throw new StatusException(response.getStatus(), response.getMessage());
    }
    return response;
  }
}
