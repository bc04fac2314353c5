package io.sluice.network;

import io.netty.channel.Channel;
import io.netty.util.AttributeKey;

/**
 * Whom a server-side connection acts for once it authenticated: the application whose key it proved
 * it holds. Null before that, and on servers without authentication.
 */
public final class ConnectionPrincipal {
  private static final AttributeKey<String> KEY = AttributeKey.valueOf("sluicePrincipal");

  private ConnectionPrincipal() {}

  /** The application {@code channel} authenticated for, or null. */
  public static String of(Channel channel) {
    return channel.attr(KEY).get();
  }

  /** Records that {@code channel} proved it holds the key of {@code appId}. */
  public static void set(Channel channel, String appId) {
    channel.attr(KEY).set(appId);
  }
}
