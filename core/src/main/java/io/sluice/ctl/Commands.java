package io.sluice.ctl;

import io.sluice.common.Json;
import io.sluice.ctl.AdminClient.Reply;
import java.io.PrintStream;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.LocalTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** What each command asks the servers and how it shows their answers; returns exit codes. */
final class Commands {
  static final int OK = 0;
  static final int FAILED = 1;
  static final int NOT_DRAINED = 3;

  private static final String CLEAR_SCREEN = "\033[H\033[2J";

  private final AdminClient client;
  private final List<String> servers;
  private final boolean json;
  private final PrintStream out;
  private final PrintStream err;

  Commands(
      AdminClient client, List<String> servers, boolean json, PrintStream out, PrintStream err) {
    this.client = client;
    this.servers = servers;
    this.json = json;
    this.out = out;
    this.err = err;
  }

  int status() {
    List<Reply> replies = client.all(servers, s -> client.get(s, "status"));
    if (json) {
      printJson(replies);
    } else {
      statusTable(replies);
    }
    return reportFailures(replies);
  }

  /**
   * The status table every {@code intervalMillis}, {@code count} times (0: until interrupted); the
   * screen is cleared between refreshes when {@code clear}. Exits as the last refresh did.
   */
  int watch(long intervalMillis, int count, boolean clear) {
    int code = OK;
    for (int i = 0; count == 0 || i < count; i++) {
      if (i > 0) {
        try {
          Thread.sleep(intervalMillis);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return code;
        }
      }
      List<Reply> replies = client.all(servers, s -> client.get(s, "status"));
      if (json) {
        printJson(replies);
      } else {
        if (clear) {
          out.print(CLEAR_SCREEN);
        }
        out.println(
            "sluice-ctl watch: "
                + servers.size()
                + " server(s), every "
                + Table.duration(intervalMillis)
                + (count > 0 ? ", refresh " + (i + 1) + " of " + count : ", Ctrl-C stops")
                + ", at "
                + LocalTime.now().truncatedTo(ChronoUnit.SECONDS));
        statusTable(replies);
        out.println();
      }
      code = reportFailures(replies);
    }
    return code;
  }

  private void statusTable(List<Reply> replies) {
    Table table =
        new Table(
            "SERVER",
            "STATE",
            "VERSION",
            "UPTIME>",
            "MEMORY HELD/MAX>",
            "PUSHES",
            "APPS>",
            "SHUFFLES>",
            "OPEN SPLITS>",
            "STREAMS>",
            "CONNECTIONS>",
            "DIRECTORIES",
            "STORAGE");
    List<String> notes = new ArrayList<>();
    for (Reply r : replies) {
      if (!r.ok()) {
        table.row(r.server, "ERROR");
        continue;
      }
      Map<String, Object> b = r.body;
      Map<String, Object> memory = map(b.get("memory"));
      table.row(
          r.server,
          b.get("state"),
          b.get("version"),
          Table.duration(b.get("uptimeMillis")),
          Table.bytes(memory.get("heldBytes")) + " / " + Table.bytes(memory.get("maxBytes")),
          memory.get("state"),
          b.get("applications"),
          b.get("shuffles"),
          b.get("openSplits"),
          b.get("openStreams"),
          b.get("connections"),
          directories(r.server, list(b.get("directories")), notes),
          storage(r.server, map(b.get("storage")), notes));
    }
    table.print(out);
    for (String note : notes) {
      out.println(note);
    }
  }

  /**
   * The storage policy ("local", "memory,local,hdfs"; "-" from a server without tiers); notes
   * splits that could not go to the distributed tier.
   */
  private static String storage(String server, Map<String, Object> storage, List<String> notes) {
    Object failures = storage.get("hdfsTierFailures");
    if (failures instanceof Number && ((Number) failures).longValue() > 0) {
      notes.add(
          server
              + ": "
              + failures
              + " split(s) could not be moved to the distributed tier "
              + storage.get("hdfsDir")
              + " and stayed on local disk (see the server's log)");
    }
    Object policy = storage.get("policy");
    return policy == null ? "-" : policy.toString();
  }

  /** "2 HEALTHY", "1 HEALTHY, 1 FULL"; notes why a directory is not healthy. */
  private static String directories(String server, List<Object> dirs, List<String> notes) {
    Map<String, Integer> byHealth = new LinkedHashMap<>();
    for (Object o : dirs) {
      Map<String, Object> d = map(o);
      String health = String.valueOf(d.get("health"));
      byHealth.merge(health, 1, Integer::sum);
      if (!"HEALTHY".equals(health)) {
        Object reason = d.get("healthReason");
        notes.add(
            server
                + ": directory "
                + d.get("path")
                + " is "
                + health
                + (reason != null && !reason.toString().isEmpty() ? ": " + reason : "")
                + " (usage "
                + Table.percent(d.get("usage"))
                + ")");
      }
      if (d.get("checksumFailures") instanceof Number
          && ((Number) d.get("checksumFailures")).longValue() > 0) {
        notes.add(
            server
                + ": directory "
                + d.get("path")
                + ": readers reported "
                + d.get("checksumFailures")
                + " checksum failure(s)");
      }
    }
    if (byHealth.isEmpty()) {
      return "none";
    }
    StringBuilder s = new StringBuilder();
    for (Map.Entry<String, Integer> e : byHealth.entrySet()) {
      s.append(s.length() == 0 ? "" : ", ").append(e.getValue()).append(' ').append(e.getKey());
    }
    return s.toString();
  }

  int apps() {
    List<Reply> replies = client.all(servers, s -> client.get(s, "applications"));
    if (json) {
      printJson(replies);
      return reportFailures(replies);
    }
    Table table =
        new Table(
            "SERVER", "APPLICATION", "SHUFFLES>", "STORED>", "PUSHED>", "READ>", "LAST HEARTBEAT>");
    for (Reply r : replies) {
      if (!r.ok()) {
        continue;
      }
      List<Object> apps = list(r.body.get("applications"));
      if (apps.isEmpty()) {
        table.row(r.server, "(none)");
      }
      for (Object o : apps) {
        Map<String, Object> app = map(o);
        table.row(
            r.server,
            app.get("id"),
            app.get("shuffles"),
            Table.bytes(app.get("storedBytes")),
            Table.bytes(app.get("pushedBytes")),
            Table.bytes(app.get("readBytes")),
            Table.duration(app.get("lastHeartbeatMillisAgo")) + " ago");
      }
    }
    table.print(out);
    return reportFailures(replies);
  }

  int shuffles(String app) {
    String path = "applications/" + encode(app) + "/shuffles";
    List<Reply> replies = client.all(servers, s -> client.get(s, path));
    List<Reply> shown = new ArrayList<>();
    int holding = 0;
    for (Reply r : replies) {
      if (r.unknownApplication()) {
        Map<String, Object> none = new LinkedHashMap<>();
        none.put("application", app);
        none.put("shuffles", List.of());
        shown.add(AdminClient.answered(r.server, 404, none));
      } else {
        holding += r.ok() ? 1 : 0;
        shown.add(r);
      }
    }
    if (json) {
      printJson(shown);
    } else {
      Table table =
          new Table(
              "SERVER",
              "SHUFFLE>",
              "MAPS>",
              "PARTITIONS>",
              "COMMITTED",
              "OPEN SPLITS>",
              "COMMITTED SPLITS>",
              "MAP PARTITIONS>",
              "STORED>");
      for (Reply r : shown) {
        if (!r.ok()) {
          continue;
        }
        for (Object o : list(r.body.get("shuffles"))) {
          Map<String, Object> s = map(o);
          table.row(
              r.server,
              s.get("shuffleId"),
              s.get("maps"),
              s.get("partitions"),
              Boolean.TRUE.equals(s.get("committed")) ? "yes" : "no",
              s.get("openSplits"),
              s.get("committedSplits"),
              s.get("mapPartitions"),
              Table.bytes(s.get("storedBytes")));
        }
      }
      table.print(out);
    }
    int code = reportFailures(shown);
    if (code == OK && holding == 0) {
      err.println(noDataAnywhere(app));
      return FAILED;
    }
    return code;
  }

  int decommission(boolean cancel) {
    String path = cancel ? "cancel-decommission" : "decommission";
    List<Reply> replies = client.all(servers, s -> client.post(s, path));
    if (json) {
      printJson(replies);
    } else {
      Table table = new Table("SERVER", "STATE", "SHUFFLES>");
      for (Reply r : replies) {
        if (r.ok()) {
          table.row(r.server, r.body.get("state"), r.body.get("shuffles"));
        } else {
          table.row(r.server, "ERROR");
        }
      }
      table.print(out);
      if (!cancel) {
        out.println(
            "Decommissioned servers take no new shuffles and serve reads until the applications"
                + " holding data on them end;");
        out.println("'sluice-ctl drain-status' exits 0 once every one is DRAINED (safe to stop).");
      }
    }
    return reportFailures(replies);
  }

  int expire(String app) {
    String path = "applications/" + encode(app) + "/expire";
    List<Reply> replies = client.all(servers, s -> client.post(s, path));
    List<Reply> shown = new ArrayList<>();
    int expired = 0;
    for (Reply r : replies) {
      if (r.unknownApplication()) {
        Map<String, Object> none = new LinkedHashMap<>();
        none.put("application", app);
        none.put("expired", false);
        shown.add(AdminClient.answered(r.server, 404, none));
      } else {
        expired += r.ok() ? 1 : 0;
        shown.add(r);
      }
    }
    if (json) {
      printJson(shown);
    } else {
      Table table = new Table("SERVER", "APPLICATION", "RESULT");
      for (Reply r : shown) {
        if (r.ok()) {
          boolean done = Boolean.TRUE.equals(r.body.get("expired"));
          table.row(r.server, app, done ? "expired: its data is deleted" : "no data here");
        } else {
          table.row(r.server, app, "ERROR");
        }
      }
      table.print(out);
    }
    int code = reportFailures(shown);
    if (code == OK && expired == 0) {
      err.println(noDataAnywhere(app));
      return FAILED;
    }
    return code;
  }

  int drainStatus() {
    List<Reply> replies = client.all(servers, s -> client.get(s, "status"));
    int drained = 0;
    for (Reply r : replies) {
      drained += r.ok() && "DRAINED".equals(r.body.get("state")) ? 1 : 0;
    }
    if (json) {
      printJson(replies);
    } else {
      Table table =
          new Table(
              "SERVER", "STATE", "APPS>", "SHUFFLES>", "OPEN SPLITS>", "STREAMS>", "CONNECTIONS>");
      for (Reply r : replies) {
        if (r.ok()) {
          table.row(
              r.server,
              r.body.get("state"),
              r.body.get("applications"),
              r.body.get("shuffles"),
              r.body.get("openSplits"),
              r.body.get("openStreams"),
              r.body.get("connections"));
        } else {
          table.row(r.server, "ERROR");
        }
      }
      table.print(out);
      out.println(drained + " of " + replies.size() + " server(s) DRAINED");
    }
    int code = reportFailures(replies);
    if (code != OK) {
      return code;
    }
    return drained == replies.size() ? OK : NOT_DRAINED;
  }

  private String noDataAnywhere(String app) {
    return "sluice-ctl: application "
        + app
        + " has no data on any of the "
        + servers.size()
        + " server(s) asked";
  }

  /** Prints each failure on stderr, naming the server; FAILED when there was one. */
  private int reportFailures(List<Reply> replies) {
    int failed = 0;
    for (Reply r : replies) {
      if (!r.ok()) {
        failed++;
        err.println("sluice-ctl: " + r.server + ": " + r.error);
      }
    }
    err.flush();
    return failed == 0 ? OK : FAILED;
  }

  /**
   * One JSON array, an object per server: {@code {"server": ADMIN_ADDRESS, ...the answer...}} or
   * {@code {"server", "error", "httpStatus"}}. The status answer's own {@code server} (the shuffle
   * port's address) becomes {@code shuffleServer}.
   */
  private void printJson(List<Reply> replies) {
    List<Object> docs = new ArrayList<>();
    for (Reply r : replies) {
      Map<String, Object> doc = new LinkedHashMap<>();
      doc.put("server", r.server);
      if (r.ok()) {
        for (Map.Entry<String, Object> e : r.body.entrySet()) {
          doc.put(e.getKey().equals("server") ? "shuffleServer" : e.getKey(), e.getValue());
        }
      } else {
        doc.put("error", r.error);
        if (r.status > 0) {
          doc.put("httpStatus", r.status);
        }
      }
      docs.add(doc);
    }
    out.println(Json.write(docs));
    out.flush();
  }

  private static String encode(String app) {
    return URLEncoder.encode(app, StandardCharsets.UTF_8).replace("+", "%20");
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(Object o) {
    return o instanceof Map ? (Map<String, Object>) o : Map.of();
  }

  @SuppressWarnings("unchecked")
  private static List<Object> list(Object o) {
    return o instanceof List ? (List<Object>) o : List.of();
  }
}
