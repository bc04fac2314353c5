package io.sluice.network;

/**
 * The memory a server lets bulk data take while it is received: a {@link FrameDecoder} reserves a
 * data frame's body here before it reads the body, so what Netty holds for bodies stays inside the
 * server's budget whatever arrives at its port. Implemented by the server's memory budget; the
 * transport knows nothing else about it. Implementations are thread safe.
 */
public interface InboundMemory {
  /**
   * Reserves {@code bytes} if they fit under the maximum.
   *
   * @return false, reserving nothing, when they do not fit now
   */
  boolean tryReserve(long bytes);

  /** Returns bytes reserved by {@link #tryReserve}. */
  void release(long bytes);

  /** The most bytes that can ever be reserved; a larger body can never be read. */
  long max();
}
