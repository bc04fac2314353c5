package io.sluice.client;

import io.sluice.protocol.StatusException;
import io.sluice.protocol.proto.Status;
import java.io.IOException;

/**
 * A server refused a read because the application holds as much as that server allows it
 * (QUOTA_EXCEEDED; the message names the limit and the setting). Not a lost partition: rerunning
 * the producers would not help, so the engines fail the task with it instead of reporting a fetch
 * failure.
 */
public final class ApplicationLimitException extends IOException {
  private static final long serialVersionUID = 1L;

  public ApplicationLimitException(String message, Throwable cause) {
    super(message, cause);
  }

  /** Whether {@code error} is a server's QUOTA_EXCEEDED answer. */
  public static boolean isQuotaAnswer(Throwable error) {
    return error instanceof StatusException
        && ((StatusException) error).status() == Status.QUOTA_EXCEEDED;
  }
}
