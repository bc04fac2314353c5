package io.sluice.network;

import com.google.protobuf.MessageLite;
import io.netty.buffer.ByteBuf;
import io.netty.channel.FileRegion;
import io.netty.util.IllegalReferenceCountException;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.ReferenceCounted;
import java.util.Objects;

/**
 * One frame on the wire: a type id, a protobuf header and an optional raw body.
 *
 * <p>Wire layout (big-endian): {@code frameLength:int32 | type:int8 | headerLength:int32 | header |
 * body}; {@code frameLength} counts every byte after itself, so the body length is {@code
 * frameLength - 5 - headerLength}.
 *
 * <p>Body ownership: a message owns its body ({@link ByteBuf} or, outbound only, one or more {@link
 * FileRegion}s) and, for a data frame a server received, the body's reservation in the server's
 * {@link InboundMemory}. Whoever holds the message last calls {@link #release()}, which gives back
 * both; {@link #handOver()} passes both to a new owner instead (release is then a no-op). Writing a
 * message to a channel hands the body to Netty, which releases it after the write.
 *
 * <p>A message is {@link ReferenceCounted} with one owner (a count of 1 until released, never
 * retained), so that Netty releases it wherever it drops one: a write to a connection that closed
 * or whose event loop stopped, a read no handler took. Not thread safe: one thread owns a message
 * at a time.
 */
public final class Message implements ReferenceCounted {
  private final byte type;
  private final MessageLite header;
  private final long requestId;
  private Object body;
  private InboundMemory memory;
  private long reserved;
  private boolean released;

  private Message(byte type, MessageLite header, long requestId, Object body) {
    this.type = type;
    this.header = Objects.requireNonNull(header, "header");
    this.requestId = requestId;
    this.body = body;
  }

  /**
   * Takes ownership of {@code body} and of {@code reserved} bytes reserved for it in {@code memory}
   * (0 when the frame arrived whole while the memory was full: the receiver refuses it).
   */
  static Message withReservedBody(
      byte type,
      MessageLite header,
      long requestId,
      ByteBuf body,
      InboundMemory memory,
      long reserved) {
    Message m = withBody(type, header, requestId, body);
    m.memory = memory;
    m.reserved = reserved;
    return m;
  }

  public static Message of(byte type, MessageLite header, long requestId) {
    return new Message(type, header, requestId, null);
  }

  /** Takes ownership of {@code body}. */
  public static Message withBody(byte type, MessageLite header, long requestId, ByteBuf body) {
    return new Message(type, header, requestId, Objects.requireNonNull(body, "body"));
  }

  /**
   * Takes ownership of {@code regions}, which go out one after another as one body, each with zero
   * copy (sendfile).
   */
  public static Message withFileBody(
      byte type, MessageLite header, long requestId, FileRegion... regions) {
    if (regions.length == 0) {
      throw new IllegalArgumentException("a file body needs at least one region");
    }
    Object body = regions.length == 1 ? Objects.requireNonNull(regions[0], "body") : regions;
    return new Message(type, header, requestId, body);
  }

  public byte type() {
    return type;
  }

  public MessageLite header() {
    return header;
  }

  /** The header as {@code cls}; the caller knows the type from {@link #type()}. */
  public <T extends MessageLite> T header(Class<T> cls) {
    return cls.cast(header);
  }

  public long requestId() {
    return requestId;
  }

  /** The body as a buffer (empty when the frame has none); not retained for the caller. */
  public ByteBuf body() {
    if (body instanceof ByteBuf) {
      return (ByteBuf) body;
    }
    if (body == null) {
      return io.netty.buffer.Unpooled.EMPTY_BUFFER;
    }
    throw new IllegalStateException("body of type " + type + " is a file region");
  }

  /**
   * The body, now owned by the caller (the encoder, which passes it to Netty): {@link #release()}
   * no longer releases it.
   */
  Object takeBody() {
    Object b = body;
    body = null;
    return b;
  }

  public long bodyLength() {
    if (body instanceof ByteBuf) {
      return ((ByteBuf) body).readableBytes();
    }
    if (body instanceof FileRegion) {
      return ((FileRegion) body).count();
    }
    if (body instanceof FileRegion[]) {
      long n = 0;
      for (FileRegion r : (FileRegion[]) body) {
        n += r.count();
      }
      return n;
    }
    return 0;
  }

  /**
   * Bytes of the server's inbound memory reserved for this message's body: its length when the
   * receiving decoder reserved it, 0 when it did not (no budget, or no room: refuse the body).
   */
  public long reservedBytes() {
    return reserved;
  }

  /**
   * The body and its reservation now belong to whoever took them ({@link #body()} before this
   * call): {@link #release()} no longer releases them.
   */
  public void handOver() {
    body = null;
    reserved = 0;
  }

  /**
   * {@code bytes} of the body's reservation now belong to whoever took a part of the body (a
   * retained slice): {@link #release()} releases the body and only what is left of the reservation.
   */
  public void handOverReservation(long bytes) {
    if (bytes < 0 || bytes > reserved) {
      throw new IllegalArgumentException(
          "cannot hand over " + bytes + " of " + reserved + " reserved bytes");
    }
    reserved -= bytes;
  }

  /**
   * Releases the body and its reservation, if any. Idempotent; safe on a message without a body.
   *
   * @return true on the first call
   */
  @Override
  public boolean release() {
    if (released) {
      return false;
    }
    released = true;
    Object b = body;
    long r = reserved;
    body = null;
    reserved = 0;
    if (b instanceof FileRegion[]) {
      for (FileRegion region : (FileRegion[]) b) {
        ReferenceCountUtil.release(region);
      }
    } else if (b != null) {
      ReferenceCountUtil.release(b);
    }
    if (r > 0) {
      memory.release(r);
    }
    return true;
  }

  @Override
  public boolean release(int decrement) {
    if (decrement != 1) {
      throw new IllegalReferenceCountException(refCnt(), -decrement);
    }
    return release();
  }

  /** 1 until released, then 0. */
  @Override
  public int refCnt() {
    return released ? 0 : 1;
  }

  /** Not supported: a message has one owner, and passes its body on ({@link #handOver()}). */
  @Override
  public Message retain() {
    throw new UnsupportedOperationException("a Sluice message has one owner and is not retained");
  }

  @Override
  public Message retain(int increment) {
    return retain();
  }

  @Override
  public Message touch() {
    return this;
  }

  @Override
  public Message touch(Object hint) {
    return this;
  }

  @Override
  public String toString() {
    return "Message{type="
        + type
        + ", requestId="
        + requestId
        + ", bodyLength="
        + bodyLength()
        + "}";
  }
}
