package io.sluice.protocol;

import io.sluice.protocol.proto.Status;

/**
 * A request answered with a status other than OK. Callers branch on {@link #status()}, never on the
 * message text.
 */
public final class StatusException extends Exception {
  private static final long serialVersionUID = 1L;
  private final Status status;

  public StatusException(Status status, String message) {
    super(status + ": " + message);
    this.status = status;
  }

  public Status status() {
    return status;
  }
}
