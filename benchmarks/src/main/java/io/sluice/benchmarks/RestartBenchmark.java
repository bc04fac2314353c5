package io.sluice.benchmarks;

import io.sluice.server.ShuffleServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * {@code shuffle-bench restart}: one Spark job on the built-in shuffle (the result to match), on
 * Sluice (the time to match), and on Sluice again with server 0 restarted gracefully in the middle
 * of a stage, in one run. The servers live in this JVM, the Spark driver in a child JVM ({@link
 * SparkBenchmarkDriver}); in the last timed run the driver prints {@code @@restart} once the first
 * task of the chosen stage ended ({@link SparkRestartTrigger}), and this JVM restarts the server on
 * a thread of its own while the job goes on: stop, port closed for {@code --down-seconds}, a new
 * server on the same port, data directory and state store. The driver counts failed tasks, fetch
 * failures and stage reruns ({@link SparkJobIncidents}). Prints a table and, last, one JSON object.
 * Exit code 1 when the results differ, the restart did not happen or the Spark JVM failed.
 */
final class RestartBenchmark {
  static final String NAME = "restart";
  static final String DESCRIPTION =
      "a Spark job on Sluice with a server restarted mid-stage, vs no restart and built-in";

  private final RestartBenchmarkOptions options;
  private final PrintStream out;
  private final RestartReport report;

  /** The restart under way or done, once the driver asked for it. */
  private CompletableFuture<ServerRestart> restart;

  private RestartBenchmark(RestartBenchmarkOptions options, PrintStream out) {
    this.options = options;
    this.out = out;
    this.report = new RestartReport(options);
  }

  static int run(String[] args, PrintStream out, PrintStream err) {
    RestartBenchmarkOptions options = new RestartBenchmarkOptions();
    Integer exit = BenchmarkCli.parse(NAME, options, () -> options.help, args, out, err);
    if (exit != null) {
      return exit;
    }
    String problem = options.problem();
    if (problem != null) {
      err.println("shuffle-bench " + NAME + ": " + problem);
      return 2;
    }
    try {
      return new RestartBenchmark(options, out).run(err);
    } catch (IOException | ExecutionException | TimeoutException e) {
      err.println("shuffle-bench " + NAME + " failed: " + e);
      return 1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      err.println("shuffle-bench " + NAME + " interrupted");
      return 1;
    }
  }

  private int run(PrintStream err)
      throws IOException, InterruptedException, ExecutionException, TimeoutException {
    Path dir = Files.createDirectories(Path.of(options.dir));
    Map<String, String> settings = BenchmarkCli.settings("--server-conf", options.serverConf);
    int exit;
    try (BenchServers servers = new BenchServers(settings)) {
      for (int i = 0; i < options.servers; i++) {
        servers.start(dir.resolve("server" + i));
      }
      out.println(
          "# "
              + options.servers
              + " Sluice server(s) in this JVM; server 0 (port "
              + servers.servers.get(0).port()
              + ") restarts in the "
              + options.restartIn
              + " stage of the last timed run, its port closed for "
              + Json.num(options.downSeconds)
              + " s");
      exit = runJobs(servers);
    }
    if (exit != 0) {
      err.println("shuffle-bench " + NAME + ": the Spark JVM exited with " + exit);
      return 1;
    }
    if (!report.complete()) {
      err.println("shuffle-bench " + NAME + ": the Spark JVM did not report every run");
      return 1;
    }
    report.print(out);
    if (report.restart == null) {
      err.println("shuffle-bench " + NAME + ": no server was restarted (the stage never started?)");
      return 1;
    }
    return report.resultsEqual() ? 0 : 1;
  }

  /** Runs the three timed runs in the Spark JVM; its exit code. */
  private int runJobs(BenchServers servers)
      throws IOException, InterruptedException, ExecutionException, TimeoutException {
    SparkBenchmark.SparkLine line = SparkBenchmark.SparkLine.KNOWN.get(options.sparkLine);
    List<String> addresses = new ArrayList<>();
    for (ShuffleServer server : servers.servers) {
      addresses.add("127.0.0.1:" + server.port());
    }
    String sluice = "/sluice/" + String.join(",", addresses) + "/1/on";
    List<String> args = new ArrayList<>();
    args.add("workloads=" + options.workload);
    args.add("scale=" + options.scale);
    args.add("warmups=" + options.warmups);
    args.add("timedRuns=1");
    args.add("coldStart=false");
    args.add("smallBlocks=400x2000");
    args.add("executorMemory=" + options.executorMemory);
    args.add("executorJavaOptions=");
    args.add("scala=" + line.scala);
    args.add("run=" + RestartReport.BUILTIN + "/builtin");
    args.add("run=" + RestartReport.SLUICE + sluice);
    args.add("run=" + RestartReport.RESTART + sluice + "/" + options.taskType());
    Process process = SparkDriverJvm.start(line, args, Path.of(options.dir));
    long[] before = new long[3];
    long began = 0;
    try (BufferedReader lines =
        new BufferedReader(
            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      String text;
      while ((text = lines.readLine()) != null) {
        String[] f = text.split(" ", -1);
        if (f[0].equals(SparkBenchmarkDriver.BEGIN)) {
          began = System.currentTimeMillis();
          before = servers.counters();
        } else if (f[0].equals(SparkRestartTrigger.RESTART)) {
          out.println("# " + f[1] + ": the first " + options.restartIn + " task ended; restarting");
          restartOnItsOwnThread(servers);
        } else if (f[0].equals(SparkBenchmarkDriver.END)) {
          int column = Integer.parseInt(f[2]);
          long ended = System.currentTimeMillis();
          if (column == RestartReport.RESTART && restart != null) {
            // a restart that outlasted the job still counts: wait for it
            report.restart = restart.get(2, TimeUnit.MINUTES);
            report.restartedServerCounters = servers.counters(0);
          }
          long[] after = servers.counters();
          long[] used = new long[after.length];
          for (int i = 0; i < used.length && column != RestartReport.BUILTIN; i++) {
            used[i] = after[i] - before[i];
          }
          RestartReport.TimedRun run =
              new RestartReport.TimedRun(
                  Double.parseDouble(f[3]),
                  SparkBenchmarkDriver.decode(f[4]),
                  SparkBenchmarkDriver.decode(f[5]),
                  SparkBenchmarkDriver.incidents(f),
                  used,
                  began,
                  ended);
          report.runs[column] = run;
          out.println(
              "#   "
                  + new String[] {"built-in", "sluice", "sluice with a restart"}[column]
                  + ": "
                  + Json.num(run.seconds)
                  + " s, "
                  + run.signature
                  + "; "
                  + run.incidentsJson());
        } else {
          out.println(text);
        }
      }
    }
    return process.waitFor();
  }

  /** Restarts server 0 on a thread of its own: the driver's output must go on being read. */
  private void restartOnItsOwnThread(BenchServers servers) {
    if (restart != null) {
      return;
    }
    restart = new CompletableFuture<>();
    Thread thread =
        new Thread(
            () -> {
              try {
                restart.complete(servers.restart(0, Math.round(options.downSeconds * 1000)));
              } catch (IOException | RuntimeException e) {
                restart.completeExceptionally(e);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                restart.completeExceptionally(e);
              }
            },
            "server-restart");
    thread.setDaemon(true);
    thread.start();
  }
}
