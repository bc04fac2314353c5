package io.sluice.e2e;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netty.channel.epoll.Epoll;
import io.sluice.testutil.TestCertificates;
import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Drives the real {@code bin/shuffle-daemon} script: start, status, a TCP connection to the port it
 * serves, stop. The script runs the daemon from this JVM's classpath ({@code SLUICE_CLASSPATH}), so
 * the test does not depend on {@code core/target/lib} being built.
 */
class DaemonScriptTest {
  private static final long WAIT_SECONDS = 60;
  private static final Pattern RUNNING_PID = Pattern.compile("is running \\(pid (\\d+)\\)");

  @TempDir Path tmp;

  private Path script;
  private Path dataDir;
  private Path logDir;
  private Path portFile;

  @BeforeEach
  void setUp() throws IOException {
    String home = System.getProperty("sluice.home");
    assumeTrue(home != null, "the build passes -Dsluice.home=<repo root>");
    script = Paths.get(home, "bin", "shuffle-daemon");
    assumeTrue(Files.isRegularFile(script), script + " is missing");
    dataDir = Files.createDirectories(tmp.resolve("data"));
    logDir = tmp.resolve("logs");
    portFile = tmp.resolve("port");
  }

  @AfterEach
  void killLeftovers() throws IOException {
    // a failed assertion must not leave a daemon behind
    Path pidFile = logDir.resolve("shuffle-daemon.pid");
    if (Files.exists(pidFile)) {
      long pid = Long.parseLong(Files.readString(pidFile).trim());
      ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
    }
  }

  @Test
  void startStatusConnectStop() throws Exception {
    int metricsPort;
    try (java.net.ServerSocket free = new java.net.ServerSocket(0)) {
      metricsPort = free.getLocalPort();
    }
    DaemonScript.Result start =
        script(
            "start",
            "--port",
            "0",
            "--dirs",
            dataDir.toString(),
            "--port-file",
            portFile.toString(),
            "--set",
            "sluice.metrics.port=" + metricsPort);
    assertThat(start.code).as("start: %s\n%s", start.output, daemonOut()).isZero();
    assertThat(start.output).contains("started");

    int port = awaitPort();

    DaemonScript.Result status = script("status");
    assertThat(status.code).as("status: %s", status.output).isZero();
    Matcher running = RUNNING_PID.matcher(status.output);
    assertThat(running.find()).as("status output: %s", status.output).isTrue();
    long pid = Long.parseLong(running.group(1));
    Optional<ProcessHandle> daemon = ProcessHandle.of(pid);
    assertThat(daemon).as("process %d", pid).isPresent();

    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
      assertThat(socket.isConnected()).isTrue();
    }

    java.net.http.HttpResponse<String> metrics =
        java.net.http.HttpClient.newHttpClient()
            .send(
                java.net.http.HttpRequest.newBuilder(
                        java.net.URI.create("http://127.0.0.1:" + metricsPort + "/metrics"))
                    .build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
    assertThat(metrics.statusCode()).isEqualTo(200);
    assertThat(metrics.body())
        .contains(
            "# TYPE sluice_memory_max_bytes gauge", "# TYPE sluice_pushed_bytes_total counter")
        .contains("sluice_memory_max_bytes{server=\"", "sluice_pushed_bytes_total{server=\"");

    DaemonScript.Result stop = script("stop");
    assertThat(stop.code).as("stop: %s\n%s", stop.output, daemonOut()).isZero();
    daemon.get().onExit().get(WAIT_SECONDS, TimeUnit.SECONDS);
    assertThat(daemon.get().isAlive()).isFalse();
    assertThat(logDir.resolve("shuffle-daemon.pid")).doesNotExist();

    DaemonScript.Result after = script("status");
    assertThat(after.code).as("status after stop: %s", after.output).isNotZero();
    assertThat(after.output).contains("not running");

    try (Stream<Path> files = Files.walk(dataDir)) {
      List<Path> inProgress =
          files
              .filter(f -> f.getFileName().toString().endsWith(".inprogress"))
              .collect(Collectors.toList());
      assertThat(inProgress).as("files left in progress").isEmpty();
    }
    assertThat(daemonOut()).contains("serving on port " + port);
  }

  @Test
  void aSecondStartIsRefused() throws Exception {
    DaemonScript.Result first = script("start", "--port", "0", "--dirs", dataDir.toString());
    assertThat(first.code).as("start: %s\n%s", first.output, daemonOut()).isZero();

    DaemonScript.Result second = script("start", "--port", "0", "--dirs", dataDir.toString());
    assertThat(second.code).isNotZero();
    assertThat(second.output).contains("already running");

    assertThat(script("stop").code).isZero();
  }

  @Test
  void aBadValueFailsTheStartWithTheDaemonsMessage() throws Exception {
    DaemonScript.Result start = script("start", "--dirs", dataDir.toString(), "--memory", "12zz");

    assertThat(start.code).isNotZero();
    assertThat(start.output).contains("failed to start", "sluice.memory.max", "'12zz'");
    assertThat(logDir.resolve("shuffle-daemon.pid")).doesNotExist();
  }

  /**
   * With TLS on, the admin port serves HTTPS, and {@code sluice.metrics.host} binds it to another
   * address than 127.0.0.1 (as docs/security.md advises for a management network): status asks
   * there, over HTTPS, as the settings the daemon read say (a --conf file in Properties syntax).
   */
  @Test
  void statusAsksTheAdminApiOverHttpsAtItsBindAddress() throws Exception {
    assumeTrue(canBind("127.0.0.2"), "127.0.0.2 is not a local address here");
    assumeTrue(
        onPath("curl") || onPath("openssl"), "neither curl nor openssl to ask over HTTPS with");
    TestCertificates certificates = TestCertificates.create(tmp.resolve("tls"), "daemon");
    Path conf = tmp.resolve("tls.conf");
    Files.writeString(
        conf,
        String.join(
            "\n",
            "# the daemon reads this with java.util.Properties: key = value and key: value",
            "sluice.tls.enabled: true",
            "sluice.tls.keyStore = " + certificates.keyStore,
            "sluice.tls.keyStorePassword = " + TestCertificates.PASSWORD,
            "sluice.metrics.host = 127.0.0.2",
            ""));
    int metricsPort = freePort();
    DaemonScript.Result start =
        script(
            "start",
            "--port",
            "0",
            "--dirs",
            dataDir.toString(),
            "--port-file",
            portFile.toString(),
            "--conf",
            conf.toString(),
            "--set",
            "sluice.metrics.port=" + metricsPort);
    assertThat(start.code).as("start: %s\n%s", start.output, daemonOut()).isZero();
    awaitPort();

    DaemonScript.Result status = script("status");

    assertThat(status.code).as("status: %s\n%s", status.output, daemonOut()).isZero();
    assertThat(status.output).contains("healthy, SERVING", "https://127.0.0.2:" + metricsPort);
    assertThat(script("stop").code).isZero();
  }

  /**
   * Without SLUICE_STOP_TIMEOUT, stop waits the daemon's own sluice.shutdown.timeout plus 30 s,
   * after its sluice.shutdown.drainTimeout: never less than the server may take to stop.
   */
  @Test
  void stopWaitsLongerThanTheDaemonsShutdownAndDrainTimeouts() throws Exception {
    DaemonScript.Result start =
        script(
            "start",
            "--port",
            "0",
            "--dirs",
            dataDir.toString(),
            "--set",
            "sluice.shutdown.timeout=5s",
            "--set",
            "sluice.shutdown.drainTimeout=2s");
    assertThat(start.code).as("start: %s\n%s", start.output, daemonOut()).isZero();

    DaemonScript.Result stop = script(Map.of("SLUICE_STOP_TIMEOUT", ""), "stop");

    assertThat(stop.code).as("stop: %s\n%s", stop.output, daemonOut()).isZero();
    assertThat(stop.output)
        .contains("waiting at most 37 s (sluice.shutdown.timeout 5 s + 30 s, after a drain")
        .contains("stopped");
    assertThat(logDir.resolve("shuffle-daemon.args")).doesNotExist();
  }

  @Test
  void anUnknownCommandPrintsUsage() throws Exception {
    DaemonScript.Result result = script("restart-everything");

    assertThat(result.code).isEqualTo(2);
    assertThat(result.output).contains("unknown command", "Usage:", "start", "stop", "status");
  }

  /**
   * A Hadoop distribution's jars (HADOOP_CLASSPATH, for the HDFS tier) may carry another copy of
   * Netty's native epoll library. Netty refuses both copies when they differ, which left the daemon
   * on NIO; Sluice's own copy comes first on the class path and is the one that loads.
   */
  @Test
  void anotherNettyNativeLibraryOnHadoopsClassPathLeavesTheServerOnEpoll() throws Exception {
    assumeTrue(Epoll.isAvailable(), "no native epoll here");
    Path hadoopJar = tmp.resolve("hadoop-with-netty.jar");
    try (JarOutputStream jar = new JarOutputStream(Files.newOutputStream(hadoopJar))) {
      for (String arch : List.of("x86_64", "aarch_64")) {
        jar.putNextEntry(
            new JarEntry("META-INF/native/libnetty_transport_native_epoll_" + arch + ".so"));
        jar.write("not the library Sluice's Netty classes were built with".getBytes(UTF_8));
        jar.closeEntry();
      }
    }

    DaemonScript.Result start =
        script(
            Map.of("HADOOP_CLASSPATH", hadoopJar.toString()),
            "start",
            "--port",
            "0",
            "--dirs",
            dataDir.toString(),
            "--port-file",
            portFile.toString());
    assertThat(start.code).as("start: %s\n%s", start.output, daemonOut()).isZero();
    awaitPort();
    String log = Files.readString(logDir.resolve("shuffle-daemon.log"));
    assertThat(script("stop").code).isZero();

    assertThat(log)
        .contains("sluice-server listening on")
        .contains("(epoll transport)")
        .doesNotContain("(nio transport)");
  }

  private static int freePort() throws IOException {
    try (ServerSocket free = new ServerSocket(0)) {
      return free.getLocalPort();
    }
  }

  private static boolean canBind(String address) {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(address))) {
      return socket.isBound();
    } catch (IOException e) {
      return false;
    }
  }

  private static boolean onPath(String command) {
    String path = System.getenv("PATH");
    if (path == null) {
      return false;
    }
    for (String dir : path.split(File.pathSeparator)) {
      if (!dir.isEmpty() && Files.isExecutable(Paths.get(dir, command))) {
        return true;
      }
    }
    return false;
  }

  private int awaitPort() throws IOException, InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
    while (System.nanoTime() < deadline) {
      if (Files.exists(portFile)) {
        String text = Files.readString(portFile).trim();
        if (!text.isEmpty()) {
          return Integer.parseInt(text);
        }
      }
      Thread.sleep(100);
    }
    throw new AssertionError(
        "no port file "
            + portFile
            + " after "
            + WAIT_SECONDS
            + " s; daemon output:\n"
            + daemonOut());
  }

  private String daemonOut() throws IOException {
    Path out = logDir.resolve("shuffle-daemon.out");
    return Files.exists(out) ? Files.readString(out) : "(no " + out + ")";
  }

  /** Runs the script with a bounded wait; its stdout and stderr together. */
  private DaemonScript.Result script(String... args) throws IOException, InterruptedException {
    return script(Map.of(), args);
  }

  /** Like {@link #script(String...)}, with {@code env} set. */
  private DaemonScript.Result script(Map<String, String> env, String... args)
      throws IOException, InterruptedException {
    return DaemonScript.run(script, logDir, tmp, WAIT_SECONDS, env, args);
  }
}
