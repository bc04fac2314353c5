package io.sluice.network;

import java.io.IOException;

/**
 * A request failed because its connection closed or broke before the answer came: the peer went
 * away (a restart, a crash) or the network between failed. The request may or may not have been
 * served. Not thrown for a peer that answered with nonsense: that closes the connection too, but
 * with the decoder's error.
 */
public final class ConnectionLostException extends IOException {
  private static final long serialVersionUID = 1L;

  public ConnectionLostException(String message) {
    super(message);
  }

  public ConnectionLostException(String message, Throwable cause) {
    super(message, cause);
  }
}
