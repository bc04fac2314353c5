package io.sluice.server;

import io.sluice.auth.AppKeys;
import io.sluice.auth.AuthCodes;
import io.sluice.protocol.proto.AppRegistration;
import io.sluice.server.storage.ShuffleRegistry;

/**
 * A server's application keys: bound by the first registration a coordinator signed with the
 * cluster secret, kept with the application (and in the state store, so they survive a restart),
 * gone when the application is unregistered or expires. The registry, and so the state store, hold
 * each key only sealed with the cluster secret ({@link AuthCodes#sealAtRest}): whoever can read the
 * state store's files but lacks the secret cannot authenticate as an application.
 */
final class RegisteredAppKeys implements AppKeys {
  private final ShuffleRegistry registry;
  private final byte[] clusterSecret;

  RegisteredAppKeys(ShuffleRegistry registry, byte[] clusterSecret) {
    this.registry = registry;
    this.clusterSecret = clusterSecret.clone();
  }

  @Override
  public byte[] key(String appId) {
    byte[] sealed = registry.authKey(appId);
    return sealed == null ? null : AuthCodes.openAtRest(clusterSecret, appId, sealed);
  }

  @Override
  public String register(String appId, AppRegistration registration) {
    byte[] key = AuthCodes.openRegistration(clusterSecret, appId, registration);
    if (key == null) {
      return "it is not signed with this server's cluster secret (sluice.auth.clusterSecret)";
    }
    if (!registry.bindKey(appId, AuthCodes.sealAtRest(clusterSecret, appId, key))) {
      return "the application id is registered here with another key (another coordinator"
          + " claimed it first)";
    }
    return null;
  }
}
