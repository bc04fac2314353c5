package io.sluice.benchmarks;

import io.sluice.server.state.StateRecovery;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/** What one graceful restart of a benchmark server took, and what the new server restored. */
final class ServerRestart {
  private static final long ACCEPT_TIMEOUT_NANOS = TimeUnit.MINUTES.toNanos(1);

  final int server;
  final int port;

  /** Wall-clock time (epoch milliseconds) at which the stop began. */
  final long stopBeganMillis;

  /** {@code ShuffleServer.close()}: committing the open splits, closing the port. */
  final double stopSeconds;

  /** The port closed between the stop and the start. */
  final double downSeconds;

  /** From the start of the new server until it accepted a connection. */
  final double startSeconds;

  /** From the start of the stop until the new server accepted a connection. */
  final double totalSeconds;

  /** Committed splits and their bytes the new server restored from its state store. */
  final int recoveredSplits;

  final long recoveredBytes;

  ServerRestart(
      int server,
      int port,
      long stopBeganMillis,
      double stopSeconds,
      double downSeconds,
      double startSeconds,
      double totalSeconds,
      StateRecovery.Summary recovery) {
    this.server = server;
    this.port = port;
    this.stopBeganMillis = stopBeganMillis;
    this.stopSeconds = stopSeconds;
    this.downSeconds = downSeconds;
    this.startSeconds = startSeconds;
    this.totalSeconds = totalSeconds;
    this.recoveredSplits = recovery.splits();
    this.recoveredBytes = recovery.bytes();
  }

  /** Wall-clock time (epoch milliseconds) at which the new server accepted a connection. */
  long backMillis() {
    return stopBeganMillis + Math.round(totalSeconds * 1000);
  }

  /**
   * Waits until a connection to {@code port} on loopback is accepted (and closes it).
   *
   * @throws IOException when none is within a minute
   */
  static void awaitAccepting(int port) throws IOException, InterruptedException {
    long deadline = System.nanoTime() + ACCEPT_TIMEOUT_NANOS;
    while (true) {
      try (Socket socket = new Socket()) {
        socket.connect(new InetSocketAddress("127.0.0.1", port), 1000);
        return;
      } catch (IOException e) {
        if (System.nanoTime() > deadline) {
          throw new IOException("the restarted server did not accept connections on " + port, e);
        }
        Thread.sleep(10);
      }
    }
  }

  @Override
  public String toString() {
    return String.format(
        Locale.ROOT,
        "server %d (port %d) restarted in %.2f s: stop %.2f s, port closed %.2f s, start %.2f s;"
            + " %d committed split(s) of %.1f MiB restored",
        server,
        port,
        totalSeconds,
        stopSeconds,
        downSeconds,
        startSeconds,
        recoveredSplits,
        recoveredBytes / (1024.0 * 1024));
  }

  String json() {
    return "{\"server\":"
        + server
        + ",\"restartSeconds\":"
        + Json.num(totalSeconds)
        + ",\"stopSeconds\":"
        + Json.num(stopSeconds)
        + ",\"downSeconds\":"
        + Json.num(downSeconds)
        + ",\"startSeconds\":"
        + Json.num(startSeconds)
        + ",\"recoveredSplits\":"
        + recoveredSplits
        + ",\"recoveredBytes\":"
        + recoveredBytes
        + "}";
  }
}
