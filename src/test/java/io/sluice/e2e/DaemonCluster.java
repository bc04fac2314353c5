package io.sluice.e2e;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * Several daemons, each a real process started through {@code bin/shuffle-daemon} ({@link
 * DaemonProcess}) on a port of its own and with a data directory of its own, for suites in other
 * packages (the Spark suites) that kill one of them. They start in parallel; {@link #close} kills
 * whichever still run.
 */
public final class DaemonCluster implements AutoCloseable {
  private final List<DaemonProcess> daemons = new ArrayList<>();
  private final List<Integer> ports = new ArrayList<>();

  /**
   * Starts {@code count} daemons on loopback, on ports the system picks, under {@code
   * root/daemon<i>}, with {@code settings} on top of the suites' own (see {@link DaemonProcess}).
   */
  public DaemonCluster(Path root, int count, Map<String, String> settings) throws Exception {
    List<CompletableFuture<Integer>> started = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      DaemonProcess daemon = new DaemonProcess(root.resolve("daemon" + i));
      daemons.add(daemon);
      started.add(
          CompletableFuture.supplyAsync(
              () -> {
                try {
                  return daemon.start(0, settings);
                } catch (Exception e) {
                  throw new CompletionException(e);
                }
              }));
    }
    Exception failure = null;
    for (CompletableFuture<Integer> port : started) {
      try {
        ports.add(port.join());
      } catch (CompletionException e) {
        failure = failure != null ? failure : new Exception("a daemon did not start", e.getCause());
      }
    }
    if (failure != null) {
      close();
      throw failure;
    }
  }

  public int size() {
    return daemons.size();
  }

  /** The value of {@code spark.sluice.servers} (or any client's server list). */
  public String list() {
    return ports.stream().map(p -> "127.0.0.1:" + p).collect(Collectors.joining(","));
  }

  public int port(int daemon) {
    return ports.get(daemon);
  }

  /** The daemon serving on {@code port}. */
  public int indexOfPort(int port) {
    int i = ports.indexOf(port);
    if (i < 0) {
      throw new IllegalArgumentException("no daemon serves on port " + port + ": " + list());
    }
    return i;
  }

  /** The daemon's process id, to kill it from another JVM. */
  public long pid(int daemon) throws IOException {
    return daemons.get(daemon).pid();
  }

  public boolean isAlive(int daemon) throws IOException {
    return daemons.get(daemon).isAlive();
  }

  /** kill -9 from this JVM; returns once the process is gone. */
  public void kill(int daemon) throws Exception {
    daemons.get(daemon).kill();
  }

  public Path dataDir(int daemon) {
    return daemons.get(daemon).dataDir();
  }

  /** Every daemon's log, for a failure message. */
  public String logs() {
    StringBuilder out = new StringBuilder();
    for (int i = 0; i < daemons.size(); i++) {
      out.append("---- daemon ").append(i);
      if (i < ports.size()) {
        out.append(" (port ").append(ports.get(i)).append(')');
      }
      out.append(" ----\n");
      try {
        out.append(daemons.get(i).log());
      } catch (IOException e) {
        out.append("(cannot read its log: ").append(e).append(")\n");
      }
    }
    return out.toString();
  }

  /**
   * kill -9 of process {@code pid} from any JVM (a Spark executor's too): returns once the process
   * is dead, its sockets closed, without waiting until it is reaped (see {@link #isGone}).
   *
   * @throws IllegalStateException when it is still alive after a minute
   */
  public static void kill9(long pid) {
    ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
    while (!isGone(pid)) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("process " + pid + " is alive a minute after kill -9");
      }
      try {
        Thread.sleep(5);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while killing process " + pid, e);
      }
    }
  }

  /**
   * Whether process {@code pid} is gone or dead. A daemon started through the script is an orphan
   * (the script's shell exits), so once killed it stays a zombie until init reaps it, which can
   * take seconds; Java's {@link ProcessHandle} counts a zombie as alive, so this reads its state.
   */
  public static boolean isGone(long pid) {
    Optional<ProcessHandle> p = ProcessHandle.of(pid);
    if (p.isEmpty() || !p.get().isAlive()) {
      return true;
    }
    Path stat = Paths.get("/proc", Long.toString(pid), "stat");
    try {
      String s = Files.readString(stat);
      // "pid (command) state ...": the state follows the command's closing parenthesis
      int at = s.lastIndexOf(')') + 2;
      return at < s.length() && (s.charAt(at) == 'Z' || s.charAt(at) == 'X');
    } catch (IOException e) {
      return !Files.exists(stat);
    }
  }

  /** Kills every daemon still running (kill -9: the suites need none of their data after). */
  @Override
  public void close() {
    for (DaemonProcess d : daemons) {
      try {
        d.killIfRunning();
      } catch (IOException ignored) {
        // a daemon without a pid file is not running
      }
    }
  }
}
