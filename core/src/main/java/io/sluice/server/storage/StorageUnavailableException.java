package io.sluice.server.storage;

/** No data directory can take a new split (all failed or full); the push moves elsewhere. */
public final class StorageUnavailableException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public StorageUnavailableException(String message) {
    super(message);
  }
}
