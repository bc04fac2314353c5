package io.sluice.e2e;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs {@code bin/shuffle-daemon} as an operator would, on the test JVM's class path (no build),
 * with a bounded wait; shared by the daemon suites.
 */
final class DaemonScript {
  /** Exit code and the script's stdout and stderr together. */
  static final class Result {
    final int code;
    final String output;

    Result(int code, String output) {
      this.code = code;
      this.output = output;
    }
  }

  private DaemonScript() {}

  /**
   * Runs the script with {@code args}; logs and the pid file go to {@code logDir}, the captured
   * output to a file in {@code scratch}; start and stop waits are {@code waitSeconds}.
   */
  static Result run(Path script, Path logDir, Path scratch, long waitSeconds, String... args)
      throws IOException, InterruptedException {
    return run(script, logDir, scratch, waitSeconds, Map.of(), args);
  }

  /** Like {@link #run(Path, Path, Path, long, String...)} with {@code extraEnv} set. */
  static Result run(
      Path script,
      Path logDir,
      Path scratch,
      long waitSeconds,
      Map<String, String> extraEnv,
      String... args)
      throws IOException, InterruptedException {
    List<String> command = new ArrayList<>();
    command.add(script.toString());
    command.addAll(Arrays.asList(args));
    Path output = Files.createTempFile(scratch, "script", ".txt");
    ProcessBuilder builder =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(output.toFile())
            .redirectInput(ProcessBuilder.Redirect.from(Paths.get("/dev/null").toFile()));
    Map<String, String> env = builder.environment();
    env.remove("SLUICE_PID_DIR");
    env.put("SLUICE_LOG_DIR", logDir.toString());
    env.put("SLUICE_CLASSPATH", System.getProperty("java.class.path"));
    env.put("SLUICE_HEAP", "256m");
    env.put("SLUICE_STOP_TIMEOUT", Long.toString(waitSeconds));
    env.put("SLUICE_START_WAIT", Long.toString(waitSeconds));
    env.put("JAVA_HOME", System.getProperty("java.home"));
    env.putAll(extraEnv);
    Process process = builder.start();
    if (!process.waitFor(waitSeconds + 30, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      throw new AssertionError(
          "'shuffle-daemon "
              + String.join(" ", args)
              + "' did not finish; output:\n"
              + Files.readString(output, StandardCharsets.UTF_8));
    }
    return new Result(process.exitValue(), Files.readString(output, StandardCharsets.UTF_8));
  }
}
