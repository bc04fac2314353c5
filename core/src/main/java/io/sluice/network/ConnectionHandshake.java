package io.sluice.network;

import java.util.concurrent.CompletableFuture;

/**
 * What a client does on a new connection before its first request: with authentication, proving it
 * holds the key of the application it acts for ({@code io.sluice.auth.ClientAuthenticator}).
 */
public interface ConnectionHandshake {
  /**
   * Runs the handshake for {@code principal} on a fresh connection, never blocking. The future
   * fails with an {@link java.io.IOException} naming the server and the reason.
   */
  CompletableFuture<Void> handshake(TransportClient client, String principal);
}
