package io.sluice.network;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelConfig;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.util.UncheckedBooleanSupplier;

/**
 * A server connection's socket reads, which go straight into the body of the data frame being
 * received once its header is in ({@link FrameDecoder#directReadTarget}): the kernel copies the
 * bytes to where the server keeps them, and the decoder has nothing left to copy. Every other read
 * (headers, control frames, the first bytes of a body, which arrive with its header) goes to a
 * buffer of the channel's own allocator, as without this. Only for plain connections: under TLS the
 * socket carries ciphertext.
 */
final class DirectBodyReads implements RecvByteBufAllocator {
  private final RecvByteBufAllocator reads;
  private final FrameDecoder decoder;

  /**
   * @param reads the channel's allocator, which sizes and counts every read
   * @param decoder the connection's decoder, which says where a read goes
   */
  DirectBodyReads(RecvByteBufAllocator reads, FrameDecoder decoder) {
    this.reads = reads;
    this.decoder = decoder;
  }

  @Override
  public Handle newHandle() {
    return new DirectHandle((ExtendedHandle) reads.newHandle());
  }

  /**
   * The channel's own handle, but for where a read goes. Written out rather than Netty's {@code
   * DelegatingHandle}, which is not an {@link ExtendedHandle}: the native epoll transport needs
   * one.
   */
  private final class DirectHandle implements ExtendedHandle {
    private final ExtendedHandle handle;

    DirectHandle(ExtendedHandle handle) {
      this.handle = handle;
    }

    @Override
    public ByteBuf allocate(ByteBufAllocator alloc) {
      ByteBuf body = decoder.directReadTarget();
      return body != null ? body : handle.allocate(alloc);
    }

    @Override
    public int guess() {
      return handle.guess();
    }

    @Override
    public void reset(ChannelConfig config) {
      handle.reset(config);
    }

    @Override
    public void incMessagesRead(int numMessages) {
      handle.incMessagesRead(numMessages);
    }

    @Override
    public void lastBytesRead(int bytes) {
      handle.lastBytesRead(bytes);
    }

    @Override
    public int lastBytesRead() {
      return handle.lastBytesRead();
    }

    @Override
    public void attemptedBytesRead(int bytes) {
      handle.attemptedBytesRead(bytes);
    }

    @Override
    public int attemptedBytesRead() {
      return handle.attemptedBytesRead();
    }

    @Override
    public boolean continueReading() {
      return handle.continueReading();
    }

    @Override
    public boolean continueReading(UncheckedBooleanSupplier maybeMoreDataSupplier) {
      return handle.continueReading(maybeMoreDataSupplier);
    }

    @Override
    public void readComplete() {
      handle.readComplete();
    }
  }
}
