package io.sluice.network;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageLite;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.TooLongFrameException;
import java.util.List;

/**
 * Splits the byte stream into {@link Message}s (layout in {@link Message}).
 *
 * <p>Cumulation is composite, so a frame's body is a retained slice of the buffers the socket read
 * into: the bytes are never copied on their way to a file. A length below the minimum or above the
 * configured maximum, a header length that does not fit, an unknown type or a header that does not
 * parse throws {@link CorruptedFrameException} / {@link TooLongFrameException}; the pipeline closes
 * the connection and logs why.
 */
public final class FrameDecoder extends ByteToMessageDecoder {
  /** type:int8 + headerLength:int32. */
  static final int MIN_FRAME_LENGTH = 5;

  private final MessageSchema schema;
  private final int maxFrameSize;
  private boolean corrupt;

  public FrameDecoder(MessageSchema schema, int maxFrameSize) {
    this.schema = schema;
    this.maxFrameSize = maxFrameSize;
    setCumulator(COMPOSITE_CUMULATOR);
  }

  @Override
  protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
    if (corrupt) {
      // the stream lost its framing; the connection is closing: drop whatever still arrives
      in.skipBytes(in.readableBytes());
      return;
    }
    try {
      decodeFrames(in, out);
    } catch (CorruptedFrameException | TooLongFrameException e) {
      corrupt = true;
      in.skipBytes(in.readableBytes());
      throw e;
    }
  }

  private void decodeFrames(ByteBuf in, List<Object> out) {
    while (in.readableBytes() >= 4) {
      int frameLength = in.getInt(in.readerIndex());
      if (frameLength < MIN_FRAME_LENGTH) {
        throw new CorruptedFrameException(
            "frame length " + frameLength + " is below the minimum of " + MIN_FRAME_LENGTH);
      }
      if (frameLength > maxFrameSize) {
        throw new TooLongFrameException(
            "frame length "
                + frameLength
                + " exceeds sluice.network.maxFrameSize ("
                + maxFrameSize
                + " bytes)");
      }
      if (in.readableBytes() < 4 + frameLength) {
        return;
      }
      in.skipBytes(4);
      byte type = in.readByte();
      int headerLength = in.readInt();
      int bodyLength = frameLength - MIN_FRAME_LENGTH - headerLength;
      if (headerLength < 0 || bodyLength < 0) {
        throw new CorruptedFrameException(
            "header length " + headerLength + " does not fit in a frame of " + frameLength);
      }
      MessageLite header;
      try {
        header = schema.parseHeader(type, in.nioBuffer(in.readerIndex(), headerLength));
      } catch (IllegalArgumentException e) {
        throw new CorruptedFrameException(e.getMessage());
      } catch (InvalidProtocolBufferException e) {
        throw new CorruptedFrameException(
            "header of " + schema.typeName(type) + " does not parse: " + e.getMessage());
      }
      in.skipBytes(headerLength);
      long requestId = schema.requestId(type, header);
      if (bodyLength == 0) {
        out.add(Message.of(type, header, requestId));
      } else {
        out.add(Message.withBody(type, header, requestId, in.readRetainedSlice(bodyLength)));
      }
    }
  }
}
