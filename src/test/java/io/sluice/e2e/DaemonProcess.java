package io.sluice.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One daemon run through the real {@code bin/shuffle-daemon} script, from this JVM's classpath,
 * with its data, log and pid file under a test's directory: {@code start} (which waits until it
 * serves), {@code stop} (SIGTERM, waiting until it exits) and {@link #kill()} (SIGKILL).
 */
final class DaemonProcess {
  private static final long WAIT_SECONDS = 90;

  private final Path script;
  private final Path dataDir;
  private final Path logDir;
  private final Path portFile;
  private Map<String, String> env = Map.of();

  DaemonProcess(Path root) throws IOException {
    String home = System.getProperty("sluice.home");
    assertThat(home).as("the build passes -Dsluice.home=<repo root>").isNotNull();
    this.script = Paths.get(home, "bin", "shuffle-daemon");
    this.dataDir = Files.createDirectories(root.resolve("data"));
    this.logDir = root.resolve("logs");
    this.portFile = root.resolve("port");
  }

  Path dataDir() {
    return dataDir;
  }

  /** Starts the daemon on {@code port} (0: any) and returns the port it serves on. */
  int start(int port) throws Exception {
    return launch(port, Map.of(), Map.of());
  }

  /**
   * Starts a daemon that halts, as {@code kill -9} would, the first time it reaches {@code
   * crashPoint} ({@code io.sluice.common.CrashPoints}).
   */
  int startCrashingAt(int port, String crashPoint) throws Exception {
    return launch(
        port, Map.of("SLUICE_JAVA_OPTS", "-Dsluice.test.crashAt=" + crashPoint), Map.of());
  }

  /**
   * Starts the daemon on {@code port} with {@code settings} (each passed as {@code --set
   * key=value}, after the suites' own, so they win) and returns the port it serves on.
   */
  int start(int port, Map<String, String> settings) throws Exception {
    return launch(port, Map.of(), settings);
  }

  /** Waits until a daemon that crashes by itself is gone, and clears its pid file. */
  void awaitCrash() throws Exception {
    Optional<ProcessHandle> daemon = process();
    if (daemon.isPresent()) {
      daemon.get().onExit().get(WAIT_SECONDS, TimeUnit.SECONDS);
    }
    Files.deleteIfExists(logDir.resolve("shuffle-daemon.pid"));
  }

  private int launch(int port, Map<String, String> env, Map<String, String> settings)
      throws Exception {
    this.env = env;
    Files.deleteIfExists(portFile);
    List<String> args =
        new ArrayList<>(
            List.of(
                "start",
                "--port",
                Integer.toString(port),
                "--host",
                "127.0.0.1",
                "--dirs",
                dataDir.toString(),
                "--memory",
                "64m",
                "--port-file",
                portFile.toString(),
                "--set",
                "sluice.metrics.port=-1",
                "--set",
                "sluice.commit.fsync=false",
                "--set",
                "sluice.flush.size=16k",
                "--set",
                "sluice.network.ioThreads=2"));
    for (Map.Entry<String, String> e : settings.entrySet()) {
      args.add("--set");
      args.add(e.getKey() + "=" + e.getValue());
    }
    String output = run(args.toArray(new String[0]));
    assertThat(output).as("start: %s\n%s", output, log()).contains("started");
    assertThat(portFile).as("port file; log:\n%s", log()).exists();
    return Integer.parseInt(Files.readString(portFile).trim());
  }

  /** SIGTERM through the script; returns once the process has exited. */
  void stop() throws Exception {
    String output = run("stop");
    assertThat(output).as("stop: %s\n%s", output, log()).contains("stopped");
  }

  /** kill -9: the process dies at once, without its shutdown hook. */
  void kill() throws Exception {
    ProcessHandle daemon = process().orElseThrow(() -> new AssertionError("no daemon running"));
    daemon.destroyForcibly();
    daemon.onExit().get(WAIT_SECONDS, TimeUnit.SECONDS);
    Files.deleteIfExists(logDir.resolve("shuffle-daemon.pid"));
  }

  /** The daemon's process id, from its pid file. */
  long pid() throws IOException {
    return process().orElseThrow(() -> new AssertionError("no daemon running")).pid();
  }

  /** Whether the daemon's process is alive (a zombie is dead: see {@link DaemonCluster#isGone}). */
  boolean isAlive() throws IOException {
    Optional<ProcessHandle> p = process();
    return p.isPresent() && !DaemonCluster.isGone(p.get().pid());
  }

  /** Kills a daemon a failed test left running. */
  void killIfRunning() throws IOException {
    process().ifPresent(ProcessHandle::destroyForcibly);
  }

  private Optional<ProcessHandle> process() throws IOException {
    Path pidFile = logDir.resolve("shuffle-daemon.pid");
    if (!Files.exists(pidFile)) {
      return Optional.empty();
    }
    return ProcessHandle.of(Long.parseLong(Files.readString(pidFile).trim()));
  }

  /** The daemon's log so far (every run appends to it). */
  String log() throws IOException {
    Path log = logDir.resolve("shuffle-daemon.log");
    return Files.exists(log) ? Files.readString(log) : "(no " + log + ")";
  }

  /** Every number the log printed for {@code pattern}'s group 1, in order. */
  List<Long> logged(Pattern pattern) throws IOException {
    List<Long> values = new ArrayList<>();
    Matcher m = pattern.matcher(log());
    while (m.find()) {
      values.add(Long.parseLong(m.group(1)));
    }
    return values;
  }

  private String run(String... args) throws Exception {
    return DaemonScript.run(script, logDir, logDir.getParent(), WAIT_SECONDS, env, args).output;
  }

  private static String read(Path file) throws IOException {
    return Files.readString(file, StandardCharsets.UTF_8);
  }
}
