package io.sluice.benchmarks;

import com.beust.jcommander.JCommander;
import com.beust.jcommander.Parameter;
import com.beust.jcommander.ParameterException;
import com.codahale.metrics.MetricRegistry;
import io.sluice.client.ClientConf;
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
 * do. After a warm-up round, each of {@code --rounds} rounds measures both applications alone, then
 * both at once, so that alone and beside take turns and neither is the cold one. Reports, with
 * their spread over the rounds, the small application's shuffle time alone and beside the heavy
 * one, the heavy one's ingest alone and beside the small one, and the peak of held memory.
 */
public final class TenantsBenchmark {
  static final String NAME = "tenants";
  static final String DESCRIPTION =
      "a small application's short shuffles beside a heavy writer on one server, against alone";

  /** Options. */
  static final class Options {
    @Parameter(names = "--heavy-size", description = "Bytes the heavy application pushes")
    String heavySize = "1g";

    @Parameter(names = "--heavy-pushers", description = "The heavy application's map tasks")
    int heavyPushers = 8;

    @Parameter(names = "--small-size", description = "Bytes of each of the small shuffles")
    String smallSize = "16m";

    @Parameter(names = "--small-pushers", description = "Map tasks of each small shuffle")
    int smallPushers = 4;

    @Parameter(
        names = "--small-shuffles",
        description = "Small shuffles measured alone in each round")
    int smallShuffles = 5;

    @Parameter(
        names = "--rounds",
        description = "Rounds measured, each alone then beside, after one warm-up round")
    int rounds = 5;

    @Parameter(names = "--memory", description = "sluice.memory.max of the server")
    String memory = "64m";

    @Parameter(
        names = "--dir",
        description = "Data directory (default: a fresh one under java.io.tmpdir, deleted after)")
    String dir;

    @Parameter(names = "--help", help = true, description = "Show the options")
    boolean help;
  }

  /** The heavy push of the warm-up round, at most. */
  private static final long WARMUP_HEAVY_BYTES = 512L << 20;

  private static final int WARMUP_SMALL_SHUFFLES = 2;

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
      if (o.heavyPushers < 1 || o.smallPushers < 1 || o.smallShuffles < 1 || o.rounds < 1) {
        throw new ParameterException(
            "--heavy-pushers, --small-pushers, --small-shuffles and --rounds must be positive");
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
            + " of %s with %d pushers; one server, memory max %s; %d rounds; %d CPUs%n",
        o.heavySize,
        o.heavyPushers,
        o.smallSize,
        o.smallPushers,
        o.memory,
        o.rounds,
        Runtime.getRuntime().availableProcessors());
    long pid = ProcessHandle.current().pid();
    try (ShuffleServer server =
            new ShuffleServer(
                new ServerConf(conf), new NetworkConf(conf), new MetricRegistry(), Clock.SYSTEM);
        BenchTenant heavy = new BenchTenant("sluice-tenants-heavy-" + pid, conf, server, 200, 2);
        BenchTenant small = new BenchTenant("sluice-tenants-small-" + pid, conf, server, 20, 2)) {
      Phases phases = new Phases(o, server, heavy, small, smallSize);
      long warmupSize = Math.min(heavySize, WARMUP_HEAVY_BYTES);
      out.printf(
          Locale.ROOT,
          "warm-up (not reported): the same round with the heavy application pushing %d MiB%n",
          warmupSize >> 20);
      TenantsRound warmup = phases.round(warmupSize, WARMUP_SMALL_SHUFFLES);
      out.println(warmup.line("warm-up"));
      List<RoundResult> all = new ArrayList<>(warmup.all());
      List<TenantsRound> rounds = new ArrayList<>();
      for (int i = 1; i <= o.rounds; i++) {
        TenantsRound round = phases.round(heavySize, o.smallShuffles);
        rounds.add(round);
        all.addAll(round.all());
        out.println(round.line("round " + i));
      }
      boolean verified = all.stream().allMatch(RoundResult::verified);
      new TenantsReport(rounds, server.memory().peak(), memory, verified, firstFailure(all))
          .print(out);
      return verified ? 0 : 1;
    }
  }

  /** The two phases of a round, alone then beside, on one server. */
  private static final class Phases {
    private final Options o;
    private final ShuffleServer server;
    private final BenchTenant heavy;
    private final BenchTenant small;
    private final long smallSize;

    Phases(Options o, ShuffleServer server, BenchTenant heavy, BenchTenant small, long smallSize) {
      this.o = o;
      this.server = server;
      this.heavy = heavy;
      this.small = small;
      this.smallSize = smallSize;
    }

    /**
     * Alone: {@code smallShuffles} small shuffles one after another, then the heavy push. Beside:
     * the heavy push again, and small shuffles one after another from when held memory reaches half
     * the pause watermark (the neighbour is noisy once memory is under pressure) for as long as it
     * runs.
     */
    TenantsRound round(long heavySize, int smallShuffles)
        throws InterruptedException, ExecutionException {
      List<RoundResult> smallAlone = new ArrayList<>();
      for (int i = 0; i < smallShuffles; i++) {
        smallAlone.add(small.shuffle(o.smallPushers, smallSize));
      }
      RoundResult heavyAlone = heavy.shuffle(o.heavyPushers, heavySize);

      long pausedBefore = server.memory().pausedMillis();
      CompletableFuture<RoundResult> heavyRun =
          CompletableFuture.supplyAsync(() -> heavy.shuffle(o.heavyPushers, heavySize));
      while (!heavyRun.isDone()
          && server.memory().held() < server.memory().pauseWatermarkBytes() / 2) {
        Thread.sleep(5);
      }
      List<RoundResult> smallBeside = new ArrayList<>();
      while (!heavyRun.isDone()) {
        smallBeside.add(small.shuffle(o.smallPushers, smallSize));
      }
      RoundResult heavyBeside = heavyRun.get();
      long pausedBeside = server.memory().pausedMillis() - pausedBefore;
      return new TenantsRound(smallAlone, heavyAlone, smallBeside, heavyBeside, pausedBeside);
    }
  }

  private static String firstFailure(List<RoundResult> rounds) {
    for (RoundResult r : rounds) {
      if (r.failure != null) {
        return r.failure;
      }
    }
    return null;
  }
}
