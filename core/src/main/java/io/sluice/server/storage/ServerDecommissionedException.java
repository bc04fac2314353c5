package io.sluice.server.storage;

/**
 * A request for new data (a shuffle's registration) reached a decommissioned or stopping server:
 * the client places the data on other servers. Not a failure of the server; answered
 * DECOMMISSIONING.
 */
public final class ServerDecommissionedException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public ServerDecommissionedException(String message) {
    super(message);
  }
}
