package io.sluice.client;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A rack topology script ({@code sluice.topology.script}), as Hadoop's {@code
 * net.topology.script.file.name}: an executable called with host names or IPs as arguments (at most
 * {@link #MAX_ARGS} per call) that prints one rack per argument, in order, separated by newlines or
 * spaces. Each host is resolved once and cached. A call that fails (cannot start, exits non-zero,
 * runs past its timeout, prints the wrong number of racks) is logged naming the script and the
 * hosts, and those hosts stay of unknown rack: placement then uses the host rule for them, never
 * failing the job. Thread safe.
 */
public final class TopologyScript {
  private static final Logger LOG = LoggerFactory.getLogger(TopologyScript.class);

  /** Hosts per call, as Hadoop's default {@code net.topology.script.number.args}. */
  static final int MAX_ARGS = 100;

  private final String script;
  private final long timeoutMillis;
  // host -> rack, "" when the script could not tell
  private final Map<String, String> cache = new HashMap<>();

  public TopologyScript(String script, long timeoutMillis) {
    if (script.isBlank()) {
      throw new IllegalArgumentException(ClientConf.TOPOLOGY_SCRIPT + " is empty");
    }
    this.script = script;
    this.timeoutMillis = timeoutMillis;
  }

  /**
   * The racks of {@code hosts}, running the script for those not resolved before. Never throws: a
   * failed call is logged and leaves its hosts of unknown rack (for good).
   */
  public synchronized ServerRacks racks(Collection<String> hosts) {
    List<String> unresolved = new ArrayList<>();
    for (String h : new LinkedHashSet<>(hosts)) {
      if (!cache.containsKey(h)) {
        unresolved.add(h);
      }
    }
    for (int from = 0; from < unresolved.size(); from += MAX_ARGS) {
      List<String> batch = unresolved.subList(from, Math.min(unresolved.size(), from + MAX_ARGS));
      try {
        cache.putAll(resolve(batch));
      } catch (IOException e) {
        LOG.warn(
            "{}; replicas of servers on these hosts are placed by host only (another host, not"
                + " necessarily another rack)",
            e.getMessage());
        for (String h : batch) {
          cache.put(h, "");
        }
      }
    }
    Map<String, String> racks = new HashMap<>();
    for (String h : hosts) {
      racks.put(h, cache.get(h));
    }
    return ServerRacks.of(racks);
  }

  /**
   * Runs the script once for {@code hosts}.
   *
   * @throws IOException naming the script and the hosts when it cannot start, exits non-zero, runs
   *     past the timeout or prints another number of racks than hosts
   */
  Map<String, String> resolve(List<String> hosts) throws IOException {
    List<String> command = new ArrayList<>();
    command.add(script);
    command.addAll(hosts);
    Path out = Files.createTempFile("sluice-topology", ".out");
    Path err = Files.createTempFile("sluice-topology", ".err");
    try {
      Process process;
      try {
        process =
            new ProcessBuilder(command)
                .redirectOutput(out.toFile())
                .redirectError(err.toFile())
                .start();
        process.getOutputStream().close();
      } catch (IOException e) {
        throw failure(hosts, "cannot be run: " + e.getMessage());
      }
      boolean exited;
      try {
        exited = process.waitFor(timeoutMillis, TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        exited = false;
      }
      if (!exited) {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        throw failure(
            hosts,
            "did not finish within " + timeoutMillis + " ms (" + ClientConf.TOPOLOGY_TIMEOUT + ")");
      }
      if (process.exitValue() != 0) {
        throw failure(hosts, "exited with " + process.exitValue() + ": " + excerpt(err));
      }
      String printed = Files.readString(out, StandardCharsets.UTF_8).trim();
      String[] racks = printed.isEmpty() ? new String[0] : printed.split("\\s+");
      if (racks.length != hosts.size()) {
        throw failure(
            hosts,
            "printed "
                + racks.length
                + " rack(s) for "
                + hosts.size()
                + " host(s), expected one per host: '"
                + excerpt(out)
                + "'");
      }
      Map<String, String> resolved = new HashMap<>();
      for (int i = 0; i < racks.length; i++) {
        resolved.put(hosts.get(i), racks[i]);
      }
      return resolved;
    } finally {
      Files.deleteIfExists(out);
      Files.deleteIfExists(err);
    }
  }

  private IOException failure(List<String> hosts, String what) {
    return new IOException(
        "Topology script "
            + script
            + " ("
            + ClientConf.TOPOLOGY_SCRIPT
            + ") called for host(s) "
            + String.join(", ", hosts)
            + " "
            + what);
  }

  private static String excerpt(Path file) throws IOException {
    String s = Files.readString(file, StandardCharsets.UTF_8).trim();
    return s.length() > 500 ? s.substring(0, 500) + "..." : s;
  }
}
