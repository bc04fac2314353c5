package io.sluice.network;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageLite;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.TooLongFrameException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Splits the byte stream into {@link Message}s (layout in {@link Message}).
 *
 * <p><b>What a connection can make the receiver hold.</b> Every check below runs on the 9-byte
 * prefix of a frame, before its header or body is read:
 *
 * <ul>
 *   <li>A frame longer than {@code sluice.network.maxFrameSize}, or, when the frame type carries no
 *       bulk data ({@link MessageSchema#carriesData}), longer than {@code maxControlFrameSize}, is
 *       refused: the connection closes.
 *   <li>With an {@link InboundMemory} (servers), the body of a data frame is reserved there before
 *       it is read. When it does not fit, the decoder stops reading the connection ({@link
 *       ReadGate#RESERVATION}) and tries again every {@link #RESERVATION_RETRY_MILLIS} ms, so the
 *       socket, not the heap, holds the rest. A frame that had already arrived whole is passed on
 *       unreserved ({@link Message#reservedBytes()} 0) for the receiver to refuse (CONGESTED).
 *   <li>A data frame whose body is larger than {@code sluice.network.server.maxBodyInFlight} is
 *       refused (the connection closes), so one connection reserves at most that much.
 *   <li>A reserved body that has not arrived whole {@code sluice.network.server.bodyTimeout} after
 *       it was reserved closes the connection, which gives the reservation back: a sender that
 *       announces large frames and sends them slowly, or never finishes, holds the budget for that
 *       long at most.
 * </ul>
 *
 * So a connection's decoder holds at most one socket read (Netty reads at most 64 KiB at a time)
 * plus one control frame beyond what the memory budget counts.
 *
 * <p><b>Bodies.</b> A data frame's body goes, as it arrives, into a buffer of exactly its size that
 * carries its reservation, so what the server holds for it is what the budget counts: neither a
 * tiny push nor a slowly sent large one pins socket read buffers (Netty reads into 64 KiB buffers
 * and, on a slow connection, fills them a few KiB at a time; slices of them kept bodies at two to
 * four times their size). A body made of parts kept apart (a merged push) goes into one such buffer
 * per part larger than {@link #SHARED_PART_MAX} bytes, and one per run of smaller parts in a row
 * ({@link MessageSchema#bodyParts}): a receiver may keep a large part's buffer, and copies what it
 * keeps of a small one. The bytes that arrive with the frame's header are copied there from the
 * socket's read buffer; on a plain (not TLS) server connection the rest of the body is read from
 * the socket straight into that buffer ({@link #readBodiesDirectly}), at least {@link
 * #DIRECT_READ_MIN} bytes a read, so a large push is not copied in memory at all. Under TLS every
 * decrypted byte is copied once. On clients, response bodies of {@link #COPY_BODIES_BELOW} bytes or
 * more stay retained slices of the socket's buffers.
 *
 * <p>A length below the minimum or above a maximum, a header length that does not fit, an unknown
 * type or a header that does not parse throws {@link CorruptedFrameException} / {@link
 * TooLongFrameException}; the pipeline closes the connection and logs why. A connection whose first
 * bytes read {@code HTTP} was opened to an HTTP server (an admin port given as a server's address),
 * and its error says so.
 */
public final class FrameDecoder extends ByteToMessageDecoder {
  private static final Logger LOG = LoggerFactory.getLogger(FrameDecoder.class);

  /** type:int8 + headerLength:int32. */
  static final int MIN_FRAME_LENGTH = 5;

  /** frameLength:int32 + type:int8 + headerLength:int32: what the checks need to see. */
  static final int PREFIX_LENGTH = 4 + MIN_FRAME_LENGTH;

  /** Bodies below this many bytes are copied out of the read buffers (see the class comment). */
  public static final int COPY_BODIES_BELOW = 256 * 1024;

  /**
   * Parts of a body of at most this many bytes, in a row, share one buffer ({@link #newBody}); a
   * receiver keeping one copies it, or it would keep its neighbours' memory too.
   */
  public static final int SHARED_PART_MAX = 2048;

  /**
   * Fewer bytes than this left to receive in a body's buffer are read as usual, into the channel's
   * read buffer, and copied: a system call for a few bytes costs more than the copy.
   */
  static final int DIRECT_READ_MIN = 16 * 1024;

  /** A body of more parts than this is received whole (the receiver refuses it). */
  static final int MAX_BODY_PARTS = 4096;

  /** How often a data frame waiting for room in the inbound memory tries again. */
  static final long RESERVATION_RETRY_MILLIS = 10;

  /**
   * "HTTP" read as a frame length: how an HTTP server's answer ("HTTP/1.1 400 ...") starts, when a
   * client was given an HTTP port.
   */
  private static final int HTTP_AS_LENGTH = 0x48545450;

  private final MessageSchema schema;
  private final int maxFrameSize;
  private final int maxControlFrameSize;
  private final InboundMemory memory;

  /** Milliseconds a reserved body may take to arrive whole; 0 for no limit. */
  private final long bodyTimeoutMillis;

  /** The largest data frame body this connection may reserve. */
  private final int maxBodyInFlight;

  /** Data frames are refused until the connection has a {@link ConnectionPrincipal}. */
  private final boolean dataNeedsPrincipal;

  private boolean corrupt;

  /** Once the connection's first frame length was read. */
  private boolean started;

  /** Bytes reserved for the body of the frame at the head of the cumulation; 0 when none. */
  private long reservedForNext;

  private ScheduledFuture<?> reservationRetry;

  /** Closes the connection when the reserved body is not whole in time; null when none is. */
  private ScheduledFuture<?> bodyDeadline;

  /** A reserved data frame whose body is being received into {@link #filling}; else null. */
  private Message pending;

  /** The exactly sized, reserved buffer the pending frame's body is copied into as it arrives. */
  private ByteBuf filling;

  /**
   * The view of {@link #filling}'s unfilled bytes the latest socket read was given ({@link
   * #directReadTarget}), or null: when it comes back as the decoder's input, its bytes are already
   * in place.
   */
  private ByteBuf directRead;

  /** Body bytes the socket reads put in place, with nothing for the decoder to copy. */
  private long bytesReadDirectly;

  /** A client's decoder: no inbound memory, every frame up to {@code maxFrameSize}. */
  public FrameDecoder(MessageSchema schema, int maxFrameSize) {
    this(schema, maxFrameSize, maxFrameSize, null, false);
  }

  /**
   * A server's decoder.
   *
   * @param maxControlFrameSize the longest frame of a type without bulk data
   * @param memory where data frames reserve their bodies before they are read; null for none
   * @param dataNeedsPrincipal refuse data frames until the connection authenticated, so a stranger
   *     cannot make the server reserve memory
   */
  public FrameDecoder(
      MessageSchema schema,
      int maxFrameSize,
      int maxControlFrameSize,
      InboundMemory memory,
      boolean dataNeedsPrincipal) {
    this(schema, maxFrameSize, maxControlFrameSize, memory, dataNeedsPrincipal, 0, maxFrameSize);
  }

  /**
   * A server's decoder.
   *
   * @param maxControlFrameSize the longest frame of a type without bulk data
   * @param memory where data frames reserve their bodies before they are read; null for none
   * @param dataNeedsPrincipal refuse data frames until the connection authenticated, so a stranger
   *     cannot make the server reserve memory
   * @param bodyTimeoutMillis close the connection when a reserved body has not arrived whole this
   *     long after it was reserved ({@code sluice.network.server.bodyTimeout}); 0 for no limit
   * @param maxBodyInFlight the largest data frame body reserved for this connection ({@code
   *     sluice.network.server.maxBodyInFlight}); a larger one closes the connection
   */
  public FrameDecoder(
      MessageSchema schema,
      int maxFrameSize,
      int maxControlFrameSize,
      InboundMemory memory,
      boolean dataNeedsPrincipal,
      long bodyTimeoutMillis,
      int maxBodyInFlight) {
    if (bodyTimeoutMillis < 0 || maxBodyInFlight < 1) {
      throw new IllegalArgumentException(
          "body timeout "
              + bodyTimeoutMillis
              + " ms must be >= 0 and body limit "
              + maxBodyInFlight
              + " bytes >= 1");
    }
    if (maxControlFrameSize > maxFrameSize || maxControlFrameSize < PREFIX_LENGTH) {
      throw new IllegalArgumentException(
          "control frame limit " + maxControlFrameSize + " must be in [9, " + maxFrameSize + "]");
    }
    this.schema = schema;
    this.maxFrameSize = maxFrameSize;
    this.maxControlFrameSize = maxControlFrameSize;
    this.memory = memory;
    this.dataNeedsPrincipal = dataNeedsPrincipal;
    this.bodyTimeoutMillis = bodyTimeoutMillis;
    this.maxBodyInFlight = maxBodyInFlight;
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
      decodeFrames(ctx, in, out);
    } catch (CorruptedFrameException | TooLongFrameException e) {
      corrupt = true;
      releaseReservation();
      in.skipBytes(in.readableBytes());
      throw e;
    }
  }

  private void decodeFrames(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
    while (true) {
      if (filling != null) {
        if (in == directRead) {
          // the socket read went straight into the body (DirectBodyReads): nothing to copy
          int n = in.readableBytes();
          filling.writerIndex(filling.writerIndex() + n);
          in.skipBytes(n);
          bytesReadDirectly += n;
        } else {
          in.readBytes(filling, Math.min(filling.writableBytes(), in.readableBytes()));
        }
        directRead = null;
        if (filling.isWritable()) {
          return;
        }
        out.add(pending);
        pending = null;
        filling = null;
        cancelBodyDeadline();
        ReadGate.receiving(ctx.channel(), false);
      }
      if (!out.isEmpty()) {
        return; // one frame per call: handling it may pause the connection before the next
      }
      if (ReadGate.isPaused(ctx.channel(), ReadGate.FILE_ANSWERS)) {
        return; // what was received already waits too; the gate decodes it when it reopens
      }
      if (in.readableBytes() < 4) {
        return;
      }
      int start = in.readerIndex();
      int frameLength = in.getInt(start);
      if (!started && frameLength == HTTP_AS_LENGTH) {
        throw new CorruptedFrameException(
            "server at "
                + peer(ctx)
                + " answered with HTTP: is it the admin port (sluice.metrics.port) rather than the"
                + " shuffle port (sluice.server.port)?");
      }
      started = true;
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
      if (in.readableBytes() < PREFIX_LENGTH) {
        return;
      }
      byte type = in.getByte(start + 4);
      int headerLength = in.getInt(start + 5);
      int bodyLength = frameLength - MIN_FRAME_LENGTH - headerLength;
      if (headerLength < 0 || bodyLength < 0 || headerLength > maxControlFrameSize) {
        throw new CorruptedFrameException(
            "header length "
                + headerLength
                + " does not fit in a frame of "
                + frameLength
                + " or exceeds "
                + maxControlFrameSize
                + " bytes");
      }
      boolean data = schema.carriesData(type);
      if (data && memory == null) {
        // only a server with a memory budget takes bulk data (a client, or the coordinator's
        // endpoint, never should)
        throw new CorruptedFrameException(
            "a " + schema.typeName(type) + " frame is not accepted on this connection");
      }
      if (data && dataNeedsPrincipal && ConnectionPrincipal.of(ctx.channel()) == null) {
        throw new CorruptedFrameException(
            "a "
                + schema.typeName(type)
                + " frame is not accepted before the connection authenticates"
                + " (sluice.auth.enabled)");
      }
      if (!data && frameLength > maxControlFrameSize) {
        throw new TooLongFrameException(
            "a "
                + schema.typeName(type)
                + " frame of "
                + frameLength
                + " bytes exceeds the "
                + maxControlFrameSize
                + " bytes allowed for frames without bulk data");
      }
      boolean whole = in.readableBytes() >= 4 + frameLength;
      if (data && bodyLength > 0 && reservedForNext == 0) {
        if (bodyLength > memory.max()) {
          throw new TooLongFrameException(
              "a "
                  + schema.typeName(type)
                  + " body of "
                  + bodyLength
                  + " bytes can never fit in the server's memory of "
                  + memory.max()
                  + " bytes (sluice.memory.max)");
        }
        if (bodyLength > maxBodyInFlight) {
          throw new TooLongFrameException(
              "a "
                  + schema.typeName(type)
                  + " body of "
                  + bodyLength
                  + " bytes exceeds the "
                  + maxBodyInFlight
                  + " bytes one connection may have in flight"
                  + " (sluice.network.server.maxBodyInFlight)");
        }
        if (memory.tryReserve(bodyLength)) {
          reserved(ctx, bodyLength, whole);
        } else if (!whole) {
          waitForMemory(ctx, bodyLength);
          return;
        } else {
          // it arrived whole while waiting (a read under way when the connection paused): it goes
          // on unreserved, so the wait for it ends; a retry that reserved later would hold memory
          // for a frame already gone and keep the connection paused
          stopWaitingForMemory(ctx);
        }
      }
      boolean filled = data && reservedForNext > 0;
      if (!whole && !(filled && in.readableBytes() >= PREFIX_LENGTH + headerLength)) {
        return;
      }
      MessageLite header;
      try {
        header = schema.parseHeader(type, in.nioBuffer(start + PREFIX_LENGTH, headerLength));
      } catch (IllegalArgumentException e) {
        throw new CorruptedFrameException(e.getMessage());
      } catch (InvalidProtocolBufferException e) {
        throw new CorruptedFrameException(
            "header of " + schema.typeName(type) + " does not parse: " + e.getMessage());
      }
      in.skipBytes(PREFIX_LENGTH + headerLength);
      long requestId = schema.requestId(type, header);
      if (bodyLength == 0) {
        out.add(Message.of(type, header, requestId));
        continue;
      }
      if (filled) {
        // received into a buffer of its own size, whose reservation travels with the message
        filling = newBody(ctx.alloc(), type, header, bodyLength);
        pending =
            Message.withReservedBody(type, header, requestId, filling, memory, reservedForNext);
        reservedForNext = 0;
        continue;
      }
      ByteBuf body;
      if (bodyLength < COPY_BODIES_BELOW || data) {
        body = ctx.alloc().directBuffer(bodyLength, bodyLength);
        in.readBytes(body, bodyLength);
      } else {
        body = in.readRetainedSlice(bodyLength);
      }
      if (data) {
        // arrived whole while the budget was full: the receiver refuses it (CONGESTED)
        out.add(Message.withReservedBody(type, header, requestId, body, memory, 0));
      } else {
        out.add(Message.withBody(type, header, requestId, body));
      }
    }
  }

  /**
   * Where the connection's next socket read should go ({@link DirectBodyReads}): while a reserved
   * body is being received and nothing else is waiting to be decoded, a view of the body's unfilled
   * bytes, retained (the read takes at most what the body still needs, so the next frame's bytes
   * never land in it); otherwise null, for a buffer of the channel's allocator.
   */
  ByteBuf directReadTarget() {
    if (corrupt || filling == null || !filling.isWritable() || actualReadableBytes() > 0) {
      return null;
    }
    // one contiguous buffer (the native transport reads into a memory address): the rest of the
    // body's part the next byte goes to, when the body was received in parts
    ByteBuf buffer = filling;
    int at = filling.writerIndex();
    if (filling instanceof CompositeByteBuf) {
      CompositeByteBuf parts = (CompositeByteBuf) filling;
      int part = parts.toComponentIndex(at);
      buffer = parts.internalComponent(part);
      at = buffer.readerIndex() + at - parts.toByteIndex(part);
    }
    int length = buffer.capacity() - at;
    if (length < DIRECT_READ_MIN) {
      return null;
    }
    directRead = buffer.retainedSlice(at, length).writerIndex(0);
    return directRead;
  }

  /** Body bytes received so far straight into their buffers ({@link #directReadTarget}). */
  long bytesReadDirectly() {
    return bytesReadDirectly;
  }

  /**
   * Lets the connection's socket reads go straight into the bodies this decoder receives ({@link
   * DirectBodyReads}); only for a connection without TLS.
   */
  public void readBodiesDirectly(Channel channel) {
    channel
        .config()
        .setRecvByteBufAllocator(
            new DirectBodyReads(channel.config().getRecvByteBufAllocator(), this));
  }

  private static String peer(ChannelHandlerContext ctx) {
    SocketAddress address = ctx.channel().remoteAddress();
    if (address instanceof InetSocketAddress) {
      InetSocketAddress inet = (InetSocketAddress) address;
      return inet.getHostString() + ":" + inet.getPort();
    }
    return String.valueOf(address);
  }

  /**
   * A buffer of exactly {@code bodyLength} bytes to receive a reserved data frame's body into: one
   * buffer, or, for a body the schema takes apart ({@link MessageSchema#bodyParts}), a composite of
   * one buffer per part larger than {@link #SHARED_PART_MAX} bytes and one per run of smaller parts
   * in a row, each exactly its size (a large part then holds only its own memory; small parts are
   * many, and a buffer each would cost an allocation and a free each). A body whose parts do not
   * add up to its length is received whole; the receiver refuses it.
   */
  private ByteBuf newBody(ByteBufAllocator alloc, byte type, MessageLite header, int bodyLength) {
    int[] parts = bodyParts(type, header, bodyLength);
    if (parts == null) {
      return alloc.directBuffer(bodyLength, bodyLength);
    }
    CompositeByteBuf body = alloc.compositeDirectBuffer(parts.length);
    for (int i = 0; i < parts.length; ) {
      int length = parts[i++];
      if (length <= SHARED_PART_MAX) {
        while (i < parts.length && parts[i] <= SHARED_PART_MAX) {
          length += parts[i++];
        }
      }
      ByteBuf part = alloc.directBuffer(length, length);
      // a component spans its buffer's readable bytes: all of it; the composite's writer index
      // stays at 0, so the frame's bytes are written across the parts as they arrive
      body.addComponent(false, part.writerIndex(length));
    }
    return body;
  }

  /**
   * Part {@code [offset, offset + length)} of a body {@link #newBody} received in parts, retained
   * once: a part larger than {@link #SHARED_PART_MAX} bytes is its own buffer (keeping it keeps
   * only its memory), a smaller one a slice of its run's buffer (a receiver copies what it keeps of
   * it). A part of a body received whole is a slice of the body.
   */
  public static ByteBuf retainedPart(ByteBuf body, int offset, int length) {
    if (body instanceof CompositeByteBuf) {
      CompositeByteBuf runs = (CompositeByteBuf) body;
      int run = runs.toComponentIndex(offset);
      int runStart = runs.toByteIndex(run);
      ByteBuf buffer = runs.component(run); // a duplicate: retaining it retains the buffer
      if (offset + length <= runStart + buffer.readableBytes()) {
        return length == buffer.readableBytes()
            ? buffer.retain()
            : buffer.retainedSlice(buffer.readerIndex() + offset - runStart, length);
      }
    }
    return body.retainedSlice(offset, length);
  }

  /**
   * Part {@code [offset, offset + length)} of a body {@link #newBody} received in parts, of at most
   * {@link #SHARED_PART_MAX} bytes, not retained: a view of its run's buffer (or of a body received
   * whole), valid while the body is. A receiver copies what it keeps of it, and releases nothing.
   */
  public static ByteBuf borrowedPart(ByteBuf body, int offset, int length) {
    if (body instanceof CompositeByteBuf) {
      CompositeByteBuf runs = (CompositeByteBuf) body;
      int run = runs.toComponentIndex(offset);
      int runStart = runs.toByteIndex(run);
      ByteBuf buffer = runs.internalComponent(run);
      if (offset + length <= runStart + buffer.readableBytes()) {
        return buffer.slice(buffer.readerIndex() + offset - runStart, length);
      }
    }
    return body.slice(offset, length);
  }

  private int[] bodyParts(byte type, MessageLite header, int bodyLength) {
    int[] parts = schema.bodyParts(type, header);
    if (parts == null || parts.length < 2 || parts.length > MAX_BODY_PARTS) {
      return null;
    }
    long sum = 0;
    for (int length : parts) {
      if (length <= 0) {
        return null;
      }
      sum += length;
    }
    return sum == bodyLength ? parts : null;
  }

  /**
   * Stops reading the connection until {@code bodyLength} bytes are reserved, trying every few
   * milliseconds on the connection's event loop (each failed try asks the server to flush).
   */
  private void waitForMemory(ChannelHandlerContext ctx, long bodyLength) {
    if (reservationRetry != null) {
      return;
    }
    ReadGate.pause(ctx.channel(), ReadGate.RESERVATION);
    reservationRetry =
        ctx.executor()
            .scheduleWithFixedDelay(
                () -> {
                  if (!ctx.channel().isActive()) {
                    cancelRetry();
                    return;
                  }
                  if (reservedForNext == 0 && memory.tryReserve(bodyLength)) {
                    reserved(ctx, bodyLength, false);
                    // decode what the cumulation already holds; the rest arrives as reads resume
                    ctx.pipeline().fireChannelRead(Unpooled.EMPTY_BUFFER);
                  }
                },
                RESERVATION_RETRY_MILLIS,
                RESERVATION_RETRY_MILLIS,
                TimeUnit.MILLISECONDS);
  }

  /** Ends a wait for memory ({@link #waitForMemory}) without a reservation. */
  private void stopWaitingForMemory(ChannelHandlerContext ctx) {
    if (reservationRetry != null) {
      cancelRetry();
      ReadGate.resume(ctx.channel(), ReadGate.RESERVATION);
    }
  }

  /**
   * The body of the frame at the head of the cumulation is reserved (by a decode or by the retry):
   * stop waiting, and read on until the frame is whole whatever else pauses the connection.
   */
  private void reserved(ChannelHandlerContext ctx, long bytes, boolean whole) {
    reservedForNext = bytes;
    if (reservationRetry != null) {
      cancelRetry();
      ReadGate.resume(ctx.channel(), ReadGate.RESERVATION);
    }
    if (!whole) {
      ReadGate.receiving(ctx.channel(), true);
      if (bodyTimeoutMillis > 0 && bodyDeadline == null) {
        bodyDeadline =
            ctx.executor()
                .schedule(() -> bodyTooSlow(ctx, bytes), bodyTimeoutMillis, TimeUnit.MILLISECONDS);
      }
    }
  }

  /**
   * The reserved body of {@code bytes} did not arrive whole in time: gives its reservation back and
   * closes the connection (on the connection's event loop, so no frame completes meanwhile).
   */
  private void bodyTooSlow(ChannelHandlerContext ctx, long bytes) {
    bodyDeadline = null;
    if (corrupt || (reservedForNext == 0 && pending == null)) {
      return; // completed or released as the deadline fired
    }
    LOG.warn(
        "closing connection from {}: a data frame body of {} bytes did not arrive whole within"
            + " {} ms of reserving its memory (sluice.network.server.bodyTimeout); {} bytes of it"
            + " had arrived",
        ctx.channel().remoteAddress(),
        bytes,
        bodyTimeoutMillis,
        filling != null ? filling.writerIndex() : 0);
    corrupt = true;
    releaseReservation();
    ctx.close();
  }

  private void cancelBodyDeadline() {
    if (bodyDeadline != null) {
      bodyDeadline.cancel(false);
      bodyDeadline = null;
    }
  }

  private void cancelRetry() {
    if (reservationRetry != null) {
      reservationRetry.cancel(false);
      reservationRetry = null;
    }
  }

  private void releaseReservation() {
    cancelRetry();
    cancelBodyDeadline();
    if (reservedForNext > 0) {
      memory.release(reservedForNext);
      reservedForNext = 0;
    }
    if (pending != null) {
      pending.release(); // the half-received body and its reservation
      pending = null;
      filling = null;
    }
  }

  @Override
  protected void handlerRemoved0(ChannelHandlerContext ctx) {
    releaseReservation();
  }
}
