package io.sluice.benchmarks;

import com.beust.jcommander.JCommander;
import com.beust.jcommander.ParameterException;
import com.codahale.metrics.MetricRegistry;
import io.sluice.client.ClientConf;
import io.sluice.client.ClientContext;
import io.sluice.client.coordinator.CoordinatorClient;
import io.sluice.client.coordinator.ShuffleCoordinator;
import io.sluice.common.Clock;
import io.sluice.common.SluiceConf;
import io.sluice.network.NetworkConf;
import io.sluice.server.ServerConf;
import io.sluice.server.ShuffleServer;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;

/**
 * {@code shuffle-bench server}: the whole push → commit → read path of one in-process shuffle
 * server, against the raw write+fsync rate of the same directory measured in the same run. For each
 * pusher count it runs one shuffle with that many concurrent map tasks, verifies every record read
 * back, and reports ingest and read rates and CPU per GiB. The last line printed is one JSON
 * object.
 */
public final class ServerBenchmark {
  static final String NAME = "server";
  static final String DESCRIPTION =
      "push, commit and read back one in-process server; compare with raw disk write+fsync";

  private final ServerBenchmarkOptions options;
  private final PrintStream out;

  private ServerBenchmark(ServerBenchmarkOptions options, PrintStream out) {
    this.options = options;
    this.out = out;
  }

  /**
   * Runs the benchmark.
   *
   * @return the exit code: 0 when every run verified, 1 when one did not, 2 for bad options
   */
  public static int run(String[] args, PrintStream out, PrintStream err) {
    ServerBenchmarkOptions options = new ServerBenchmarkOptions();
    JCommander jc =
        JCommander.newBuilder().programName("shuffle-bench " + NAME).addObject(options).build();
    try {
      jc.parse(args);
      if (options.help) {
        out.print(usage(jc));
        return 0;
      }
      options.validate();
    } catch (ParameterException e) {
      err.println("shuffle-bench " + NAME + ": " + e.getMessage());
      err.print(usage(jc));
      return 2;
    }
    try {
      return new ServerBenchmark(options, out).run() ? 0 : 1;
    } catch (IOException | RuntimeException e) {
      err.println("shuffle-bench " + NAME + " failed: " + e);
      e.printStackTrace(err);
      return 1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      err.println("shuffle-bench " + NAME + " interrupted");
      return 1;
    }
  }

  private static String usage(JCommander jc) {
    StringBuilder s = new StringBuilder();
    jc.getUsageFormatter().usage(s);
    return s.toString();
  }

  private boolean run() throws IOException, InterruptedException {
    boolean ownDir = options.dir == null;
    Path dir =
        ownDir
            ? Files.createTempDirectory(
                Paths.get(System.getProperty("java.io.tmpdir")), "sluice-bench-")
            : Files.createDirectories(Paths.get(options.dir).toAbsolutePath());
    try {
      return run(dir);
    } finally {
      if (ownDir) {
        deleteRecursively(dir);
      }
    }
  }

  private boolean run(Path dir) throws IOException, InterruptedException {
    List<Integer> pusherCounts = options.pusherCounts();
    printSetup(dir, pusherCounts);
    RawDiskBaseline rawBefore = RawDiskBaseline.measure(dir, options.sizeBytes);
    out.println("raw disk (before the shuffles): " + rawBefore);

    SluiceConf conf =
        SluiceConf.of(options.settings())
            .with(
                Map.of(
                    ServerConf.HOST.name(),
                    "127.0.0.1",
                    ServerConf.PORT.name(),
                    "0",
                    ServerConf.DIRS.name(),
                    dir.toString(),
                    ServerConf.MEMORY_MAX.name(),
                    Long.toString(options.memoryBytes),
                    ClientConf.COMPRESSION.name(),
                    options.compression));
    String appId = "sluice-bench-" + ProcessHandle.current().pid();
    CpuMeter cpu = new CpuMeter();
    List<RoundResult> results = new ArrayList<>();
    long memoryPeak;
    boolean warmupVerified = true;
    try (ShuffleServer server =
            new ShuffleServer(
                new ServerConf(conf), new NetworkConf(conf), new MetricRegistry(), Clock.SYSTEM);
        ClientContext context = new ClientContext(conf);
        ShuffleCoordinator coordinator =
            new ShuffleCoordinator(
                appId,
                List.of(ClientContext.address("127.0.0.1", server.port())),
                context,
                "127.0.0.1")) {
      ShuffleRound round =
          new ShuffleRound(
              context,
              coordinator,
              new CoordinatorClient(
                  context, ClientContext.address("127.0.0.1", coordinator.port())),
              new Records(options.seed),
              cpu,
              server.metrics(),
              options.partitions,
              options.readers);
      int shuffleId = 0;
      if (options.warmupBytes > 0) {
        int pushers = pusherCounts.get(pusherCounts.size() - 1);
        out.printf(
            Locale.ROOT,
            "warmup: %d pushers, %s (not reported)%n",
            pushers,
            size(options.warmupBytes));
        RoundResult warm = runRound(round, shuffleId++, pushers, options.warmupBytes);
        warmupVerified = warm.verified();
        for (String problem : warm.problems()) {
          out.println("warmup: " + problem);
        }
      }
      for (int pushers : pusherCounts) {
        out.printf(Locale.ROOT, "run: %d pushers, %s%n", pushers, size(options.sizeBytes));
        results.add(runRound(round, shuffleId++, pushers, options.sizeBytes));
      }
      memoryPeak = server.memory().peak();
    }
    RawDiskBaseline rawAfter = RawDiskBaseline.measure(dir, options.sizeBytes);
    out.println("raw disk (after the shuffles): " + rawAfter);
    double rawDiskMBps = Math.max(rawBefore.mbps(), rawAfter.mbps());
    printResults(results, rawDiskMBps, cpu.serverCpuSupported(), memoryPeak);
    boolean verified = warmupVerified && results.stream().allMatch(RoundResult::verified);
    out.println(
        toJson(
            results,
            rawBefore.mbps(),
            rawAfter.mbps(),
            rawDiskMBps,
            memoryPeak,
            warmupVerified,
            verified));
    out.flush();
    return verified;
  }

  private static RoundResult runRound(ShuffleRound round, int shuffleId, int pushers, long bytes)
      throws InterruptedException {
    try {
      return round.run(shuffleId, pushers, bytes);
    } catch (IOException | RuntimeException e) {
      return RoundResult.failed(pushers, e.toString());
    }
  }

  private static String size(long bytes) {
    if (bytes % (1L << 30) == 0) {
      return bytes / (1L << 30) + " GiB";
    }
    if (bytes % (1L << 20) == 0) {
      return bytes / (1L << 20) + " MiB";
    }
    return String.format(Locale.ROOT, "%.1f MiB", bytes / RoundResult.MIB);
  }

  private void printSetup(Path dir, List<Integer> pusherCounts) {
    out.printf(
        Locale.ROOT,
        "shuffle-bench server: %s per run, %d partitions, pushers %s, compression %s,"
            + " server memory %s, %d reader threads%n",
        size(options.sizeBytes),
        options.partitions,
        pusherCounts,
        options.compression,
        size(options.memoryBytes),
        options.readers);
    if (!options.conf.isEmpty()) {
      out.println("settings: " + options.settings());
    }
    out.printf(
        Locale.ROOT,
        "data dir %s; %d CPUs; JVM %s%n",
        dir,
        Runtime.getRuntime().availableProcessors(),
        System.getProperty("java.version"));
  }

  private void printResults(
      List<RoundResult> results, double rawDiskMBps, boolean serverCpu, long memoryPeak) {
    out.println();
    out.println(RoundResult.tableHeader());
    for (RoundResult r : results) {
      out.println(r.tableRow(rawDiskMBps));
    }
    out.println();
    for (RoundResult r : results) {
      for (String problem : r.problems()) {
        out.println("pushers " + r.pushers + ": " + problem);
      }
    }
    out.printf(
        Locale.ROOT,
        "raw disk: %.1f MB/s (FileChannel.write of 1 MiB direct buffers + fsync, %s, the better of"
            + " before and after the shuffles); peak server memory held %s%n",
        rawDiskMBps,
        size(options.sizeBytes),
        size(memoryPeak));
    out.println(
        "MB = 2^20 bytes. push = first write until the last finish() returned (all pushes"
            + " acknowledged); ingest = first write until the shuffle is committed (flushed and"
            + " fsynced), which is what the raw write+fsync rate compares with.");
    out.println(
        "Client and server share this JVM: 'proc CPU' is the whole process (map tasks generating"
            + " and copying records, readers verifying them, GC, JIT); 'srv CPU' counts only the"
            + " server's threads (sluice-server-*, sluice-flusher-*, sluice-housekeeping)"
            + (serverCpu ? "." : ", which this JVM cannot measure."));
    out.println(
        "Reads come from the page cache: the data was just written and dropping caches is not"
            + " available here. Compression "
            + options.compression
            + (options.compression.equals("none")
                ? " (the payload is random-ish and would not compress)."
                : " (the payload is random-ish; lz4 costs CPU and saves little)."));
  }

  private String toJson(
      List<RoundResult> results,
      double rawBefore,
      double rawAfter,
      double rawDiskMBps,
      long memoryPeak,
      boolean warmupVerified,
      boolean verified) {
    RoundResult headline =
        results.stream()
            .filter(r -> r.failure == null)
            .max(Comparator.comparingInt((RoundResult r) -> r.pushers))
            .orElse(results.get(results.size() - 1));
    RoundResult best =
        results.stream()
            .filter(r -> r.failure == null)
            .max(Comparator.comparingDouble(RoundResult::ingestMBps))
            .orElse(headline);
    StringBuilder s = new StringBuilder("{\"benchmark\":\"server\"");
    s.append(",\"sizeBytes\":").append(options.sizeBytes);
    s.append(",\"partitions\":").append(options.partitions);
    s.append(",\"compression\":").append(Json.str(options.compression));
    s.append(",\"memoryMaxBytes\":").append(options.memoryBytes);
    s.append(",\"readers\":").append(options.readers);
    s.append(",\"headline\":\"largest pusher count\"");
    s.append(",\"headlinePushers\":").append(headline.pushers);
    s.append(",\"ingestMBps\":").append(Json.num(headline.ingestMBps()));
    s.append(",\"pushMBps\":").append(Json.num(headline.pushMBps()));
    s.append(",\"readMBps\":").append(Json.num(headline.readMBps()));
    s.append(",\"rawDiskMBps\":").append(Json.num(rawDiskMBps));
    s.append(",\"rawDiskMBpsBefore\":").append(Json.num(rawBefore));
    s.append(",\"rawDiskMBpsAfter\":").append(Json.num(rawAfter));
    s.append(",\"ratio\":").append(Json.num(headline.ingestMBps() / rawDiskMBps));
    s.append(",\"bestIngestPushers\":").append(best.pushers);
    s.append(",\"bestIngestMBps\":").append(Json.num(best.ingestMBps()));
    s.append(",\"serverMemoryPeakBytes\":").append(memoryPeak);
    s.append(",\"clientInSameJvm\":true,\"readsFromPageCache\":true,\"unit\":\"MB=2^20 bytes\"");
    s.append(",\"warmupBytes\":").append(options.warmupBytes);
    s.append(",\"warmupVerified\":").append(warmupVerified);
    s.append(",\"verified\":").append(verified);
    s.append(",\"runs\":[");
    for (int i = 0; i < results.size(); i++) {
      s.append(i == 0 ? "" : ",").append(results.get(i).toJson(rawDiskMBps));
    }
    return s.append("]}").toString();
  }

  private static void deleteRecursively(Path dir) throws IOException {
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path p : (Iterable<Path>) paths.sorted(Comparator.reverseOrder())::iterator) {
        Files.deleteIfExists(p);
      }
    }
  }
}
