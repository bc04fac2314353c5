package io.sluice.network;

import com.google.protobuf.CodedOutputStream;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.MessageToMessageEncoder;
import java.io.IOException;
import java.util.List;

/**
 * Writes a {@link Message}: the length prefix, type and header go in one small buffer; the body
 * (buffer or file region) follows as its own write, so it is never copied. The encoder passes the
 * body's ownership to Netty; when encoding fails, Netty releases the message and its body.
 */
@ChannelHandler.Sharable
public final class FrameEncoder extends MessageToMessageEncoder<Message> {
  public static final FrameEncoder INSTANCE = new FrameEncoder();

  private FrameEncoder() {}

  @Override
  protected void encode(ChannelHandlerContext ctx, Message msg, List<Object> out)
      throws IOException {
    int headerLength = msg.header().getSerializedSize();
    long frameLength = (long) FrameDecoder.MIN_FRAME_LENGTH + headerLength + msg.bodyLength();
    if (frameLength > Integer.MAX_VALUE) {
      throw new IOException("frame of " + frameLength + " bytes is too large to send");
    }
    ByteBuf prefix = ctx.alloc().heapBuffer(4 + FrameDecoder.MIN_FRAME_LENGTH + headerLength);
    try {
      prefix.writeInt((int) frameLength);
      prefix.writeByte(msg.type());
      prefix.writeInt(headerLength);
      CodedOutputStream cos =
          CodedOutputStream.newInstance(
              prefix.array(), prefix.arrayOffset() + prefix.writerIndex(), headerLength);
      msg.header().writeTo(cos);
      cos.checkNoSpaceLeft();
      prefix.writerIndex(prefix.writerIndex() + headerLength);
    } catch (IOException | RuntimeException e) {
      prefix.release();
      throw e;
    }
    out.add(prefix);
    Object body = msg.takeBody(); // Netty releases the message once this returns
    if (body instanceof Object[]) {
      out.addAll(List.of((Object[]) body));
    } else if (body != null) {
      out.add(body);
    }
  }
}
