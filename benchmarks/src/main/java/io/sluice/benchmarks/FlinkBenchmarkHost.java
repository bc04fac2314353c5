package io.sluice.benchmarks;

import com.codahale.metrics.MetricRegistry;
import io.sluice.common.Clock;
import io.sluice.common.SluiceConf;
import io.sluice.network.NetworkConf;
import io.sluice.server.ServerConf;
import io.sluice.server.ShuffleServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The benchmark's own JVM in {@code shuffle-bench flink}: runs the Sluice server, then the jobs of
 * each Flink line asked for in a child JVM on that line's class path, passing their output through,
 * and prints the JSON object of every line's workloads last.
 */
final class FlinkBenchmarkHost {
  private final FlinkBenchmark.Options options;
  private final PrintStream out;

  FlinkBenchmarkHost(FlinkBenchmark.Options options, PrintStream out) {
    this.options = options;
    this.out = out;
  }

  /** The lines to run, checked before anything starts. */
  private List<String> lines() {
    if (options.allLines) {
      return new ArrayList<>(FlinkBenchmark.LINES.keySet());
    }
    String line = options.flinkLine.trim();
    if (!FlinkBenchmark.LINES.containsKey(line)) {
      throw new IllegalArgumentException(
          "--flink-line must be one of " + FlinkBenchmark.LINES.keySet() + ", not " + line);
    }
    return List.of(line);
  }

  int run(String[] args) throws IOException, InterruptedException {
    List<String> lines = lines();
    Map<String, String> serverSettings = BenchmarkCli.settings("--server-conf", options.serverConf);
    BenchmarkCli.settings("--client-conf", options.clientConf);
    List<String> classpaths = new ArrayList<>();
    for (String line : lines) {
      classpaths.add(BenchmarkCli.lineClasspath(FlinkBenchmark.LINES.get(line)));
    }
    Path dir = Files.createDirectories(Path.of(options.dir));
    List<String> workloads = new ArrayList<>();
    int exit = 0;
    try (ShuffleServer server = startServer(dir, serverSettings)) {
      for (int i = 0; i < lines.size(); i++) {
        int code = runLine(classpaths.get(i), "127.0.0.1:" + server.port(), args, workloads);
        if (code != 0) {
          out.println("# the jobs on Flink " + lines.get(i) + " exited with " + code);
          exit = exit == 0 ? code : exit;
        }
      }
      out.printf(
          Locale.ROOT,
          "# Sluice server: %d of %d map partition reads continued forward in their file%n",
          server.metrics().mapReadsInOrder().getCount(),
          server.metrics().mapReads().getCount());
    }
    out.println("{\"benchmark\":\"flink\",\"workloads\":[" + String.join(",", workloads) + "]}");
    return exit;
  }

  /**
   * Runs the jobs in a child JVM on {@code classpath}; passes its output through and collects its
   * workloads' JSON lines.
   */
  private int runLine(String classpath, String servers, String[] args, List<String> workloads)
      throws IOException, InterruptedException {
    List<String> jvmOptions = new ArrayList<>();
    jvmOptions.add("-D" + FlinkBenchmark.CHILD + "=true");
    jvmOptions.add("-D" + FlinkBenchmark.SERVERS + "=" + servers);
    jvmOptions.add("-D" + FlinkBenchmark.ALL_LINES + "=" + options.allLines);
    // the child's two clusters take 1 GiB of network buffers (direct memory, bounded by the heap
    // size by default) besides their heaps: at least 2 GiB, however small this JVM's heap is
    if (Runtime.getRuntime().maxMemory() < (2L << 30)) {
      jvmOptions.add("-Xmx2g");
    }
    // Flink logs its own noise at WARN (and log4j complains about its message patterns); the
    // benchmark's log file keeps everything
    jvmOptions.add("-Dsluice.console.level=ERROR");
    jvmOptions.add("-Dlog4j2.StatusLogger.level=OFF");
    jvmOptions.add("-Dsluice.log.status=off");
    Process child =
        BenchmarkCli.childJvm(FlinkBenchmark.NAME, jvmOptions, classpath, args)
            .redirectOutput(ProcessBuilder.Redirect.PIPE)
            .start();
    try (BufferedReader lines =
        new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
      String text;
      while ((text = lines.readLine()) != null) {
        if (text.startsWith("{\"workload\"")) {
          workloads.add(text);
        }
        out.println(text);
      }
    }
    return child.waitFor();
  }

  private static ShuffleServer startServer(Path dir, Map<String, String> settings)
      throws IOException {
    Path data = Files.createDirectories(dir.resolve("data"));
    Map<String, String> all = new LinkedHashMap<>();
    all.put("sluice.server.host", "127.0.0.1");
    all.put("sluice.server.port", "0");
    all.put("sluice.metrics.port", "-1");
    all.put("sluice.server.dirs", data.toString());
    all.put("sluice.memory.max", "512m");
    all.putAll(settings);
    SluiceConf conf = SluiceConf.of(all);
    return new ShuffleServer(
        new ServerConf(conf), new NetworkConf(conf), new MetricRegistry(), Clock.SYSTEM);
  }
}
