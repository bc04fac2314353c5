package io.sluice.network;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Answers an HTTP request that reaches a port speaking binary frames (a tool or a browser given the
 * wrong port) with {@code 421 Misdirected Request} and a JSON body its owner supplies, then closes
 * the connection. It looks only at the first bytes of a connection and removes itself as soon as
 * they are not HTTP, so the frames that follow never pass through it. Sits first in the pipeline,
 * after TLS when TLS is on.
 *
 * <p>A connection is HTTP when it starts with a request method and a space ({@link #METHODS}). No
 * connection of frames starts so: a frame starts with its 4-byte length, and these bytes read as
 * over 1.1 GB, followed by a type id ({@code ' '}, {@code '/'} or a capital letter) no message
 * uses. Deciding needs at most 8 bytes and a frame has at least 9, so a peer speaking frames is
 * never kept waiting.
 *
 * <p>The answer goes out once the request's headers have arrived (an empty line) or {@link
 * #MAX_REQUEST_HEAD} bytes have, so the connection closes with nothing unread (which would reset it
 * and could lose the answer); what arrives afterwards is dropped. One instance per connection.
 */
public final class StrayHttpAnswer extends ByteToMessageDecoder {
  private static final Logger LOG = LoggerFactory.getLogger(StrayHttpAnswer.class);

  /** What an HTTP request starts with. */
  static final String[] METHODS = {
    "GET ", "HEAD ", "POST ", "PUT ", "DELETE ", "OPTIONS ", "PATCH ", "TRACE ", "CONNECT "
  };

  /** The longest {@link #METHODS} entry: what it takes to decide. */
  private static final int LONGEST_METHOD = 8;

  /** Bytes of a request head read before answering anyway. */
  static final int MAX_REQUEST_HEAD = 8192;

  private final Supplier<String> json;

  /** Once the connection is known to speak HTTP. */
  private boolean http;

  /** Once the answer went out: drop whatever still arrives. */
  private boolean answered;

  /**
   * @param json the body of the answer, a JSON document; called on the event loop, once per HTTP
   *     connection, so it must not block
   */
  public StrayHttpAnswer(Supplier<String> json) {
    if (json == null) {
      throw new IllegalArgumentException("the answer's body supplier must not be null");
    }
    this.json = json;
  }

  @Override
  protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
    if (answered) {
      in.skipBytes(in.readableBytes());
      return;
    }
    if (!http) {
      Boolean isHttp = startsWithMethod(in);
      if (isHttp == null) {
        return; // too few bytes to tell
      }
      if (!isHttp) {
        ctx.pipeline().remove(this); // hands what it holds to the next handler
        return;
      }
      http = true;
    }
    if (!headComplete(in) && in.readableBytes() < MAX_REQUEST_HEAD) {
      return;
    }
    in.skipBytes(in.readableBytes());
    answered = true;
    LOG.debug(
        "answering an HTTP request from {} with 421 Misdirected Request: this port speaks binary"
            + " frames",
        ctx.channel().remoteAddress());
    ctx.writeAndFlush(response(ctx, json.get())).addListener(ChannelFutureListener.CLOSE);
  }

  /** True when {@code in} starts with a method, false when it cannot, null when it may yet. */
  static Boolean startsWithMethod(ByteBuf in) {
    int readable = Math.min(in.readableBytes(), LONGEST_METHOD);
    int start = in.readerIndex();
    boolean undecided = false;
    for (String method : METHODS) {
      int n = Math.min(readable, method.length());
      boolean prefix = true;
      for (int i = 0; i < n && prefix; i++) {
        prefix = in.getByte(start + i) == method.charAt(i);
      }
      if (prefix && n == method.length()) {
        return Boolean.TRUE;
      }
      undecided |= prefix;
    }
    return undecided ? null : Boolean.FALSE;
  }

  /** Whether the request's head has ended: an empty line (CRLF CRLF, or a bare LF LF). */
  private static boolean headComplete(ByteBuf in) {
    int end = in.writerIndex();
    for (int i = in.readerIndex(); i < end; i++) {
      if (in.getByte(i) == '\n') {
        if (i + 1 < end && in.getByte(i + 1) == '\n') {
          return true;
        }
        if (i + 2 < end && in.getByte(i + 1) == '\r' && in.getByte(i + 2) == '\n') {
          return true;
        }
      }
    }
    return false;
  }

  private static ByteBuf response(ChannelHandlerContext ctx, String json) {
    byte[] body = json.getBytes(StandardCharsets.UTF_8);
    String head =
        "HTTP/1.1 421 Misdirected Request\r\n"
            + "Content-Type: application/json\r\n"
            + "Content-Length: "
            + body.length
            + "\r\n"
            + "Connection: close\r\n"
            + "\r\n";
    ByteBuf buf = ctx.alloc().buffer(head.length() + body.length);
    ByteBufUtil.writeAscii(buf, head);
    buf.writeBytes(body);
    return buf;
  }
}
