package io.sluice.common;

import java.util.concurrent.CompletionException;

/** Helpers for the failures of {@link java.util.concurrent.CompletableFuture}s. */
public final class Futures {
  private Futures() {}

  /**
   * The failure a future's stage saw, without the {@link CompletionException} that dependent stages
   * wrap it in; null for null.
   */
  public static Throwable cause(Throwable error) {
    return error instanceof CompletionException && error.getCause() != null
        ? error.getCause()
        : error;
  }
}
