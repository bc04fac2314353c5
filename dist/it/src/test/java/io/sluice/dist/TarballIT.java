package io.sluice.dist;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The release tarball as an operator uses it: unpacked into an empty directory, the daemon started
 * by its own {@code bin/shuffle-daemon} with a Java runtime and a PATH of basic tools only (no
 * Maven, no source tree, no {@code SLUICE_CLASSPATH}), configured through its {@code
 * conf/sluice.conf} and {@code conf/sluice-env.sh}; {@code status} asks its admin API; a Spark 3.5
 * job with only the tarball's client jar shuffles through it.
 */
class TarballIT {
  private static final long WAIT_SECONDS = 90;
  private static final Pattern ADMIN_PORT = Pattern.compile("metrics and admin API on port (\\d+)");
  private static final Pattern PUSHED =
      Pattern.compile("(?m)^sluice_pushed_bytes_total\\{[^}]*\\} ([0-9.eE+]+)$");

  /** What the scripts may use besides Java: a PATH of links to these, and nothing else. */
  private static final List<String> TOOLS =
      List.of(
          "bash", "env", "dirname", "mkdir", "rm", "mv", "nohup", "grep", "sed", "head", "tail",
          "tr", "sleep", "cat", "ps");

  @TempDir static Path root;
  private static String version;
  private static Path home;
  private static Path tools;

  private final List<Path> logDirs = new ArrayList<>();

  @BeforeAll
  static void unpack() throws Exception {
    version = System.getProperty("sluice.version");
    Path tarball = Paths.get(System.getProperty("sluice.tarball"));
    assertThat(tarball).as("the dist module's package phase writes it").isRegularFile();
    Path install = Files.createDirectories(root.resolve("install"));
    Process tar =
        new ProcessBuilder("tar", "-xzf", tarball.toString(), "-C", install.toString())
            .redirectErrorStream(true)
            .start();
    assertThat(tar.waitFor(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
    assertThat(tar.exitValue()).as(new String(tar.getInputStream().readAllBytes())).isZero();
    home = install.resolve("sluice-" + version);
    try (Stream<Path> top = Files.list(install)) {
      assertThat(top.collect(Collectors.toList())).containsExactly(home);
    }
    tools = toolsWithoutMaven(Files.createDirectories(root.resolve("tools")));

    // the site's settings, where an operator puts them
    Files.writeString(
        home.resolve("conf/sluice.conf"),
        "\nsluice.server.host = 127.0.0.1\nsluice.server.port = 0\nsluice.metrics.host = 127.0.0.1"
            + "\nsluice.metrics.port = 0\nsluice.memory.max = 128m\nsluice.commit.fsync = false"
            + "\nsluice.server.dirs = "
            + Files.createDirectories(root.resolve("data"))
            + "\n",
        java.nio.file.StandardOpenOption.APPEND);
    Files.writeString(
        home.resolve("conf/sluice-env.sh"),
        "\nexport SLUICE_HEAP=256m\n",
        java.nio.file.StandardOpenOption.APPEND);
  }

  @AfterEach
  void killLeftovers() throws IOException {
    // a failed assertion must not leave a daemon behind
    for (Path logDir : logDirs) {
      Path pidFile = logDir.resolve("shuffle-daemon.pid");
      if (Files.exists(pidFile)) {
        long pid = Long.parseLong(Files.readString(pidFile).trim());
        ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
      }
    }
  }

  @Test
  void theTarballHoldsWhatAnOperatorInstalls() throws IOException {
    for (String script : List.of("bin/shuffle-daemon", "bin/sluice-ctl")) {
      assertThat(home.resolve(script)).isRegularFile().isExecutable();
    }
    for (String conf :
        List.of(
            "sluice-defaults.conf",
            "sluice.conf",
            "sluice-env.sh",
            "log4j2.properties",
            "yarn-site.xml.example",
            "grafana/sluice-dashboard.json",
            "prometheus/prometheus.yml.example")) {
      assertThat(home.resolve("conf").resolve(conf)).isRegularFile();
    }
    assertThat(names(home.resolve("jars")))
        .containsExactlyInAnyOrder(
            "sluice-spark-client-" + version + "-spark3.3_2.12-shaded.jar",
            "sluice-spark-client-" + version + "-spark3.4_2.12-shaded.jar",
            "sluice-spark-client-" + version + "-spark3.4_2.13-shaded.jar",
            "sluice-spark-client-" + version + "-spark3.5_2.12-shaded.jar",
            "sluice-spark-client-" + version + "-spark3.5_2.13-shaded.jar",
            "sluice-spark-client-" + version + "-spark4.0_2.13-shaded.jar",
            "sluice-spark-client-" + version + "-spark4.2_2.13-shaded.jar",
            "sluice-flink-client-" + version + "-shaded.jar",
            "sluice-flink-client-" + version + "-flink2.3-shaded.jar",
            "sluice-aux-service-" + version + "-shaded.jar");
    assertThat(names(home.resolve("lib")))
        .contains("sluice-core-" + version + ".jar")
        .anyMatch(n -> n.startsWith("netty-transport-native-epoll-"))
        .anyMatch(n -> n.startsWith("log4j-core-"))
        .noneMatch(n -> n.startsWith("hadoop-"))
        .noneMatch(n -> n.contains("shaded"));
    // RocksDB once, with the natives of the supported platforms only
    List<String> rocksdb =
        names(home.resolve("lib")).stream()
            .filter(n -> n.startsWith("rocksdbjni-"))
            .collect(Collectors.toList());
    assertThat(rocksdb).hasSize(1);
    try (java.util.zip.ZipFile jar =
        new java.util.zip.ZipFile(home.resolve("lib").resolve(rocksdb.get(0)).toFile())) {
      assertThat(jar.stream().map(java.util.zip.ZipEntry::getName))
          .filteredOn(n -> n.startsWith("librocksdbjni"))
          .containsExactlyInAnyOrder(
              "librocksdbjni-linux64.so", "librocksdbjni-linux-aarch64.so");
      assertThat(jar.getEntry("org/rocksdb/RocksDB.class")).isNotNull();
    }
    assertThat(home.resolve("bin/shuffle-bench"))
        .as("runs only from a source checkout")
        .doesNotExist();
    assertThat(Files.readString(home.resolve("LICENSE"))).contains("Apache License");
    assertThat(Files.readString(home.resolve("NOTICE"))).contains("Netty", "RocksDB", "protobuf");
  }

  @Test
  void aSparkJobShufflesThroughTheDaemonStartedFromTheTarball() throws Exception {
    Path logDir = home.resolve("logs"); // the default
    logDirs.add(logDir);
    Path portFile = root.resolve("port");

    Result start = script(Map.of(), "start", "--port-file", portFile.toString());
    assertThat(start.code).as("start: %s%s", start.output, log(logDir)).isZero();
    assertThat(start.output).contains("started");
    int port = Integer.parseInt(Files.readString(portFile).trim());

    Result status = script(Map.of(), "status");
    assertThat(status.code).as("status: %s", status.output).isZero();
    assertThat(status.output).contains("healthy", "SERVING");

    // its data directory is under the temporary directory, as a first run's defaults are
    assertThat(Files.readString(logDir.resolve("shuffle-daemon.log")))
        .contains("WARN", "temporary directory", "--dirs");
    assertThat(logDir.resolve("gc.log")).isRegularFile();

    Result job = sparkJob("127.0.0.1:" + port, "spark3.5_2.12");
    assertThat(job.code).as("the Spark job: %s", job.output).isZero();
    assertThat(job.output)
        .contains("shuffle manager: " + SparkJob.MANAGER)
        .contains("keys: 1000, counts per key: [100]");
    assertThat(pushedBytes(logDir)).as("bytes pushed to the daemon").isPositive();

    // another line's jar refuses this Spark (3.5 on Scala 2.12), naming the jar to install
    Result wrongJar = sparkJob("127.0.0.1:" + port, "spark3.4_2.12");
    assertThat(wrongJar.code).as("the job with the Spark 3.4 jar").isNotZero();
    assertThat(wrongJar.output)
        .contains("-spark3.4_2.12-shaded.jar) is built for Spark 3.4 on Scala 2.12")
        .contains("Install sluice-spark-client-" + version + "-spark3.5_2.12-shaded.jar instead");

    Result stop = script(Map.of(), "stop");
    assertThat(stop.code).as("stop: %s", stop.output).isZero();
    Result after = script(Map.of(), "status");
    assertThat(after.code).as("status after stop: %s", after.output).isEqualTo(3);
  }

  @Test
  void theReadmesFourGigabyteExampleStartsAndRestarts() throws Exception {
    Path logDir = root.resolve("logs-4g");
    logDirs.add(logDir);
    Map<String, String> env = Map.of("SLUICE_LOG_DIR", logDir.toString());

    Result start = script(env, "start", "--memory", "4g");
    assertThat(start.code).as("start: %s%s", start.output, log(logDir)).isZero();
    // 4g, an eighth of it for Netty, 64m for the JDK
    assertThat(commandLine(logDir)).contains("-XX:MaxDirectMemorySize=4672m");

    Result restart = script(env, "restart", "--memory", "4g");
    assertThat(restart.code).as("restart: %s%s", restart.output, log(logDir)).isZero();
    assertThat(restart.output).contains("stopped", "started");
    Result status = script(env, "status");
    assertThat(status.code).as("status: %s", status.output).isZero();
    assertThat(status.output).contains("healthy");
    assertThat(commandLine(logDir)).contains("-XX:MaxDirectMemorySize=4672m");

    assertThat(script(env, "stop").code).isZero();
  }

  /** A directory of links to {@link #TOOLS}, found on this JVM's PATH: a PATH without mvn. */
  private static Path toolsWithoutMaven(Path dir) throws IOException {
    List<Path> path =
        Arrays.stream(System.getenv("PATH").split(File.pathSeparator))
            .map(Paths::get)
            .collect(Collectors.toList());
    for (String tool : TOOLS) {
      for (Path entry : path) {
        Path candidate = entry.resolve(tool);
        if (Files.isExecutable(candidate)) {
          Files.createSymbolicLink(dir.resolve(tool), candidate.toRealPath());
          break;
        }
      }
    }
    assertThat(dir.resolve("mvn")).doesNotExist();
    return dir;
  }

  /** Exit code and the output, stdout and stderr together. */
  private static final class Result {
    final int code;
    final String output;

    Result(int code, String output) {
      this.code = code;
      this.output = output;
    }
  }

  /** Runs {@code bin/shuffle-daemon} of the installation in an environment of only what it needs. */
  private static Result script(Map<String, String> extraEnv, String... args) throws Exception {
    List<String> command = new ArrayList<>();
    command.add(home.resolve("bin/shuffle-daemon").toString());
    command.addAll(Arrays.asList(args));
    ProcessBuilder builder = new ProcessBuilder(command);
    Map<String, String> env = builder.environment();
    env.clear();
    env.put("PATH", tools.toString());
    env.put("HOME", System.getProperty("user.home"));
    env.put("JAVA_HOME", System.getProperty("java.home"));
    env.put("SLUICE_START_WAIT", Long.toString(WAIT_SECONDS));
    env.put("SLUICE_STOP_TIMEOUT", Long.toString(WAIT_SECONDS));
    env.putAll(extraEnv);
    return run(builder, root.resolve("script-" + args[0] + ".txt"), 2 * WAIT_SECONDS + 30);
  }

  /**
   * {@link SparkJob} in a JVM of Spark's class path (Spark 3.5, Scala 2.12) and the tarball's jar of
   * Spark line {@code line} alone.
   */
  private static Result sparkJob(String servers, String line) throws Exception {
    Path jar = home.resolve("jars/sluice-spark-client-" + version + "-" + line + "-shaded.jar");
    assertThat(jar).isRegularFile();
    List<String> command = new ArrayList<>();
    command.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-Xmx768m");
    command.addAll(Arrays.asList(System.getProperty("sluice.spark.jvmOptions").trim().split("\\s+")));
    command.add("-cp");
    command.add(
        String.join(
            File.pathSeparator,
            System.getProperty("sluice.spark.classpath"),
            System.getProperty("sluice.jobClasses"),
            jar.toString()));
    command.add(SparkJob.class.getName());
    command.add(servers);
    ProcessBuilder builder = new ProcessBuilder(command);
    builder.environment().put("SPARK_LOCAL_IP", "127.0.0.1");
    return run(builder, root.resolve("spark-job-" + line + ".txt"), 240);
  }

  private static Result run(ProcessBuilder builder, Path output, long waitSeconds)
      throws Exception {
    builder
        .redirectErrorStream(true)
        .redirectOutput(output.toFile())
        .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
    Process process = builder.start();
    if (!process.waitFor(waitSeconds, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      throw new AssertionError(
          String.join(" ", builder.command())
              + " did not finish in "
              + waitSeconds
              + " s:\n"
              + Files.readString(output, StandardCharsets.UTF_8));
    }
    return new Result(process.exitValue(), Files.readString(output, StandardCharsets.UTF_8));
  }

  /** The running daemon's JVM command line, from its pid file. */
  private static String commandLine(Path logDir) throws IOException {
    long pid = Long.parseLong(Files.readString(logDir.resolve("shuffle-daemon.pid")).trim());
    return ProcessHandle.of(pid)
        .flatMap(p -> p.info().arguments())
        .map(a -> String.join(" ", a))
        .orElseThrow(() -> new AssertionError("no process " + pid));
  }

  /** sluice_pushed_bytes_total from the daemon's /metrics, on the port its .out file names. */
  private static double pushedBytes(Path logDir) throws Exception {
    Matcher port = ADMIN_PORT.matcher(Files.readString(logDir.resolve("shuffle-daemon.out")));
    assertThat(port.find()).as("the admin port in shuffle-daemon.out").isTrue();
    HttpResponse<String> metrics =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + port.group(1) + "/metrics"))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
    assertThat(metrics.statusCode()).isEqualTo(200);
    Matcher pushed = PUSHED.matcher(metrics.body());
    assertThat(pushed.find()).as("sluice_pushed_bytes_total in:\n%s", metrics.body()).isTrue();
    return Double.parseDouble(pushed.group(1));
  }

  private static List<String> names(Path dir) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files.map(f -> f.getFileName().toString()).collect(Collectors.toList());
    }
  }

  private static String log(Path logDir) throws IOException {
    StringBuilder text = new StringBuilder();
    for (String name : List.of("shuffle-daemon.out", "shuffle-daemon.log")) {
      Path file = logDir.resolve(name);
      if (Files.exists(file)) {
        text.append("\n--- ").append(file).append(":\n").append(Files.readString(file));
      }
    }
    return text.toString();
  }
}
