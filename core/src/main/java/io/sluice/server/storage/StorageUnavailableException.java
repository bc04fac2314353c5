package io.sluice.server.storage;

/**
 * This server cannot take the data of a split: no data directory can (all failed or full), the
 * server is stopping, or the split was committed before a restart. The push moves elsewhere
 * (HARD_SPLIT).
 */
public final class StorageUnavailableException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public StorageUnavailableException(String message) {
    super(message);
  }
}
