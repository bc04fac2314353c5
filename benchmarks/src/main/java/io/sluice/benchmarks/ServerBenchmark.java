package io.sluice.benchmarks;

import com.beust.jcommander.JCommander;
import com.beust.jcommander.ParameterException;
import io.sluice.auth.AuthConf;
import io.sluice.common.SluiceConf;
import io.sluice.network.NetworkConf;
import io.sluice.network.Transports;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code shuffle-bench server}: the whole push → commit → read path of one in-process shuffle
 * server, against the raw write+fsync rate of the same directory measured in the same run. For each
 * pusher count it runs one shuffle with that many concurrent map tasks, verifies every record read
 * back, and reports ingest and read rates and CPU per GiB. With {@code --checksums both} it does
 * all that twice, without and with batch checksums, and compares the two; with {@code --auth} and
 * {@code --tls}, it compares plain connections with authenticated ones and with TLS. The last line
 * printed is one JSON object.
 *
 * <p><b>Replication.</b> {@code --replication 2} starts two servers (data directories {@code
 * server-0} and {@code server-1} under the work directory) and writes every split with {@code
 * sluice.replication.factor} 2: a primary on one server, a replica on the other. {@code
 * --replication both} runs factor 1 and factor 2 on the same two servers (two applications, their
 * rounds taking turns), so placement spreads the primaries over both servers alike, and reports per
 * pusher count the push + commit time of factor 2 over factor 1 ({@code replicationRatio}), the
 * ingest and read rates, both servers' CPU per GiB written, the rest of the process's CPU (the map
 * tasks: "client CPU") and the bytes each server took, of which replica copies ({@code
 * sluice.server.bytesPushed}, {@code sluice.server.replicaBytesPushed}). Reads are verified in both
 * runs; with factor 2 a reader reads one copy.
 *
 * <p>Where factor 2's cost goes: the client writes every batch to two sockets (the same buffer, no
 * extra copy in the JVM, but twice the bytes through the kernel and loopback: more client CPU);
 * every byte is decoded, buffered, flushed and fsynced by two servers instead of one (server CPU
 * per GiB of records at least doubles, and so do disk writes and the commit's fsyncs); and a batch
 * is acknowledged only when both servers answered, so a map task waits for the slower of the two.
 * Here client, both servers and the disk share one machine, so every one of those costs comes out
 * of the same cores, and {@code replicationRatio} can exceed 2; on separate hosts the servers' work
 * runs in parallel and the second copy costs the client's network bandwidth instead.
 *
 * <p>Data path: the client pushes to both copies. The other design, the primary forwarding each
 * batch to the replica (Celeborn's), would halve what a map task sends, at the cost of a second
 * network hop before the acknowledgement, the primary's CPU to send every byte on, and
 * server-to-server connections with credentials of their own (with {@code sluice.auth.*} a server
 * would need to push as the application). It is not built; this benchmark measures the client path.
 */
public final class ServerBenchmark {
  static final String NAME = "server";

  /**
   * Authentication for the --auth run: the benchmark's coordinator registers, its client proves.
   */
  private static final Map<String, String> AUTH_SETTINGS =
      Map.of(
          AuthConf.ENABLED.name(), "true",
          AuthConf.CLUSTER_SECRET.name(), "shuffle-bench-cluster-secret-0123456789",
          AuthConf.APP_SECRET.name(), "shuffle-bench-application-secret-0123456789");

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
    try (BenchDirectory dir = BenchDirectory.open(options.dir, "sluice-bench-")) {
      return run(dir.path());
    }
  }

  private boolean run(Path dir) throws IOException, InterruptedException {
    List<Integer> pusherCounts = options.pusherCounts();
    printSetup(dir, pusherCounts);
    RawDiskBaseline rawBefore = RawDiskBaseline.measure(dir, options.sizeBytes);
    out.println("raw disk (before the shuffles): " + rawBefore);
    List<ChecksumRun> runs = runShuffles(dir, pusherCounts);
    RawDiskBaseline rawAfter = RawDiskBaseline.measure(dir, options.sizeBytes);
    out.println("raw disk (after the shuffles): " + rawAfter);
    double rawDiskMBps = Math.max(rawBefore.mbps(), rawAfter.mbps());
    for (ChecksumRun run : runs) {
      if (options.securityRuns().size() > 1) {
        out.println();
        out.println(run.security.description + ":");
      } else if (options.replicationRuns().size() > 1) {
        out.println();
        out.println("replication factor " + run.replicationFactor + ":");
      } else if (runs.size() > 1) {
        out.println();
        out.println("checksums " + run.describe() + ":");
      }
      printResults(run.results, rawDiskMBps, run.serverCpuSupported, run.memoryPeak);
    }
    if (options.securityRuns().size() > 1) {
      for (ChecksumRun run : runs.subList(1, runs.size())) {
        out.println();
        out.println(ChecksumRun.securityComparison(runs.get(0), run));
      }
    } else if (options.replicationRuns().size() > 1) {
      out.println();
      new ReplicationReport(runs.get(0), runs.get(1)).lines().forEach(out::println);
    } else if (runs.size() > 1) {
      out.println();
      out.println(ChecksumRun.comparison(runs.get(0), runs.get(1)));
    }
    boolean verified = runs.stream().allMatch(ChecksumRun::verified);
    if (options.chart != null) {
      ChartOption.write(chart(options, runs, rawDiskMBps), Paths.get(options.chart), out);
    }
    out.println(toJson(runs, rawBefore.mbps(), rawAfter.mbps(), rawDiskMBps, verified));
    out.flush();
    return verified;
  }

  /**
   * Runs the warmup and one shuffle per pusher count for each checksum setting ({@code
   * --checksums}), connection security ({@code --auth}, {@code --tls}) and replication factor
   * ({@code --replication}). With both, the two settings have a server each, open side by side, and
   * their rounds take turns (off then on for the first pusher count, on then off for the next,
   * ...), so a change in what else runs on the machine hits both alike. The idle server's threads
   * count in the other's server CPU; idle, they use next to none.
   */
  private List<ChecksumRun> runShuffles(Path dir, List<Integer> pusherCounts)
      throws IOException, InterruptedException {
    List<Boolean> settings = options.checksumRuns();
    List<WireSecurity> securityRuns = options.securityRuns();
    CpuMeter cpu = new CpuMeter();
    List<ChecksumSetup> setups = new ArrayList<>();
    try {
      Map<String, String> tlsSettings =
          options.tls ? BenchCertificates.create(dir.resolve("certificates")) : Map.of();
      for (boolean checksums : settings) {
        for (WireSecurity security : securityRuns) {
          Path setupDir = dir;
          if (settings.size() > 1) {
            setupDir = dir.resolve(checksums ? "checksums-on" : "checksums-off");
          } else if (securityRuns.size() > 1) {
            setupDir = dir.resolve(security.key);
          }
          Map<String, String> securitySettings =
              security == WireSecurity.TLS
                  ? tlsSettings
                  : security == WireSecurity.AUTH ? AUTH_SETTINGS : Map.of();
          List<Integer> factors = options.replicationRuns();
          ChecksumSetup first =
              ChecksumSetup.open(
                  options, setupDir, checksums, security, securitySettings, factors.get(0), cpu);
          setups.add(first);
          for (int factor : factors.subList(1, factors.size())) {
            // --replication both: factor 2 on factor 1's servers, so placement spreads alike
            setups.add(first.sharing(options, factor, cpu));
          }
        }
      }
      if (options.warmupBytes > 0) {
        int pushers = pusherCounts.get(pusherCounts.size() - 1);
        for (ChecksumSetup setup : setups) {
          out.printf(
              Locale.ROOT,
              "warmup%s: %d pushers, %s (not reported)%n",
              label(setup),
              pushers,
              size(options.warmupBytes));
          RoundResult warm = setup.round(pushers, options.warmupBytes);
          setup.run.warmupVerified = warm.verified();
          for (String problem : warm.problems()) {
            out.println("warmup: " + problem);
          }
        }
      }
      for (int i = 0; i < pusherCounts.size(); i++) {
        int pushers = pusherCounts.get(i);
        for (int k = 0; k < setups.size(); k++) {
          ChecksumSetup setup = setups.get(i % 2 == 0 ? k : setups.size() - 1 - k);
          out.printf(
              Locale.ROOT,
              "run%s: %d pushers, %s%n",
              label(setup),
              pushers,
              size(options.sizeBytes));
          setup.run.results.add(setup.round(pushers, options.sizeBytes));
        }
      }
    } finally {
      // in reverse: a setup sharing servers closes before the one that owns them
      for (int k = setups.size() - 1; k >= 0; k--) {
        setups.get(k).close();
      }
    }
    List<ChecksumRun> runs = new ArrayList<>();
    for (ChecksumSetup setup : setups) {
      runs.add(setup.run);
    }
    return runs;
  }

  private String label(ChecksumSetup setup) {
    String name = runName(options, setup.run);
    return name.isEmpty() ? "" : " (" + name + ")";
  }

  /** What sets {@code run} apart from the others compared in the same benchmark; "" if alone. */
  private static String runName(ServerBenchmarkOptions options, ChecksumRun run) {
    if (options.securityRuns().size() > 1) {
      return run.security.key;
    }
    if (options.replicationRuns().size() > 1) {
      return "factor " + run.replicationFactor;
    }
    return options.checksumRuns().size() > 1 ? "checksums " + (run.checksums ? "on" : "off") : "";
  }

  /**
   * The chart of the result table: per pusher count (and, when runs are compared, per run, side by
   * side) the raw disk rate of the same run, then Sluice's push, ingest and read MB/s.
   */
  static BarChart chart(
      ServerBenchmarkOptions options, List<ChecksumRun> runs, double rawDiskMBps) {
    BarChart chart =
        new BarChart(
            String.format(
                Locale.ROOT,
                "shuffle-bench server: MB/s per pusher count (%s per run, %d partitions,"
                    + " compression %s, checksums %s, replication %s, %d CPUs)",
                size(options.sizeBytes),
                options.partitions,
                options.compression,
                options.checksums,
                options.replication,
                Runtime.getRuntime().availableProcessors()),
            "MB/s (MB = 2^20 bytes)",
            List.of("raw disk write+fsync", "sluice push", "sluice ingest", "sluice read"));
    int rounds = runs.stream().mapToInt(r -> r.results.size()).max().orElse(0);
    for (int i = 0; i < rounds; i++) {
      for (ChecksumRun run : runs) {
        if (i >= run.results.size()) {
          continue;
        }
        RoundResult r = run.results.get(i);
        String name = runName(options, run);
        chart.group(
            r.pushers
                + (r.pushers == 1 ? " pusher" : " pushers")
                + (name.isEmpty() ? "" : ", " + name),
            rawDiskMBps,
            r.pushMBps(),
            r.ingestMBps(),
            r.readMBps());
      }
    }
    return chart;
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
        "shuffle-bench server: %s per run, %d partitions, pushers %s, %d map task(s) per pusher,"
            + " records of up to %d bytes, compression %s, checksums %s%s, replication %s (%d"
            + " server%s), server memory %s each, %d reader threads reading %d partition(s)"
            + " each%n",
        size(options.sizeBytes),
        options.partitions,
        pusherCounts,
        options.mapsPerPusher,
        options.recordBytes,
        options.compression,
        options.checksums,
        options.securityRuns().size() > 1 ? ", connections " + options.securityRuns() : "",
        options.replication,
        options.serverCount(),
        options.serverCount() > 1 ? "s" : "",
        size(options.memoryBytes),
        options.readers,
        options.partitionsPerReader);
    if (!options.conf.isEmpty()) {
      out.println("settings: " + options.settings());
    }
    out.printf(
        Locale.ROOT,
        "data dir %s; %d CPUs; JVM %s; %s transport%n",
        dir,
        Runtime.getRuntime().availableProcessors(),
        System.getProperty("java.version"),
        transport());
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
            + " before and after the shuffles); peak memory held by a server %s%n",
        rawDiskMBps,
        size(options.sizeBytes),
        size(memoryPeak));
    out.println(
        "MB = 2^20 bytes. push = first write until the last finish() returned (all pushes"
            + " acknowledged); ingest = first write until the shuffle is committed (flushed and"
            + " fsynced), which is what the raw write+fsync rate compares with; commit = the part"
            + " of ingest after the last push (commitSeconds in the JSON).");
    out.println(
        "Client and server share this JVM: 'proc CPU' is the whole process (map tasks generating"
            + " and copying records, readers verifying them, GC, JIT); 'srv CPU' counts only the"
            + " servers' threads (sluice-server-*, sluice-flusher-*, sluice-writeback-*,"
            + " sluice-housekeeping, sluice-chunk-reader-*)"
            + (serverCpu ? "." : ", which this JVM cannot measure."));
    out.println(
        "Reads come from the page cache: the data was just written and dropping caches is not"
            + " available here. Compression "
            + options.compression
            + (options.compression.equals("none")
                ? " (the payload is random-ish and would not compress)."
                : " (the payload is random-ish; lz4 costs CPU and saves little)."));
  }

  /** "epoll" or "nio": what the servers run on in this JVM. */
  private String transport() {
    return Transports.name(new NetworkConf(SluiceConf.of(options.settings())));
  }

  private String toJson(
      List<ChecksumRun> runs,
      double rawBefore,
      double rawAfter,
      double rawDiskMBps,
      boolean verified) {
    // the headline is the last run: with checksums on when both ran, over TLS with --tls, with
    // factor 2 for --replication both
    ChecksumRun last = runs.get(runs.size() - 1);
    List<RoundResult> results = last.results;
    // of equal pusher counts, the last: the most warmed up
    RoundResult headline =
        results.stream()
            .filter(r -> r.failure == null)
            .reduce((a, b) -> b.pushers >= a.pushers ? b : a)
            .orElse(results.get(results.size() - 1));
    RoundResult best =
        results.stream()
            .filter(r -> r.failure == null)
            .max(Comparator.comparingDouble(RoundResult::ingestMBps))
            .orElse(headline);
    StringBuilder s = new StringBuilder("{\"benchmark\":\"server\"");
    s.append(",\"sizeBytes\":").append(options.sizeBytes);
    s.append(",\"partitions\":").append(options.partitions);
    s.append(",\"mapsPerPusher\":").append(options.mapsPerPusher);
    s.append(",\"recordBytes\":").append(options.recordBytes);
    s.append(",\"partitionsPerReader\":").append(options.partitionsPerReader);
    s.append(",\"serverCpuMicrosPerBatch\":").append(Json.num(headline.serverCpuMicrosPerBatch()));
    s.append(",\"compression\":").append(Json.str(options.compression));
    s.append(",\"checksums\":").append(Json.str(options.checksums));
    s.append(",\"verifyOnPush\":").append(last.verifyOnPush);
    s.append(",\"memoryMaxBytes\":").append(options.memoryBytes);
    s.append(",\"readers\":").append(options.readers);
    s.append(",\"headline\":\"largest pusher count, its last run\"");
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
    s.append(",\"serverMemoryPeakBytes\":").append(last.memoryPeak);
    s.append(",\"serverTransport\":").append(Json.str(transport()));
    s.append(",\"clientInSameJvm\":true,\"readsFromPageCache\":true,\"unit\":\"MB=2^20 bytes\"");
    s.append(",\"warmupBytes\":").append(options.warmupBytes);
    s.append(",\"warmupVerified\":").append(last.warmupVerified);
    s.append(",\"verified\":").append(verified);
    s.append(",\"runs\":[");
    for (int i = 0; i < results.size(); i++) {
      s.append(i == 0 ? "" : ",").append(results.get(i).toJson(rawDiskMBps));
    }
    s.append(']');
    s.append(",\"replication\":").append(Json.str(options.replication));
    s.append(",\"servers\":").append(options.serverCount());
    s.append(",\"tls\":").append(options.tls);
    s.append(",\"auth\":").append(options.auth);
    if (options.securityRuns().size() > 1) {
      ChecksumRun plain = runs.get(0);
      s.append(",\"plainRun\":").append(plain.toJson(rawDiskMBps));
      for (ChecksumRun run : runs.subList(1, runs.size())) {
        String k = run.security.key;
        s.append(",\"").append(k).append("Run\":").append(run.toJson(rawDiskMBps));
        s.append(",\"").append(k).append("IngestRatio\":");
        s.append(Json.num(run.ingestMBps() / plain.ingestMBps()));
        s.append(",\"").append(k).append("ReadRatio\":");
        s.append(Json.num(run.readMBps() / plain.readMBps()));
        s.append(",\"").append(k).append("ServerCpuRatio\":");
        s.append(Json.num(run.serverCpuSecPerGiB() / plain.serverCpuSecPerGiB()));
        s.append(",\"").append(k).append("ProcessCpuRatio\":");
        s.append(Json.num(run.processCpuSecPerGiB() / plain.processCpuSecPerGiB()));
      }
    } else if (options.replicationRuns().size() > 1) {
      s.append(new ReplicationReport(runs.get(0), runs.get(1)).json(rawDiskMBps));
    } else if (runs.size() > 1) {
      ChecksumRun off = runs.get(0);
      ChecksumRun on = runs.get(1);
      s.append(",\"checksumsOff\":").append(off.toJson(rawDiskMBps));
      s.append(",\"checksumsOn\":").append(on.toJson(rawDiskMBps));
      s.append(",\"serverCpuRatio\":")
          .append(Json.num(on.serverCpuSecPerGiB() / off.serverCpuSecPerGiB()));
      s.append(",\"processCpuRatio\":")
          .append(Json.num(on.processCpuSecPerGiB() / off.processCpuSecPerGiB()));
      s.append(",\"ingestRatio\":").append(Json.num(on.ingestMBps() / off.ingestMBps()));
      s.append(",\"readRatio\":").append(Json.num(on.readMBps() / off.readMBps()));
    }
    return s.append('}').toString();
  }
}
