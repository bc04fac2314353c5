package io.sluice.benchmarks;

/**
 * How the server benchmark's connections are secured in a run: plain (the baseline), with
 * per-application authentication ({@code --auth}), or over TLS ({@code --tls}). Each variant runs
 * on a server of its own, side by side with the plain one, and is compared with it.
 */
enum WireSecurity {
  PLAIN("plain", "plain"),
  AUTH("auth", "authentication (sluice.auth.enabled: HMAC challenge-response per connection)"),
  TLS("tls", "TLS (sluice.tls.enabled, TLSv1.3, JDK provider)");

  /** Prefix of this variant's keys in the last JSON line, and its directory name. */
  final String key;

  final String description;

  WireSecurity(String key, String description) {
    this.key = key;
    this.description = description;
  }
}
