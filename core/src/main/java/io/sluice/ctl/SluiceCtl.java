package io.sluice.ctl;

import com.beust.jcommander.JCommander;
import com.beust.jcommander.MissingCommandException;
import com.beust.jcommander.ParameterException;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * {@code bin/sluice-ctl}: operates a fleet of Sluice servers through their admin REST API (status,
 * applications, shuffles, decommission and its cancel, expire, drain status, a live view). The
 * servers are named with {@code --servers} or found through YARN's ResourceManager.
 */
public final class SluiceCtl {
  static final int USAGE = 2;

  static final String HELP =
      String.join(
          "\n",
          "Usage: sluice-ctl COMMAND [APP] (--servers H:P[,H:P...] | --yarn RM:PORT) [OPTIONS]",
          "",
          "Operates Sluice shuffle servers through their admin REST API (/api/v1 on each server's",
          "sluice.metrics.port, 9291 by default). Servers are asked in parallel; results are shown",
          "in the order of --servers; a server that fails is named on stderr with the reason.",
          "",
          "Commands:",
          "  status               one row per server: state (SERVING, DECOMMISSIONING, DRAINED),",
          "                       version, uptime, memory, applications, shuffles, open splits,",
          "                       streams, connections, data directories",
          "  apps                 one row per server and application: shuffles, bytes stored,",
          "                       pushed and read, last heartbeat",
          "  shuffles APP         one row per server and shuffle of application APP",
          "  decommission         take the servers out of service: no new shuffles; they serve",
          "                       reads until the applications holding data on them end",
          "  cancel-decommission  put decommissioned servers back in service (SERVING)",
          "  expire APP           delete application APP's data on the servers now",
          "  drain-status         whether every server is DRAINED (decommissioned, no data left):",
          "                       safe to stop",
          "  watch                the status table again every --interval seconds, until Ctrl-C",
          "                       or --count refreshes",
          "",
          "Servers (one of the two):",
          "  --servers H:P,...    the servers' admin addresses (sluice.metrics.port); a shuffle",
          "                       address (sluice.server.port) works too: its server names its",
          "                       admin port, which is then asked (and shown) instead",
          "  --yarn RM:PORT       the RUNNING NodeManagers the ResourceManager's REST API lists",
          "                       (/ws/v1/cluster/nodes), each at --admin-port; http[s]://RM:PORT",
          "                       works too, and a comma-separated list for HA ResourceManagers",
          "  --admin-port N       with --yarn: the servers' admin port (default 9291)",
          "",
          "Options (before or after the command):",
          "  --https              talk HTTPS: servers with sluice.tls.enabled",
          "  --trust-store FILE   PKCS12 or JKS store of the certificates or CAs to trust over",
          "                       HTTPS (default: the JVM's CAs); its password with",
          "                       --trust-store-password or env SLUICE_TRUST_STORE_PASSWORD",
          "  --token TOKEN        the servers' sluice.admin.token, sent as 'Authorization: Bearer'",
          "                       with the actions (decommission, cancel-decommission, expire);",
          "                       or --token-file FILE, or env SLUICE_ADMIN_TOKEN",
          "  --timeout SECONDS    to wait for each answer (default 10)",
          "  --parallelism N      servers asked at the same time (default 32)",
          "  --json               one JSON document on stdout (watch: one per refresh, a line",
          "                       each): an array with an object per server, {\"server\": \"h:p\",",
          "                       ...the API's answer...} or {\"server\": \"h:p\", \"error\": \"...\"}",
          "  -h, --help           this help",
          "  watch only: --interval SECONDS (default 2), --count N (default: until interrupted)",
          "",
          "Exit codes:",
          "  0  every server answered (drain-status: and every one is DRAINED)",
          "  1  at least one server failed or refused (unreachable, no answer in time, 401 without",
          "     the right --token, 403 ...), the ResourceManager could not be asked or lists no",
          "     RUNNING node, or (shuffles, expire) no server holds APP",
          "  2  usage error: unknown command, bad option value (e.g. --servers 'host' without a",
          "     port), missing APP",
          "  3  drain-status: every server answered but at least one is not DRAINED yet, so a",
          "     script can wait for a drain with",
          "       until sluice-ctl drain-status --servers ...; do sleep 10; done",
          "     (it loops on 1 too: a server that does not answer is not known to be drained)",
          "");

  private SluiceCtl() {}

  public static void main(String[] args) {
    int code = run(args, System.out, System.err, System.getenv(), System.console() != null);
    System.exit(code);
  }

  /** Runs one command line; returns the exit code. */
  public static int run(String[] args, PrintStream out, PrintStream err) {
    return run(args, out, err, System.getenv(), false);
  }

  /**
   * @param env the environment (SLUICE_ADMIN_TOKEN, SLUICE_TRUST_STORE_PASSWORD)
   * @param terminal whether stdout is a terminal: watch then clears the screen between refreshes
   */
  static int run(
      String[] args, PrintStream out, PrintStream err, Map<String, String> env, boolean terminal) {
    CtlOptions.Common global = new CtlOptions.Common();
    Map<String, CtlOptions.Command> commands = new LinkedHashMap<>();
    commands.put("status", new CtlOptions.Command());
    commands.put("apps", new CtlOptions.Command());
    commands.put("shuffles", new CtlOptions.AppCommand());
    commands.put("decommission", new CtlOptions.Command());
    commands.put("cancel-decommission", new CtlOptions.Command());
    commands.put("expire", new CtlOptions.AppCommand());
    commands.put("drain-status", new CtlOptions.Command());
    commands.put("watch", new CtlOptions.Watch());
    JCommander.Builder builder =
        JCommander.newBuilder().programName("sluice-ctl").addObject(global);
    for (Map.Entry<String, CtlOptions.Command> c : commands.entrySet()) {
      builder.addCommand(c.getKey(), c.getValue());
    }
    JCommander commander = builder.build();
    try {
      commander.parse(args);
    } catch (MissingCommandException e) {
      return usage(
          err,
          "unknown command '"
              + e.getUnknownCommand()
              + "'; the commands are "
              + String.join(", ", commands.keySet()));
    } catch (ParameterException e) {
      return usage(err, e.getMessage());
    }
    String name = commander.getParsedCommand();
    CtlOptions.Common options = global;
    if (name != null) {
      options.override(commands.get(name).common);
    }
    if (options.help) {
      out.print(HELP);
      out.flush();
      return 0;
    }
    if (name == null) {
      err.print(HELP);
      return usage(err, "no command given");
    }
    try {
      return execute(name, commands.get(name), options, out, err, env, terminal);
    } catch (BadUsage e) {
      return usage(err, e.getMessage());
    }
  }

  /** A usage error found after parsing. */
  private static final class BadUsage extends Exception {
    private static final long serialVersionUID = 1L;

    BadUsage(String message) {
      super(message);
    }
  }

  private static int execute(
      String name,
      CtlOptions.Command command,
      CtlOptions.Common options,
      PrintStream out,
      PrintStream err,
      Map<String, String> env,
      boolean terminal)
      throws BadUsage {
    String app = null;
    if (command instanceof CtlOptions.AppCommand) {
      List<String> given = ((CtlOptions.AppCommand) command).app;
      if (given.isEmpty()) {
        throw new BadUsage(name + " needs the application id: sluice-ctl " + name + " APP");
      }
      if (given.size() > 1) {
        throw new BadUsage(name + " takes one application id, got " + given);
      }
      app = given.get(0);
    }
    long intervalMillis = 2000;
    int count = 0;
    if (command instanceof CtlOptions.Watch) {
      CtlOptions.Watch watch = (CtlOptions.Watch) command;
      if (watch.interval != null) {
        if (!(watch.interval > 0) || watch.interval > 86400) {
          throw new BadUsage("--interval must be seconds in (0, 86400], got " + watch.interval);
        }
        intervalMillis = Math.max(1, Math.round(watch.interval * 1000));
      }
      if (watch.count != null) {
        if (watch.count < 1) {
          throw new BadUsage("--count must be at least 1, got " + watch.count);
        }
        count = watch.count;
      }
    }
    int timeoutSeconds = positive("--timeout", options.timeout, 10);
    int parallelism = positive("--parallelism", options.parallelism, 32);
    if (options.servers != null && options.yarn != null) {
      throw new BadUsage("give either --servers or --yarn, not both");
    }
    if (options.servers == null && options.yarn == null) {
      throw new BadUsage(
          "name the servers: --servers host:port[,host:port...] (their admin port,"
              + " sluice.metrics.port) or --yarn RM_HOST:RM_HTTP_PORT");
    }
    if (options.adminPort != null && options.yarn == null) {
      throw new BadUsage("--admin-port goes with --yarn; --servers names each port itself");
    }
    int adminPort = options.adminPort == null ? 9291 : options.adminPort;
    if (adminPort < 1 || adminPort > 65535) {
      throw new BadUsage("--admin-port must be in 1..65535, got " + adminPort);
    }
    List<String> servers = null;
    List<String> resourceManagers = null;
    try {
      if (options.servers != null) {
        servers = ServerList.parse("--servers", options.servers);
      } else {
        resourceManagers = ServerList.resourceManagers(options.yarn);
      }
    } catch (ServerList.BadValue e) {
      throw new BadUsage(e.getMessage());
    }
    String token = token(options, env);
    SSLContext ssl = sslContext(options, env);
    Duration timeout = Duration.ofSeconds(timeoutSeconds);
    try (AdminClient client =
        new AdminClient(
            options.https(),
            token,
            timeout,
            ssl,
            parallelism,
            note -> err.println("sluice-ctl: " + note))) {
      if (servers == null) {
        HttpClient.Builder yarnHttp =
            HttpClient.newBuilder()
                .connectTimeout(timeout)
                .followRedirects(HttpClient.Redirect.NORMAL);
        if (ssl != null) {
          yarnHttp.sslContext(ssl);
        }
        try {
          servers = ServerList.fromYarn(resourceManagers, adminPort, yarnHttp.build(), timeout);
        } catch (ServerList.DiscoveryFailed e) {
          err.println("sluice-ctl: --yarn: " + e.getMessage());
          return Commands.FAILED;
        }
        if (servers.isEmpty()) {
          err.println(
              "sluice-ctl: --yarn: the ResourceManager "
                  + resourceManagers
                  + " lists no RUNNING NodeManager");
          return Commands.FAILED;
        }
      }
      Commands run = new Commands(client, servers, options.json(), out, err);
      switch (name) {
        case "status":
          return run.status();
        case "apps":
          return run.apps();
        case "shuffles":
          return run.shuffles(app);
        case "decommission":
          return run.decommission(false);
        case "cancel-decommission":
          return run.decommission(true);
        case "expire":
          return run.expire(app);
        case "drain-status":
          return run.drainStatus();
        case "watch":
          return run.watch(intervalMillis, count, terminal && !options.json());
        default:
          throw new BadUsage("unknown command '" + name + "'");
      }
    }
  }

  private static int positive(String option, Integer value, int otherwise) throws BadUsage {
    if (value == null) {
      return otherwise;
    }
    if (value < 1) {
      throw new BadUsage(option + " must be at least 1, got " + value);
    }
    return value;
  }

  /** --token, --token-file or env SLUICE_ADMIN_TOKEN; null for none. */
  private static String token(CtlOptions.Common options, Map<String, String> env) throws BadUsage {
    if (options.token != null && options.tokenFile != null) {
      throw new BadUsage("give either --token or --token-file, not both");
    }
    String token = options.token;
    if (options.tokenFile != null) {
      try {
        token = Files.readString(Paths.get(options.tokenFile)).strip();
      } catch (IOException e) {
        throw new BadUsage("cannot read --token-file " + options.tokenFile + ": " + e);
      }
      if (token.isEmpty()) {
        throw new BadUsage("--token-file " + options.tokenFile + " is empty");
      }
    }
    if (token == null) {
      token = env.get("SLUICE_ADMIN_TOKEN");
    }
    if (token != null) {
      token = token.strip();
      if (token.isEmpty()) {
        return null;
      }
      if (token.chars().anyMatch(c -> c < 0x21 || c > 0x7e)) {
        throw new BadUsage("the token has spaces or control characters; it cannot be sent");
      }
    }
    return token;
  }

  /** The trust of --trust-store, or null for the JVM's default. */
  private static SSLContext sslContext(CtlOptions.Common options, Map<String, String> env)
      throws BadUsage {
    if (options.trustStore == null) {
      if (options.trustStorePassword != null) {
        throw new BadUsage("--trust-store-password needs --trust-store");
      }
      return null;
    }
    if (!options.https() && options.yarn == null) {
      throw new BadUsage("--trust-store is for HTTPS: add --https");
    }
    String password =
        options.trustStorePassword != null
            ? options.trustStorePassword
            : env.getOrDefault("SLUICE_TRUST_STORE_PASSWORD", "");
    Path file = Paths.get(options.trustStore);
    try (InputStream in = Files.newInputStream(file)) {
      KeyStore store = KeyStore.getInstance("PKCS12"); // reads JKS files too
      store.load(in, password.toCharArray());
      if (store.size() == 0) {
        throw new BadUsage("--trust-store " + file + " holds no certificate");
      }
      TrustManagerFactory tmf =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(store);
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(null, tmf.getTrustManagers(), null);
      return context;
    } catch (IOException | GeneralSecurityException e) {
      throw new BadUsage(
          "cannot use --trust-store "
              + file
              + " (wrong --trust-store-password, or not PKCS12 or JKS?): "
              + e.getMessage());
    }
  }

  private static int usage(PrintStream err, String message) {
    err.println("sluice-ctl: " + message);
    err.println("Run 'sluice-ctl --help' for the commands and options.");
    err.flush();
    return USAGE;
  }
}
