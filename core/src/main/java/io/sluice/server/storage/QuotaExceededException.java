package io.sluice.server.storage;

/**
 * An application asked for more than this server allows it (a limit of {@code sluice.app.*}, or the
 * lower one it asked for): answered QUOTA_EXCEEDED, which its client does not retry. The message
 * names the application, the limit and the setting.
 */
public final class QuotaExceededException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public QuotaExceededException(String message) {
    super(message);
  }
}
