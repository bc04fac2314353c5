package io.sluice.ctl;

import io.sluice.common.Json;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/** The servers a command goes to: {@code --servers}, or the RUNNING NodeManagers of YARN. */
final class ServerList {
  private ServerList() {}

  /** A value that cannot name servers: a usage error (exit 2). */
  static final class BadValue extends Exception {
    private static final long serialVersionUID = 1L;

    BadValue(String message) {
      super(message);
    }
  }

  /** The ResourceManager did not answer usably (exit 1). */
  static final class DiscoveryFailed extends Exception {
    private static final long serialVersionUID = 1L;

    DiscoveryFailed(String message) {
      super(message);
    }
  }

  /**
   * {@code --servers}: comma-separated {@code host:port} ({@code [v6]:port} for IPv6), in order,
   * duplicates dropped.
   *
   * @throws BadValue naming the entry that is not host:port
   */
  static List<String> parse(String option, String value) throws BadValue {
    Set<String> servers = new LinkedHashSet<>();
    for (String raw : value.split(",", -1)) {
      String entry = raw.strip();
      if (entry.isEmpty()) {
        if (value.strip().isEmpty()) {
          throw new BadValue(option + " is empty; give host:port[,host:port...]");
        }
        continue;
      }
      servers.add(hostPort(option, entry));
    }
    if (servers.isEmpty()) {
      throw new BadValue(option + " '" + value + "' names no server; give host:port[,...]");
    }
    return new ArrayList<>(servers);
  }

  /** Checks one {@code host:port}; returns it normalized (no spaces). */
  static String hostPort(String option, String entry) throws BadValue {
    int colon = entry.lastIndexOf(':');
    String host = colon < 0 ? entry : entry.substring(0, colon);
    if (colon < 0 || (host.contains(":") && !(host.startsWith("[") && host.endsWith("]")))) {
      throw new BadValue(
          option
              + ": '"
              + entry
              + "' is not host:port (the admin port, sluice.metrics.port, 9291 by default;"
              + " an IPv6 address goes in brackets: [::1]:9291)");
    }
    if (host.isEmpty() || host.equals("[]")) {
      throw new BadValue(option + ": '" + entry + "' has no host");
    }
    return host + ":" + port(option, entry, entry.substring(colon + 1));
  }

  private static int port(String option, String entry, String text) throws BadValue {
    int port;
    try {
      port = Integer.parseInt(text);
    } catch (NumberFormatException e) {
      throw new BadValue(option + ": the port of '" + entry + "' is not a number: '" + text + "'");
    }
    if (port < 1 || port > 65535) {
      throw new BadValue(option + ": the port of '" + entry + "' is not in 1..65535: " + port);
    }
    return port;
  }

  /**
   * The ResourceManagers' web addresses in {@code --yarn}: comma-separated {@code host:port} or
   * {@code http[s]://host:port}, as base URIs.
   */
  static List<String> resourceManagers(String value) throws BadValue {
    List<String> rms = new ArrayList<>();
    for (String raw : value.split(",", -1)) {
      String entry = raw.strip();
      if (entry.isEmpty()) {
        continue;
      }
      String scheme = "http://";
      String address = entry;
      if (entry.startsWith("http://") || entry.startsWith("https://")) {
        scheme = entry.substring(0, entry.indexOf("://") + 3);
        address = entry.substring(scheme.length());
        while (address.endsWith("/")) {
          address = address.substring(0, address.length() - 1);
        }
      }
      rms.add(scheme + hostPort("--yarn", address));
    }
    if (rms.isEmpty()) {
      throw new BadValue("--yarn is empty; give the ResourceManager's web address host:port");
    }
    return rms;
  }

  /**
   * Asks the ResourceManagers in turn (the first that answers wins; a standby one redirects to the
   * active) for the RUNNING NodeManagers, and returns {@code host:adminPort} for each, sorted.
   */
  static List<String> fromYarn(
      List<String> resourceManagers, int adminPort, HttpClient http, Duration timeout)
      throws DiscoveryFailed {
    List<String> failures = new ArrayList<>();
    for (String rm : resourceManagers) {
      String url = rm + "/ws/v1/cluster/nodes?states=RUNNING";
      HttpResponse<String> response;
      try {
        response =
            http.send(
                HttpRequest.newBuilder(URI.create(url))
                    .timeout(timeout)
                    .header("Accept", "application/json")
                    .GET()
                    .build(),
                HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
      } catch (IOException e) {
        failures.add(rm + ": " + (e.getMessage() != null ? e.getMessage() : e.toString()));
        continue;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new DiscoveryFailed("interrupted while asking the ResourceManager " + rm);
      }
      if (response.statusCode() != 200) {
        failures.add(rm + ": HTTP " + response.statusCode() + " for " + url);
        continue;
      }
      try {
        return nodes(Json.parse(response.body()), adminPort);
      } catch (IllegalArgumentException e) {
        failures.add(rm + ": the answer to " + url + " is not the nodes JSON: " + e.getMessage());
      }
    }
    throw new DiscoveryFailed(
        "cannot list the NodeManagers: no ResourceManager answered (" + failures + ")");
  }

  /** {@code {"nodes":{"node":[{"nodeHostName":..,"state":..}]}}}; nodes is null when empty. */
  static List<String> nodes(Object document, int adminPort) {
    if (!(document instanceof Map)) {
      throw new IllegalArgumentException("not a JSON object");
    }
    Object nodes = ((Map<?, ?>) document).get("nodes");
    if (nodes == null) {
      if (!((Map<?, ?>) document).containsKey("nodes")) {
        throw new IllegalArgumentException("no 'nodes' member");
      }
      return List.of();
    }
    if (!(nodes instanceof Map)) {
      throw new IllegalArgumentException("'nodes' is not an object");
    }
    Object node = ((Map<?, ?>) nodes).get("node");
    List<?> list;
    if (node == null) {
      list = List.of();
    } else if (node instanceof List) {
      list = (List<?>) node;
    } else {
      list = List.of(node); // some JSON providers write a single element without the array
    }
    Set<String> hosts = new TreeSet<>();
    for (Object n : list) {
      if (!(n instanceof Map)) {
        continue;
      }
      Map<?, ?> m = (Map<?, ?>) n;
      Object state = m.get("state");
      Object host = m.get("nodeHostName");
      if (host instanceof String && (state == null || "RUNNING".equals(state))) {
        String h = (String) host;
        hosts.add((h.contains(":") ? "[" + h + "]" : h) + ":" + adminPort);
      }
    }
    return new ArrayList<>(hosts);
  }
}
