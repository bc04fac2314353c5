package io.sluice.server.admin;

import io.sluice.common.Json;
import io.sluice.common.SluiceVersion;
import io.sluice.server.ServerMetrics;
import io.sluice.server.ShuffleServer;
import io.sluice.server.memory.MemoryAccount;
import io.sluice.server.memory.MemoryBudget;
import io.sluice.server.storage.ApplicationInfo;
import io.sluice.server.storage.DataDirectory;
import io.sluice.server.storage.ServerShuffle;
import io.sluice.server.storage.ShuffleShape;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The admin REST API, version 1, answered in JSON under {@code /api/v1}:
 *
 * <ul>
 *   <li>{@code GET /api/v1/status}: version, state (SERVING, DECOMMISSIONING, DRAINED), uptime,
 *       memory, data directories, applications, shuffles, open splits, streams and connections;
 *   <li>{@code GET /api/v1/applications}: every application with data here;
 *   <li>{@code GET /api/v1/applications/APP/shuffles}: the shuffles of one;
 *   <li>{@code POST /api/v1/decommission}, {@code POST /api/v1/cancel-decommission}, {@code POST
 *       /api/v1/applications/APP/expire}: actions, which need {@code Authorization: Bearer TOKEN}
 *       with the server's {@code sluice.admin.token}, and are refused (403) on a server without
 *       one.
 * </ul>
 *
 * <p>With {@code sluice.auth.enabled}, the two endpoints that list application ids need the token
 * too; {@code status} (counts only) and {@code /metrics} stay open for monitoring, where the
 * per-application series are labelled with their ids only for a scrape that sends the token ({@link
 * #showsApplicationIds}).
 *
 * <p>Errors are JSON too, {@code {"error": "..."}}, with 400 (malformed), 401 (no or wrong token),
 * 403 (no token configured), 404 (unknown path or application) or 405 (wrong method). Independent
 * of HTTP: {@link #answer} takes the method, path and authorization header, so the transport stays
 * in {@link AdminHttpServer}.
 */
public final class AdminApi {
  private static final Logger LOG = LoggerFactory.getLogger(AdminApi.class);

  /** Where the API lives. */
  public static final String ROOT = "/api/v1";

  /** An HTTP status and a JSON body. */
  public static final class Answer {
    public final int status;
    public final String json;

    Answer(int status, Object body) {
      this.status = status;
      this.json = Json.write(body);
    }
  }

  private final ShuffleServer server;
  private final AdminConf conf;

  public AdminApi(ShuffleServer server, AdminConf conf) {
    this.server = server;
    this.conf = conf;
  }

  /** Answers one request; {@code authorization} is the request's header, or null. */
  public Answer answer(String method, String path, String authorization) {
    if (!path.startsWith(ROOT + "/")) {
      return error(404, "no such endpoint " + path + "; the API lives under " + ROOT);
    }
    String[] parts = path.substring(ROOT.length() + 1).split("/", -1);
    boolean get = method.equals("GET");
    boolean post = method.equals("POST");
    if (parts.length == 1 && parts[0].equals("status")) {
      return get ? new Answer(200, status()) : wrongMethod(method, path, "GET");
    }
    if (parts.length == 1 && parts[0].equals("applications")) {
      return get
          ? readApplications(authorization, () -> new Answer(200, applications()))
          : wrongMethod(method, path, "GET");
    }
    if (parts.length == 3 && parts[0].equals("applications") && parts[2].equals("shuffles")) {
      return get
          ? readApplications(authorization, () -> shuffles(parts[1]))
          : wrongMethod(method, path, "GET");
    }
    if (parts.length == 1 && parts[0].equals("decommission")) {
      return post ? act(authorization, this::decommission) : wrongMethod(method, path, "POST");
    }
    if (parts.length == 1 && parts[0].equals("cancel-decommission")) {
      return post
          ? act(authorization, this::cancelDecommission)
          : wrongMethod(method, path, "POST");
    }
    if (parts.length == 3 && parts[0].equals("applications") && parts[2].equals("expire")) {
      return post ? act(authorization, () -> expire(parts[1])) : wrongMethod(method, path, "POST");
    }
    return error(
        404,
        "no such endpoint "
            + path
            + "; GET status, applications, applications/APP/shuffles; POST decommission,"
            + " cancel-decommission, applications/APP/expire");
  }

  private interface Action {
    Answer run();
  }

  private Answer act(String authorization, Action action) {
    if (conf.actionsClosed()) {
      return error(
          403,
          "actions are refused: this server has no admin token; set sluice.admin.tokenFile (or"
              + " sluice.admin.token) on it and send 'Authorization: Bearer TOKEN'");
    }
    return authorized(authorization) ? action.run() : missingToken("this action");
  }

  /** A read that lists application ids: open unless authentication is on. */
  private Answer readApplications(String authorization, Action read) {
    if (!conf.applicationReadsGuarded()) {
      return read.run();
    }
    if (conf.actionsClosed()) {
      return error(
          403,
          "application listings are refused: sluice.auth.enabled is true and this server has no"
              + " admin token; set sluice.admin.tokenFile (or sluice.admin.token) on it");
    }
    return authorized(authorization)
        ? read.run()
        : missingToken("with sluice.auth.enabled, this read");
  }

  /**
   * Whether a request with {@code authorization} may see application ids: always without
   * authentication; under {@code sluice.auth.enabled} only with the admin token. {@code /metrics}
   * asks this too, and shows every application summed as one series to a request that may not.
   */
  public boolean showsApplicationIds(String authorization) {
    return !conf.applicationReadsGuarded() || (!conf.actionsClosed() && authorized(authorization));
  }

  private boolean authorized(String authorization) {
    byte[] expected = ("Bearer " + conf.token().get()).getBytes(StandardCharsets.UTF_8);
    return authorization != null
        && MessageDigest.isEqual(expected, authorization.trim().getBytes(StandardCharsets.UTF_8));
  }

  private static Answer missingToken(String what) {
    return error(
        401,
        what
            + " needs the header 'Authorization: Bearer TOKEN' with the server's"
            + " sluice.admin.token");
  }

  private Answer decommission() {
    server.decommission();
    LOG.info("Decommission requested through the admin API");
    return new Answer(200, state());
  }

  private Answer cancelDecommission() {
    server.cancelDecommission();
    return new Answer(200, state());
  }

  private Answer expire(String appId) {
    if (server.registry().application(appId) == null) {
      return error(404, "application " + appId + " has no data on this server");
    }
    LOG.info("Application {} expired through the admin API; deleting its data", appId);
    server.registry().unregisterApplication(appId).join();
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("application", appId);
    body.put("expired", true);
    return new Answer(200, body);
  }

  private Map<String, Object> state() {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("state", server.lifecycle());
    body.put("shuffles", server.registry().shuffleCount());
    return body;
  }

  private Map<String, Object> status() {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("version", SluiceVersion.get());
    body.put("server", server.host() + ":" + server.port());
    body.put("state", server.lifecycle());
    body.put("uptimeMillis", server.uptimeMillis());
    MemoryBudget memory = server.memory();
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("heldBytes", memory.held());
    m.put("maxBytes", memory.max());
    m.put("peakBytes", memory.peak());
    m.put("state", memory.state());
    m.put("pausedMillis", memory.pausedMillis());
    body.put("memory", m);
    List<Object> dirs = new ArrayList<>();
    for (DataDirectory d : server.dataDirectories().all()) {
      Map<String, Object> dir = new LinkedHashMap<>();
      dir.put("path", d.root().toString());
      dir.put("health", d.health());
      dir.put("healthReason", d.healthReason());
      dir.put("usage", d.usage());
      dir.put("checksumFailures", d.checksumFailures());
      dirs.add(dir);
    }
    body.put("directories", dirs);
    body.put("storage", storage());
    List<ApplicationInfo> apps = server.registry().applications();
    int openSplits = 0;
    for (ApplicationInfo a : apps) {
      for (ServerShuffle s : a.shuffles()) {
        openSplits += s.openSplitCount();
      }
    }
    body.put("applications", apps.size());
    body.put("shuffles", server.registry().shuffleCount());
    body.put("openSplits", openSplits);
    body.put("openStreams", server.openStreamCount());
    body.put("connections", server.connectionCount());
    return body;
  }

  /**
   * The storage tiers: the policy, what the memory tier holds, what went to the distributed one.
   */
  private Map<String, Object> storage() {
    ServerMetrics metrics = server.metrics();
    Map<String, Object> storage = new LinkedHashMap<>();
    storage.put("policy", server.dataDirectories().storagePolicy().toString());
    storage.put("memoryTierSplits", metrics.memoryTierSplits().getCount());
    storage.put("memoryTierBytes", metrics.memoryTierBytes().getCount());
    String root = server.dataDirectories().distributedTierRoot();
    storage.put("hdfsDir", root == null ? "" : root);
    storage.put("hdfsTierSplits", metrics.hdfsTierSplits().getCount());
    storage.put("hdfsTierBytes", metrics.hdfsTierBytes().getCount());
    storage.put("hdfsTierFailures", metrics.hdfsTierFailures().getCount());
    return storage;
  }

  private Map<String, Object> applications() {
    List<Object> list = new ArrayList<>();
    List<ApplicationInfo> apps = server.registry().applications();
    apps.sort((a, b) -> a.appId().compareTo(b.appId()));
    for (ApplicationInfo a : apps) {
      Map<String, Object> app = new LinkedHashMap<>();
      app.put("id", a.appId());
      app.put("shuffles", a.shuffles().size());
      app.put("storedBytes", a.storedBytes());
      app.put("pushedBytes", a.pushedBytes());
      app.put("readBytes", a.readBytes());
      app.put("refusedBytes", a.refusedBytes());
      MemoryAccount account = server.memory().existingAccount(a.appId());
      app.put("memoryHeldBytes", account == null ? 0 : account.held());
      app.put("weight", account == null ? 1 : account.weight());
      app.put("openWriters", account == null ? 0 : account.openWriters());
      app.put("openStreams", server.streamQuota().openBy(a.appId()));
      app.put("lastHeartbeatMillisAgo", a.millisSinceHeard());
      list.add(app);
    }
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("applications", list);
    return body;
  }

  private Answer shuffles(String appId) {
    ApplicationInfo app = server.registry().application(appId);
    if (app == null) {
      return error(404, "application " + appId + " has no data on this server");
    }
    List<Object> list = new ArrayList<>();
    for (ServerShuffle s : app.shuffles()) {
      Map<String, Object> shuffle = new LinkedHashMap<>();
      shuffle.put("shuffleId", s.shuffleId());
      ShuffleShape shape = s.shape();
      boolean known = !shape.equals(ShuffleShape.UNKNOWN);
      shuffle.put("maps", known ? shape.numMaps() : null);
      shuffle.put("partitions", known ? shape.numPartitions() : null);
      shuffle.put("committed", s.isCommitStarted());
      shuffle.put("openSplits", s.openSplitCount());
      shuffle.put("committedSplits", s.committedSplitCount());
      shuffle.put("mapPartitions", s.mapPartitionCount());
      shuffle.put("storedBytes", s.storedBytes());
      list.add(shuffle);
    }
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("application", appId);
    body.put("shuffles", list);
    return new Answer(200, body);
  }

  /** The answer to a request that failed on the server's side. */
  static Answer internalError(RuntimeException e) {
    return error(500, "the request failed on the server: " + e);
  }

  private static Answer wrongMethod(String method, String path, String allowed) {
    return error(405, method + " " + path + " is not supported; use " + allowed);
  }

  private static Answer error(int status, String message) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("error", message);
    return new Answer(status, body);
  }
}
