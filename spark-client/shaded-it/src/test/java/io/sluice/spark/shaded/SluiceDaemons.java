package io.sluice.spark.shaded;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Real Sluice servers for the shaded-jar suites: daemons started by {@code bin/shuffle-daemon} from
 * the build's {@code core/target}, each with its own data, log and port file under {@code root}, on
 * loopback ports they pick.
 */
final class SluiceDaemons implements AutoCloseable {
  private static final long WAIT_SECONDS = 90;

  private final Path script;
  private final List<Path> dirs = new ArrayList<>();
  private final List<Integer> ports = new ArrayList<>();

  private SluiceDaemons(Path script) {
    this.script = script;
  }

  /** Starts {@code count} daemons and returns once each serves. */
  static SluiceDaemons start(Path root, int count) throws Exception {
    String home = System.getProperty("sluice.home");
    if (home == null) {
      throw new IllegalStateException("the build passes -Dsluice.home=<repository root>");
    }
    SluiceDaemons daemons = new SluiceDaemons(Paths.get(home, "bin", "shuffle-daemon"));
    try {
      for (int i = 0; i < count; i++) {
        daemons.startOne(Files.createDirectories(root.resolve("daemon-" + i)));
      }
    } catch (Exception | AssertionError e) {
      daemons.close();
      throw e;
    }
    return daemons;
  }

  private void startOne(Path dir) throws Exception {
    dirs.add(dir);
    Path portFile = dir.resolve("port");
    String output =
        run(
            dir,
            "start",
            "--port",
            "0",
            "--host",
            "127.0.0.1",
            "--dirs",
            Files.createDirectories(dir.resolve("data")).toString(),
            "--memory",
            "64m",
            "--port-file",
            portFile.toString(),
            "--set",
            "sluice.metrics.port=-1",
            "--set",
            "sluice.commit.fsync=false");
    if (!output.contains("started") || !Files.exists(portFile)) {
      throw new AssertionError("the daemon in " + dir + " did not start: " + output + log(dir));
    }
    ports.add(Integer.parseInt(Files.readString(portFile).trim()));
  }

  /** {@code spark.sluice.servers} for these daemons. */
  String servers() {
    List<String> list = new ArrayList<>();
    for (int port : ports) {
      list.add("127.0.0.1:" + port);
    }
    return String.join(",", list);
  }

  @Override
  public void close() throws Exception {
    for (Path dir : dirs) {
      if (Files.exists(dir.resolve("logs").resolve("shuffle-daemon.pid"))) {
        run(dir, "stop");
      }
    }
  }

  private static String log(Path dir) throws IOException {
    Path log = dir.resolve("logs").resolve("shuffle-daemon.log");
    return Files.exists(log) ? "\n" + Files.readString(log) : "";
  }

  private String run(Path dir, String... args) throws Exception {
    Path output = dir.resolve("script-output.txt");
    List<String> command = new ArrayList<>(List.of(script.toString()));
    command.addAll(List.of(args));
    ProcessBuilder builder =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(output.toFile())
            .redirectInput(ProcessBuilder.Redirect.from(Paths.get("/dev/null").toFile()));
    Map<String, String> env = builder.environment();
    env.remove("SLUICE_PID_DIR");
    env.remove("SLUICE_CLASSPATH");
    env.put("SLUICE_LOG_DIR", dir.resolve("logs").toString());
    env.put("SLUICE_HEAP", "256m");
    env.put("SLUICE_STOP_TIMEOUT", Long.toString(WAIT_SECONDS));
    env.put("SLUICE_START_WAIT", Long.toString(WAIT_SECONDS));
    env.put("JAVA_HOME", System.getProperty("java.home"));
    Process process = builder.start();
    if (!process.waitFor(WAIT_SECONDS + 30, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      throw new AssertionError("'shuffle-daemon " + String.join(" ", args) + "' did not finish");
    }
    return Files.readString(output, StandardCharsets.UTF_8);
  }
}
