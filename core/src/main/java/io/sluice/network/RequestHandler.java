package io.sluice.network;

import io.netty.channel.Channel;

/**
 * Serves the requests of one {@link TransportServer}. Called on the connection's event loop; must
 * not block (hand slow work to another executor and answer from there).
 */
public interface RequestHandler {
  /**
   * Handles one request. The handler owns {@code request} (and its body) and must release it, and
   * must answer every request with exactly one response on {@code channel}.
   */
  void handle(Channel channel, Message request);

  /** Called once when a connection closes; release what belongs to it. */
  default void connectionClosed(Channel channel) {}

  /**
   * Answer to a frame that could not be decoded, before the connection closes. The default sends
   * nothing.
   */
  default void malformedFrame(Channel channel, Throwable cause) {}
}
