package io.sluice.auth;

import io.sluice.protocol.proto.AppRegistration;

/** Where an endpoint finds the key of each application it serves. */
public interface AppKeys {
  /** The key of {@code appId}, or null when this endpoint has none. */
  byte[] key(String appId);

  /**
   * Takes a coordinator's registration of {@code appId}.
   *
   * @return null when the key is now bound (or already was, to the same key); otherwise why not,
   *     for a FORBIDDEN answer
   */
  String register(String appId, AppRegistration registration);

  /**
   * A coordinator's endpoint: it serves its own application, whose key it derived itself; a
   * registration (its own JVM's clients send one) changes nothing there.
   */
  static AppKeys single(String appId, byte[] key) {
    return new AppKeys() {
      @Override
      public byte[] key(String id) {
        return appId.equals(id) ? key : null;
      }

      @Override
      public String register(String id, AppRegistration registration) {
        return null;
      }
    };
  }
}
