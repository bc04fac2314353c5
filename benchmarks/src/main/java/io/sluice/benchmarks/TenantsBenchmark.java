package io.sluice.benchmarks;

import com.beust.jcommander.JCommander;
import com.beust.jcommander.Parameter;
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
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * {@code shuffle-bench tenants}: a noisy neighbour. One application pushes far more than {@code
 * sluice.memory.max} as fast as it can while a small application runs short shuffles against the
 * same server; each application has its own client (its own connections), as two jobs on a cluster
 * do. Reports the small application's shuffle time alone and beside the heavy one, the heavy one's
 * ingest alone and beside the small one, and the peak of held memory.
 */
public final class TenantsBenchmark {
  static final String NAME = "tenants";
  static final String DESCRIPTION =
      "a small application's short shuffles beside a heavy writer on one server, against alone";

  /** Options. */
  static final class Options {
    @Parameter(names = "--heavy-size", description = "Bytes the heavy application pushes")
    String heavySize = "2g";

    @Parameter(names = "--heavy-pushers", description = "The heavy application's map tasks")
    int heavyPushers = 8;

    @Parameter(names = "--small-size", description = "Bytes of each of the small shuffles")
    String smallSize = "16m";

    @Parameter(names = "--small-pushers", description = "Map tasks of each small shuffle")
    int smallPushers = 4;

    @Parameter(names = "--small-shuffles", description = "Small shuffles measured alone")
    int smallShuffles = 5;

    @Parameter(names = "--memory", description = "sluice.memory.max of the server")
    String memory = "64m";

    @Parameter(
        names = "--dir",
        description = "Data directory (default: a fresh one under java.io.tmpdir, deleted after)")
    String dir;

    @Parameter(names = "--help", help = true, description = "Show the options")
    boolean help;
  }

  /** One application: its own client, coordinator and shuffles. */
  private static final class Tenant implements AutoCloseable {
    final ClientContext context;
    final ShuffleCoordinator coordinator;
    final ShuffleRound round;
    int nextShuffle;

    Tenant(String appId, SluiceConf conf, ShuffleServer server, int partitions, int readers)
        throws IOException {
      context = new ClientContext(conf);
      coordinator =
          new ShuffleCoordinator(
              appId,
              List.of(ClientContext.address("127.0.0.1", server.port())),
              context,
              "127.0.0.1");
      round =
          new ShuffleRound(
              context,
              coordinator,
              new CoordinatorClient(
                  context, appId, ClientContext.address("127.0.0.1", coordinator.port())),
              new Records(appId.hashCode()),
              new CpuMeter(),
              List.of(server.metrics()),
              partitions,
              readers,
              1,
              1);
    }

    RoundResult shuffle(int pushers, long bytes) {
      try {
        return round.run(nextShuffle++, pushers, bytes);
      } catch (IOException | RuntimeException e) {
        return RoundResult.failed(pushers, e.toString());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return RoundResult.failed(pushers, "interrupted");
      }
    }

    @Override
    public void close() throws IOException {
      try {
        coordinator.close();
      } finally {
        context.close();
      }
    }
  }

  private TenantsBenchmark() {}

  public static int run(String[] args, PrintStream out, PrintStream err) {
    Options o = new Options();
    JCommander jc =
        JCommander.newBuilder().programName("shuffle-bench " + NAME).addObject(o).build();
    long heavySize;
    long smallSize;
    long memory;
    try {
      jc.parse(args);
      if (o.help) {
        StringBuilder s = new StringBuilder();
        jc.getUsageFormatter().usage(s);
        out.print(s);
        return 0;
      }
      heavySize = ByteSizes.parse("--heavy-size", o.heavySize);
      smallSize = ByteSizes.parse("--small-size", o.smallSize);
      memory = ByteSizes.parse("--memory", o.memory);
      if (o.heavyPushers < 1 || o.smallPushers < 1 || o.smallShuffles < 1) {
        throw new ParameterException(
            "--heavy-pushers, --small-pushers and --small-shuffles must be positive");
      }
      if (memory < (2 << 20)) {
        throw new ParameterException("--memory must be at least 2m, got " + o.memory);
      }
    } catch (ParameterException e) {
      err.println("shuffle-bench " + NAME + ": " + e.getMessage());
      return 2;
    }
    try (BenchDirectory dir = BenchDirectory.open(o.dir, "sluice-tenants-")) {
      return measure(o, dir.path(), heavySize, smallSize, memory, out);
    } catch (IOException | RuntimeException | ExecutionException e) {
      err.println("shuffle-bench " + NAME + " failed: " + e);
      return 1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return 1;
    }
  }

  private static int measure(
      Options o, Path dir, long heavySize, long smallSize, long memory, PrintStream out)
      throws IOException, InterruptedException, ExecutionException {
    SluiceConf conf =
        SluiceConf.of(
            Map.of(
                ServerConf.HOST.name(), "127.0.0.1",
                ServerConf.PORT.name(), "0",
                ServerConf.DIRS.name(), dir.toString(),
                ServerConf.MEMORY_MAX.name(), Long.toString(memory),
                ServerConf.COMMIT_FSYNC.name(), "true",
                ClientConf.COMPRESSION.name(), "none"));
    out.printf(
        Locale.ROOT,
        "shuffle-bench tenants: heavy application %s with %d pushers; small application shuffles"
            + " of %s with %d pushers; one server, memory max %s; %d CPUs%n",
        o.heavySize,
        o.heavyPushers,
        o.smallSize,
        o.smallPushers,
        o.memory,
        Runtime.getRuntime().availableProcessors());
    long pid = ProcessHandle.current().pid();
    try (ShuffleServer server =
            new ShuffleServer(
                new ServerConf(conf), new NetworkConf(conf), new MetricRegistry(), Clock.SYSTEM);
        Tenant heavy = new Tenant("sluice-tenants-heavy-" + pid, conf, server, 200, 2);
        Tenant small = new Tenant("sluice-tenants-small-" + pid, conf, server, 20, 2)) {
      List<RoundResult> all = new ArrayList<>();
      out.println("warmup (not reported)");
      all.add(heavy.shuffle(o.heavyPushers, Math.min(heavySize, 256L << 20)));
      all.add(small.shuffle(o.smallPushers, smallSize));

      out.println("small application alone: " + o.smallShuffles + " shuffles");
      List<RoundResult> smallAlone = new ArrayList<>();
      for (int i = 0; i < o.smallShuffles; i++) {
        smallAlone.add(small.shuffle(o.smallPushers, smallSize));
      }
      out.println("heavy application alone");
      RoundResult heavyAlone = heavy.shuffle(o.heavyPushers, heavySize);

      out.println("both at once: small shuffles while the heavy application pushes");
      long pausedBefore = server.memory().pausedMillis();
      CompletableFuture<RoundResult> heavyRun =
          CompletableFuture.supplyAsync(() -> heavy.shuffle(o.heavyPushers, heavySize));
      // the neighbour is noisy once memory is under pressure
      while (!heavyRun.isDone()
          && server.memory().held() < server.memory().pauseWatermarkBytes() / 2) {
        Thread.sleep(5);
      }
      List<RoundResult> smallBeside = new ArrayList<>();
      while (!heavyRun.isDone()) {
        RoundResult r = small.shuffle(o.smallPushers, smallSize);
        smallBeside.add(r);
        out.printf(
            Locale.ROOT,
            "  small shuffle beside: push %.3f s, commit %.3f s, read %.3f s%n",
            r.pushNanos / 1e9,
            r.commitNanos / 1e9,
            r.readNanos / 1e9);
      }
      RoundResult heavyBeside = heavyRun.get();
      long pausedBeside = server.memory().pausedMillis() - pausedBefore;

      all.addAll(smallAlone);
      all.add(heavyAlone);
      all.addAll(smallBeside);
      all.add(heavyBeside);
      boolean verified = all.stream().allMatch(RoundResult::verified);
      report(
          out,
          new Report(
              median(smallAlone),
              median(smallBeside),
              slowest(smallBeside),
              smallBeside.size(),
              heavyAlone.ingestMBps(),
              heavyBeside.ingestMBps(),
              server.memory().peak(),
              memory,
              pausedBeside,
              verified,
              firstFailure(all)));
      return verified ? 0 : 1;
    }
  }

  /** What the run measured. */
  static final class Report {
    final double smallAloneSec;
    final double smallBesideSec;
    final double smallBesideSlowestSec;
    final int smallBesideCount;
    final double heavyAloneMBps;
    final double heavyBesideMBps;
    final long peakHeldBytes;
    final long memoryMaxBytes;
    final long pausedMillis;
    final boolean verified;
    final String failure;

    Report(
        double smallAloneSec,
        double smallBesideSec,
        double smallBesideSlowestSec,
        int smallBesideCount,
        double heavyAloneMBps,
        double heavyBesideMBps,
        long peakHeldBytes,
        long memoryMaxBytes,
        long pausedMillis,
        boolean verified,
        String failure) {
      this.smallAloneSec = smallAloneSec;
      this.smallBesideSec = smallBesideSec;
      this.smallBesideSlowestSec = smallBesideSlowestSec;
      this.smallBesideCount = smallBesideCount;
      this.heavyAloneMBps = heavyAloneMBps;
      this.heavyBesideMBps = heavyBesideMBps;
      this.peakHeldBytes = peakHeldBytes;
      this.memoryMaxBytes = memoryMaxBytes;
      this.pausedMillis = pausedMillis;
      this.verified = verified;
      this.failure = failure;
    }

    double smallSlowdown() {
      return smallBesideSec / smallAloneSec;
    }

    double heavyThroughputRatio() {
      return heavyBesideMBps / heavyAloneMBps;
    }

    String json() {
      return "{\"benchmark\":\"tenants\""
          + ",\"smallAloneSec\":"
          + Json.num(smallAloneSec)
          + ",\"smallBesideSec\":"
          + Json.num(smallBesideSec)
          + ",\"smallBesideSlowestSec\":"
          + Json.num(smallBesideSlowestSec)
          + ",\"smallShufflesBeside\":"
          + smallBesideCount
          + ",\"smallSlowdown\":"
          + Json.num(smallSlowdown())
          + ",\"heavyAloneMBps\":"
          + Json.num(heavyAloneMBps)
          + ",\"heavyBesideMBps\":"
          + Json.num(heavyBesideMBps)
          + ",\"heavyThroughputRatio\":"
          + Json.num(heavyThroughputRatio())
          + ",\"pausedMillisBeside\":"
          + pausedMillis
          + ",\"peakHeldBytes\":"
          + peakHeldBytes
          + ",\"memoryMaxBytes\":"
          + memoryMaxBytes
          + ",\"withinBound\":"
          + (peakHeldBytes <= memoryMaxBytes)
          + ",\"verified\":"
          + verified
          + "}";
    }
  }

  /** The median whole-shuffle time (push, commit and read) in seconds; NaN when none ran. */
  static double median(List<RoundResult> rounds) {
    double[] secs = seconds(rounds);
    if (secs.length == 0) {
      return Double.NaN;
    }
    int mid = secs.length / 2;
    return secs.length % 2 == 1 ? secs[mid] : (secs[mid - 1] + secs[mid]) / 2;
  }

  /** The slowest whole-shuffle time in seconds; NaN when none ran. */
  static double slowest(List<RoundResult> rounds) {
    double[] secs = seconds(rounds);
    return secs.length == 0 ? Double.NaN : secs[secs.length - 1];
  }

  private static double[] seconds(List<RoundResult> rounds) {
    return rounds.stream()
        .mapToDouble(r -> (r.pushNanos + r.commitNanos + r.readNanos) / 1e9)
        .sorted()
        .toArray();
  }

  private static String firstFailure(List<RoundResult> rounds) {
    for (RoundResult r : rounds) {
      if (r.failure != null) {
        return r.failure;
      }
    }
    return null;
  }

  static void report(PrintStream out, Report r) {
    out.println();
    out.printf(Locale.ROOT, "%-40s %10s %10s %8s%n", "", "alone", "beside", "ratio");
    out.printf(
        Locale.ROOT,
        "%-40s %10.3f %10.3f %8.2f%n",
        "small shuffle, median s (" + r.smallBesideCount + " beside)",
        r.smallAloneSec,
        r.smallBesideSec,
        r.smallSlowdown());
    out.printf(
        Locale.ROOT,
        "%-40s %10s %10.3f%n",
        "small shuffle, slowest s beside",
        "",
        r.smallBesideSlowestSec);
    out.printf(
        Locale.ROOT,
        "%-40s %10.1f %10.1f %8.2f%n",
        "heavy ingest MB/s",
        r.heavyAloneMBps,
        r.heavyBesideMBps,
        r.heavyThroughputRatio());
    out.printf(
        Locale.ROOT,
        "peak held %d of %d bytes (%.3f); pushes paused %.2f s while both ran; verified: %s%n",
        r.peakHeldBytes,
        r.memoryMaxBytes,
        (double) r.peakHeldBytes / r.memoryMaxBytes,
        r.pausedMillis / 1000.0,
        r.verified ? "yes" : "NO (" + r.failure + ")");
    out.println(r.json());
    out.flush();
  }
}
