package io.sluice.network;

import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandler;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.util.AttributeKey;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Whether the server reads a connection, decided by independent reasons: a connection is read only
 * while no reason holds it. Memory pressure (pushing connections), a data frame waiting for its
 * memory reservation, a peer that does not read its responses and one with too many file answers
 * under way each pause it on their own, and lifting one reason never resumes a connection another
 * still holds. Thread safe: the channel's auto-read flag is set on its event loop from the current
 * reasons, so racing calls settle on the latest state.
 */
public final class ReadGate {
  /** Server memory is above the pause watermark (pushing connections only). */
  public static final int MEMORY = 1;

  /** A data frame's body is waiting for room in the server's memory budget. */
  public static final int RESERVATION = 2;

  /** The peer does not read its responses (the channel is not writable). */
  public static final int WRITABILITY = 4;

  /**
   * The connection has as many answers under way that hold a file open (chunks being prepared or
   * written) as it may: a peer that asks and never reads would pile up open files. Unlike the other
   * reasons it also holds the frames already received: the decoder stops at the next frame, and
   * {@link #resumeDecoding} goes on with them.
   */
  public static final int FILE_ANSWERS = 16;

  /** Not a pause: the decoder holds a reservation for a frame it is receiving. */
  private static final int RECEIVING = 8;

  private static final AttributeKey<AtomicInteger> REASONS = AttributeKey.valueOf("sluiceReadGate");

  /**
   * Drops read requests while a reason holds the connection. Auto-read off is not enough: a decoder
   * that produced no message asks for another read itself ({@code ByteToMessageDecoder} does, so
   * that a partial frame makes progress), which would read on past a pause. Place it between the
   * socket and the decoder.
   */
  public static final ChannelOutboundHandler GUARD = new Guard();

  @ChannelHandler.Sharable
  private static final class Guard extends ChannelOutboundHandlerAdapter {
    @Override
    public void read(ChannelHandlerContext ctx) {
      AtomicInteger reasons = ctx.channel().attr(REASONS).get();
      if (reasons == null || readable(reasons.get())) {
        ctx.read();
      }
    }
  }

  private ReadGate() {}

  public static void pause(Channel channel, int reason) {
    update(channel, reason, true);
  }

  public static void resume(Channel channel, int reason) {
    update(channel, reason, false);
  }

  /**
   * Lifts {@code reason} and, on the connection's event loop, decodes the frames already received
   * (the decoder stops at a frame while {@link #FILE_ANSWERS} holds the connection; no read may
   * come to restart it when the peer sent everything before).
   */
  public static void resumeDecoding(Channel channel, int reason) {
    if (!isPaused(channel, reason)) {
      return;
    }
    update(channel, reason, false);
    channel.eventLoop().execute(() -> channel.pipeline().fireChannelRead(Unpooled.EMPTY_BUFFER));
  }

  /**
   * Whether the decoder holds a reservation for a frame it is still receiving: while it does, only
   * {@link #RESERVATION} can pause the connection.
   */
  public static void receiving(Channel channel, boolean holdsReservation) {
    update(channel, RECEIVING, holdsReservation);
  }

  /** True while {@code reason} holds the connection. */
  public static boolean isPaused(Channel channel, int reason) {
    AtomicInteger r = channel.attr(REASONS).get();
    return r != null && (r.get() & reason) != 0;
  }

  private static void update(Channel channel, int reason, boolean pause) {
    AtomicInteger reasons = channel.attr(REASONS).get();
    if (reasons == null) {
      AtomicInteger created = new AtomicInteger();
      AtomicInteger raced = channel.attr(REASONS).setIfAbsent(created);
      reasons = raced == null ? created : raced;
    }
    int before;
    int after;
    do {
      before = reasons.get();
      after = pause ? before | reason : before & ~reason;
    } while (!reasons.compareAndSet(before, after));
    if (before == after) {
      return;
    }
    AtomicInteger current = reasons;
    if (channel.eventLoop().inEventLoop()) {
      channel.config().setAutoRead(readable(current.get()));
    } else {
      channel.eventLoop().execute(() -> channel.config().setAutoRead(readable(current.get())));
    }
  }

  private static boolean readable(int reasons) {
    int holding = reasons & ~RECEIVING;
    if ((reasons & RECEIVING) != 0) {
      holding &= ~(MEMORY | WRITABILITY);
    }
    return holding == 0;
  }
}
