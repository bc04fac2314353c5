package io.sluice.daemon;

import com.beust.jcommander.JCommander;
import com.beust.jcommander.ParameterException;
import com.codahale.metrics.MetricRegistry;
import com.codahale.metrics.jmx.JmxReporter;
import io.sluice.common.Clock;
import io.sluice.common.SluiceConf;
import io.sluice.common.UnknownKeys;
import io.sluice.network.NetworkConf;
import io.sluice.server.ServerConf;
import io.sluice.server.ShuffleServer;
import io.sluice.server.admin.AdminApi;
import io.sluice.server.admin.AdminConf;
import io.sluice.server.admin.AdminHttpServer;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The standalone daemon: {@code bin/shuffle-daemon run} runs this in the foreground; {@code start}
 * runs it in the background. Configuration: {@code $SLUICE_HOME/conf/sluice-defaults.conf}, then
 * {@code $SLUICE_HOME/conf/sluice.conf}, then each {@code --conf FILE}, then the command-line
 * options. SIGTERM stops it cleanly.
 */
public final class ShuffleDaemon {
  private static final Logger LOG = LoggerFactory.getLogger(ShuffleDaemon.class);

  /** The system property naming the file {@code shuffle-daemon stop --drain} writes. */
  static final String DRAIN_REQUEST = "sluice.drainRequestFile";

  private ShuffleDaemon() {}

  public static void main(String[] args) {
    int code = run(args, System.out, System.err);
    if (code != 0) {
      System.exit(code);
    }
  }

  /** Parses, starts the server and blocks until the JVM is asked to stop; returns an exit code. */
  static int run(String[] args, PrintStream out, PrintStream err) {
    DaemonOptions options = new DaemonOptions();
    JCommander commander =
        JCommander.newBuilder().programName("shuffle-daemon run").addObject(options).build();
    try {
      commander.parse(args);
    } catch (ParameterException e) {
      err.println("shuffle-daemon: " + e.getMessage());
      err.println("Run 'shuffle-daemon run --help' for the options.");
      return 2;
    }
    if (options.help) {
      StringBuilder usage = new StringBuilder();
      commander.getUsageFormatter().usage(usage);
      out.println(usage);
      return 0;
    }
    SluiceConf conf;
    ServerConf serverConf;
    NetworkConf networkConf;
    AdminConf adminConf;
    try {
      conf = loadConf(options);
      // before the settings are checked: a misspelled key may be why one of them is wrong
      for (String warning : UnknownKeys.core().warnings(conf)) {
        err.println("shuffle-daemon: warning: " + warning);
      }
      serverConf = new ServerConf(conf);
      networkConf = new NetworkConf(conf);
      adminConf = new AdminConf(conf);
    } catch (IllegalArgumentException | IOException e) {
      err.println("shuffle-daemon: configuration error: " + e.getMessage());
      return 2;
    }
    for (String warning :
        TempDirectoryCheck.warnings(serverConf, TempDirectoryCheck.systemTempRoots())) {
      LOG.warn(warning);
    }
    MetricRegistry metrics = new MetricRegistry();
    ShuffleServer server;
    try {
      server = new ShuffleServer(serverConf, networkConf, metrics, Clock.SYSTEM);
    } catch (IOException e) {
      err.println("shuffle-daemon: cannot start: " + e.getMessage());
      return 1;
    }
    JmxReporter jmx = JmxReporter.forRegistry(metrics).inDomain("sluice").build();
    jmx.start();
    AdminHttpServer http =
        startAdminHttp(metrics, new AdminApi(server, adminConf), serverConf, networkConf, err);
    if (http != null) {
      server.setAdminPort(http.port()); // named to HTTP requests sent to the shuffle port
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  server.drainThenClose(
                      Math.max(adminConf.drainTimeoutMillis(), drainRequestMillis(err)));
                  jmx.stop();
                  if (http != null) {
                    http.close();
                  }
                  stopped.countDown();
                },
                "sluice-shutdown"));
    out.println(
        "Sluice shuffle server serving on port "
            + server.port()
            + (http == null ? "" : "; metrics and admin API on port " + http.port()));
    out.flush();
    if (options.portFile != null) {
      try {
        Files.writeString(Paths.get(options.portFile), Integer.toString(server.port()));
      } catch (IOException e) {
        err.println("shuffle-daemon: cannot write port file " + options.portFile + ": " + e);
      }
    }
    try {
      stopped.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return 0;
  }

  /**
   * How long {@code shuffle-daemon stop --drain} asked the stop to drain: the file named by the
   * system property {@value #DRAIN_REQUEST} holds seconds; 0 when there is none. The script writes
   * it just before SIGTERM, and it is deleted here.
   */
  static long drainRequestMillis(PrintStream err) {
    String file = System.getProperty(DRAIN_REQUEST);
    if (file == null) {
      return 0;
    }
    Path path = Paths.get(file);
    try {
      if (!Files.exists(path)) {
        return 0;
      }
      String text = Files.readString(path).trim();
      Files.deleteIfExists(path);
      return Math.max(0, Long.parseLong(text)) * 1000;
    } catch (IOException | NumberFormatException e) {
      err.println("shuffle-daemon: ignoring the drain request in " + path + ": " + e);
      return 0;
    }
  }

  /**
   * The metrics and admin port; a port that cannot be bound costs the metrics and the API, not the
   * server.
   */
  private static AdminHttpServer startAdminHttp(
      MetricRegistry metrics,
      AdminApi api,
      ServerConf conf,
      NetworkConf networkConf,
      PrintStream err) {
    if (conf.metricsPort() < 0) {
      return null;
    }
    try {
      return new AdminHttpServer(
          metrics, api, conf.metricsHost(), conf.metricsPort(), networkConf.tls());
    } catch (IOException | IllegalArgumentException e) {
      err.println(
          "shuffle-daemon: warning: cannot serve metrics on port "
              + conf.metricsPort()
              + " (sluice.metrics.port): "
              + e.getMessage());
      return null;
    }
  }

  static SluiceConf loadConf(DaemonOptions options) throws IOException {
    return loadConf(options, System.getProperty("sluice.home", System.getenv("SLUICE_HOME")));
  }

  /**
   * Layers, lowest first: {@code home/conf/sluice-defaults.conf} and then the site's {@code
   * home/conf/sluice.conf} (each when {@code home} is not null and the file exists), each {@code
   * --conf FILE} in order, {@code --set key=value}, then the named options ({@code --port}, {@code
   * --host}, {@code --dirs}, {@code --memory}).
   */
  static SluiceConf loadConf(DaemonOptions options, String home) throws IOException {
    SluiceConf conf = SluiceConf.empty();
    if (home != null) {
      for (String name : new String[] {"sluice-defaults.conf", "sluice.conf"}) {
        Path file = Paths.get(home, "conf", name);
        if (Files.exists(file)) {
          conf = conf.with(SluiceConf.load(file).asMap());
        }
      }
    }
    for (String confFile : options.confFiles) {
      Path file = Paths.get(confFile);
      if (!Files.isReadable(file)) {
        throw new IOException("--conf file " + file + " does not exist or is not readable");
      }
      conf = conf.with(SluiceConf.load(file).asMap());
    }
    Map<String, String> overrides = new LinkedHashMap<>();
    for (String setting : options.settings) {
      int eq = setting.indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException("--set expects key=value, got '" + setting + "'");
      }
      overrides.put(setting.substring(0, eq).trim(), setting.substring(eq + 1).trim());
    }
    if (options.port != null) {
      overrides.put(ServerConf.PORT.name(), options.port.toString());
    }
    if (options.host != null) {
      overrides.put(ServerConf.HOST.name(), options.host);
    }
    if (options.dirs != null) {
      overrides.put(ServerConf.DIRS.name(), options.dirs);
    }
    if (options.memory != null) {
      overrides.put(ServerConf.MEMORY_MAX.name(), options.memory);
    }
    return conf.with(overrides);
  }
}
