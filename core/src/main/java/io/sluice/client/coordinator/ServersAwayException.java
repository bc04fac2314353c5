package io.sluice.client.coordinator;

import java.io.IOException;

/**
 * No server can take a partition now, and every one that could is away (refusing connections) or
 * stopping, as servers are while they restart: the coordinator answers {@code CONGESTED}, and the
 * writer asks again until {@code sluice.client.serverRestartWait} has passed.
 */
final class ServersAwayException extends IOException {
  private static final long serialVersionUID = 1L;

  ServersAwayException(String message, Throwable cause) {
    super(message, cause);
  }
}
