package io.sluice.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.sluice.client.ClientContext;
import io.sluice.testutil.Records;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bin/shuffle-daemon stop --drain}, the rolling-upgrade stop: the daemon decommissions
 * itself, refuses new shuffles, keeps serving the application that holds data on it, and stops once
 * that application ends, well before the drain time is up; the script reports both.
 */
class DaemonDrainIT {
  private static final long WAIT_SECONDS = 60;

  @TempDir Path tmp;
  private Path script;
  private Path logDir;

  @AfterEach
  void killLeftovers() throws IOException {
    Path pidFile = logDir == null ? null : logDir.resolve("shuffle-daemon.pid");
    if (pidFile != null && Files.exists(pidFile)) {
      long pid = Long.parseLong(Files.readString(pidFile).trim());
      ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
    }
  }

  @Test
  void stopDrainServesTheApplicationThatHoldsDataThenStopsWhenItEnds() throws Exception {
    String home = System.getProperty("sluice.home");
    assumeTrue(home != null, "the build passes -Dsluice.home=<repo root>");
    script = Paths.get(home, "bin", "shuffle-daemon");
    logDir = tmp.resolve("logs");
    Path portFile = tmp.resolve("port");
    int adminPort;
    try (ServerSocket free = new ServerSocket(0)) {
      adminPort = free.getLocalPort();
    }
    DaemonScript.Result start =
        script(
            "start",
            "--port",
            "0",
            "--dirs",
            Files.createDirectories(tmp.resolve("data")).toString(),
            "--port-file",
            portFile.toString(),
            "--set",
            "sluice.metrics.port=" + adminPort);
    assertThat(start.code).as("start: %s", start.output).isZero();
    int port = awaitPort(portFile);
    List<io.sluice.protocol.proto.ServerAddress> servers =
        List.of(ClientContext.address("127.0.0.1", port));

    ApplicationClient holder = new ApplicationClient("app-drain-holder", servers);
    CompletableFuture<DaemonScript.Result> stop;
    try {
      holder.coordinator().registerShuffle(0, 1, 4);
      holder.runMap(0, 0, 4, 200, 300);

      stop =
          CompletableFuture.supplyAsync(
              () -> {
                try {
                  return DaemonScript.run(
                      script, logDir, tmp, WAIT_SECONDS * 3, "stop", "--drain", "120");
                } catch (IOException | InterruptedException e) {
                  throw new IllegalStateException(e);
                }
              });
      awaitState(adminPort, "DECOMMISSIONING");

      // new shuffles go elsewhere (here: nowhere), what the daemon holds is still read
      try (ApplicationClient late = new ApplicationClient("app-drain-late", servers)) {
        assertThatThrownBy(() -> late.coordinator().registerShuffle(0, 1, 4))
            .hasMessageContaining("decommissioned");
      }
      Records.Checker read = holder.readAll(0, 4, 1);
      for (int p = 0; p < 4; p++) {
        assertThat(read.count(0, p)).isEqualTo(200);
      }
      assertThat(stop).as("the daemon waits for the application").isNotDone();
    } finally {
      holder.close(); // unregisters the application: nothing is left to serve
    }
    DaemonScript.Result stopped = stop.get(WAIT_SECONDS * 3, TimeUnit.SECONDS);
    assertThat(stopped.code).as("stop --drain: %s", stopped.output).isZero();
    assertThat(stopped.output).contains("draining", "stopped");
    assertThat(Files.readString(logDir.resolve("shuffle-daemon.log")))
        .contains("drained before stopping");
  }

  private static void awaitState(int adminPort, String state) throws Exception {
    HttpClient http = HttpClient.newHttpClient();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
    String last = "";
    while (System.nanoTime() < deadline) {
      try {
        last =
            http.send(
                    HttpRequest.newBuilder(
                            URI.create("http://127.0.0.1:" + adminPort + "/api/v1/status"))
                        .build(),
                    HttpResponse.BodyHandlers.ofString())
                .body();
        if (last.contains("\"state\":\"" + state + "\"")) {
          return;
        }
      } catch (IOException e) {
        last = e.toString();
      }
      Thread.sleep(100);
    }
    throw new AssertionError("the daemon never reported " + state + "; last answer: " + last);
  }

  private static int awaitPort(Path portFile) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
    while (System.nanoTime() < deadline) {
      if (Files.exists(portFile) && !Files.readString(portFile).trim().isEmpty()) {
        return Integer.parseInt(Files.readString(portFile).trim());
      }
      Thread.sleep(100);
    }
    throw new AssertionError("no port file " + portFile);
  }

  private DaemonScript.Result script(String... args) throws IOException, InterruptedException {
    return DaemonScript.run(script, logDir, tmp, WAIT_SECONDS, args);
  }
}
