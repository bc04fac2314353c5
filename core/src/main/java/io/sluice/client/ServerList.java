package io.sluice.client;

import io.sluice.protocol.proto.ServerAddress;
import java.util.ArrayList;
import java.util.List;

/**
 * A configured list of servers, {@code host:port,host:port,...}, as every engine plugin takes it.
 */
public final class ServerList {
  private ServerList() {}

  /**
   * Parses {@code list}, the value of setting {@code key}; blank entries are skipped.
   *
   * @throws IllegalArgumentException naming the key and the entry when one is not {@code
   *     host:port}, or the key when the list names no server
   */
  public static List<ServerAddress> parse(String key, String list) {
    List<ServerAddress> servers = new ArrayList<>();
    for (String entry : list.split(",")) {
      String e = entry.trim();
      if (e.isEmpty()) {
        continue;
      }
      int colon = e.lastIndexOf(':');
      int port = -1;
      if (colon > 0) {
        try {
          port = Integer.parseInt(e.substring(colon + 1));
        } catch (NumberFormatException ignored) {
          port = -1;
        }
      }
      if (port <= 0 || port > 65535) {
        throw new IllegalArgumentException(
            "Invalid entry '" + e + "' in " + key + ": expected host:port");
      }
      servers.add(ClientContext.address(e.substring(0, colon), port));
    }
    if (servers.isEmpty()) {
      throw new IllegalArgumentException(
          key
              + " lists no server ('"
              + list
              + "'): set it to the Sluice servers, as"
              + " host:port,host:port");
    }
    return servers;
  }
}
