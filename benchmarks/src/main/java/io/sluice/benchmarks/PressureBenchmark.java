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
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code shuffle-bench pressure}: pushes several GiB with 16 pushers into a server whose memory
 * maximum is far below the data size, then the same push into a server with a large maximum, in one
 * run; reports throughput, the peak of held memory against the maximum, time paused, CONGESTED
 * answers, and whether every record verified.
 */
public final class PressureBenchmark {
  static final String NAME = "pressure";
  static final String DESCRIPTION =
      "push far more than sluice.memory.max with 16 pushers; compare with a large maximum";

  /** Options. */
  static final class Options {
    @Parameter(names = "--size", description = "Bytes pushed per run (k, m, g suffixes)")
    String size = "3g";

    @Parameter(names = "--memory", description = "The small sluice.memory.max under test")
    String memory = "64m";

    @Parameter(
        names = "--unbounded-memory",
        description = "sluice.memory.max of the baseline run, larger than --size in practice")
    String unboundedMemory = "3g";

    @Parameter(names = "--pushers", description = "Concurrent map tasks")
    int pushers = 16;

    @Parameter(names = "--partitions", description = "Reduce partitions")
    int partitions = 200;

    @Parameter(
        names = "--batch-size",
        description =
            "sluice.push.bufferSize of the pushers: small values (e.g. 128) push tiny batches")
    String batchSize = "64k";

    @Parameter(
        names = "--dir",
        description = "Data directory (default: a fresh one under java.io.tmpdir, deleted after)")
    String dir;

    @Parameter(
        names = ChartOption.NAME,
        validateWith = ChartOption.class,
        description =
            "Also writes an SVG chart of ingest and read MB/s, the large maximum (baseline) vs the"
                + " small one, to this file (its directory must exist)")
    String chart;

    @Parameter(names = "--help", help = true, description = "Show the options")
    boolean help;
  }

  /** One run's outcome. */
  private static final class Run {
    final long memoryMax;
    final RoundResult result;
    final long peakHeld;
    final long pausedMillis;
    final long congested;

    final long peakNettyDirect;

    Run(
        long memoryMax,
        RoundResult result,
        long peakHeld,
        long pausedMillis,
        long congested,
        long peakNettyDirect) {
      this.peakNettyDirect = peakNettyDirect;
      this.memoryMax = memoryMax;
      this.result = result;
      this.peakHeld = peakHeld;
      this.pausedMillis = pausedMillis;
      this.congested = congested;
    }
  }

  private PressureBenchmark() {}

  public static int run(String[] args, PrintStream out, PrintStream err) {
    Options o = new Options();
    JCommander jc =
        JCommander.newBuilder().programName("shuffle-bench " + NAME).addObject(o).build();
    long size;
    long memory;
    long unbounded;
    try {
      jc.parse(args);
      if (o.help) {
        StringBuilder s = new StringBuilder();
        jc.getUsageFormatter().usage(s);
        out.print(s);
        return 0;
      }
      size = ByteSizes.parse("--size", o.size);
      memory = ByteSizes.parse("--memory", o.memory);
      unbounded = ByteSizes.parse("--unbounded-memory", o.unboundedMemory);
      if (o.pushers < 1 || o.partitions < 1 || memory < (2 << 20)) {
        throw new ParameterException(
            "--pushers and --partitions must be positive and --memory at least 2m");
      }
    } catch (ParameterException e) {
      err.println("shuffle-bench " + NAME + ": " + e.getMessage());
      return 2;
    }
    try (BenchDirectory data = BenchDirectory.open(o.dir, "sluice-pressure-")) {
      Path dir = data.path();
      out.printf(
          Locale.ROOT,
          "shuffle-bench pressure: %s with %d pushers over %d partitions; memory max %s under"
              + " test, %s for the baseline; client and server in one JVM, %d CPUs%n",
          o.size,
          o.pushers,
          o.partitions,
          o.memory,
          o.unboundedMemory,
          Runtime.getRuntime().availableProcessors());
      out.println("warmup (256 MiB, not reported)");
      runOnce(dir, unbounded, o.pushers, o.partitions, 256L << 20, o.batchSize);
      out.println("run: memory max " + o.memory);
      Run bounded = runOnce(dir, memory, o.pushers, o.partitions, size, o.batchSize);
      out.println("run: memory max " + o.unboundedMemory);
      Run free = runOnce(dir, unbounded, o.pushers, o.partitions, size, o.batchSize);
      if (o.chart != null) {
        ChartOption.write(chart(o, bounded.result, free.result), Path.of(o.chart), out);
      }
      report(out, bounded, free, o.batchSize);
      return bounded.result.verified() && free.result.verified() ? 0 : 1;
    } catch (IOException | RuntimeException e) {
      err.println("shuffle-bench " + NAME + " failed: " + e);
      return 1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return 1;
    }
  }

  private static Run runOnce(
      Path dir, long memoryMax, int pushers, int partitions, long bytes, String batchSize)
      throws IOException, InterruptedException {
    SluiceConf conf =
        SluiceConf.of(
            Map.of(
                ServerConf.HOST.name(), "127.0.0.1",
                ServerConf.PORT.name(), "0",
                ServerConf.DIRS.name(), dir.toString(),
                ServerConf.MEMORY_MAX.name(), Long.toString(memoryMax),
                ServerConf.COMMIT_FSYNC.name(), "true",
                ClientConf.COMPRESSION.name(), "none",
                ClientConf.PUSH_BUFFER_SIZE.name(), batchSize));
    try (ShuffleServer server =
            new ShuffleServer(
                new ServerConf(conf), new NetworkConf(conf), new MetricRegistry(), Clock.SYSTEM);
        ClientContext context = new ClientContext(conf);
        ShuffleCoordinator coordinator =
            new ShuffleCoordinator(
                "sluice-pressure-" + ProcessHandle.current().pid(),
                List.of(ClientContext.address("127.0.0.1", server.port())),
                context,
                "127.0.0.1")) {
      ShuffleRound round =
          new ShuffleRound(
              context,
              coordinator,
              new CoordinatorClient(
                  context,
                  coordinator.appId(),
                  ClientContext.address("127.0.0.1", coordinator.port())),
              new Records(0x5eed),
              new CpuMeter(),
              List.of(server.metrics()),
              partitions,
              2,
              1,
              1);
      RoundResult result;
      AtomicLong peakNetty = new AtomicLong();
      Thread sampler =
          new Thread(
              () -> {
                while (!Thread.currentThread().isInterrupted()) {
                  peakNetty.accumulateAndGet(server.nettyPinnedDirectMemory(), Math::max);
                  try {
                    Thread.sleep(5);
                  } catch (InterruptedException e) {
                    return;
                  }
                }
              },
              "netty-memory-sampler");
      sampler.setDaemon(true);
      sampler.start();
      try {
        result = round.run(0, pushers, bytes);
      } catch (IOException | RuntimeException e) {
        result = RoundResult.failed(pushers, e.toString());
      } finally {
        sampler.interrupt();
        sampler.join();
      }
      return new Run(
          memoryMax,
          result,
          server.memory().peak(),
          server.memory().pausedMillis(),
          server.metrics().pushesCongested().getCount(),
          peakNetty.get());
    }
  }

  /**
   * The chart of ingest and read MB/s: the baseline run with the large maximum ({@code free}), then
   * the run under pressure ({@code bounded}).
   */
  static BarChart chart(Options o, RoundResult bounded, RoundResult free) {
    return new BarChart(
            String.format(
                Locale.ROOT,
                "shuffle-bench pressure: MB/s, %s with %d pushers over %d partitions, batches of %s"
                    + " (%d CPUs)",
                o.size,
                o.pushers,
                o.partitions,
                o.batchSize,
                Runtime.getRuntime().availableProcessors()),
            "MB/s (MB = 2^20 bytes)",
            List.of("memory max " + o.unboundedMemory + " (baseline)", "memory max " + o.memory))
        .group("ingest (until committed)", free.ingestMBps(), bounded.ingestMBps())
        .group("read", free.readMBps(), bounded.readMBps());
  }

  private static void report(PrintStream out, Run bounded, Run free, String batchSize) {
    out.println();
    out.printf(
        Locale.ROOT,
        "%-12s %12s %12s %9s %10s %10s %9s %9s%n",
        "memory max",
        "peak held",
        "peak/max",
        "paused s",
        "CONGESTED",
        "ingest MB/s",
        "read MB/s",
        "verified");
    for (Run r : List.of(bounded, free)) {
      out.printf(
          Locale.ROOT,
          "%-12s %12d %12.3f %9.2f %10d %10.1f %9.1f %9s%n",
          r.memoryMax,
          r.peakHeld,
          (double) r.peakHeld / r.memoryMax,
          r.pausedMillis / 1000.0,
          r.congested,
          r.result.ingestMBps(),
          r.result.readMBps(),
          r.result.verified() ? "yes" : "NO");
    }
    out.printf(
        Locale.ROOT,
        "peak direct memory the server's Netty buffers pinned: %d bytes = %.2f x sluice.memory.max"
            + " (batches of %s)%n",
        bounded.peakNettyDirect,
        (double) bounded.peakNettyDirect / bounded.memoryMax,
        batchSize);
    double ratio = bounded.result.ingestMBps() / free.result.ingestMBps();
    out.printf(
        Locale.ROOT,
        "ingest under pressure / unbounded ingest = %.2f (ingest = first write until committed)%n",
        ratio);
    out.println(
        "{\"benchmark\":\"pressure\""
            + ",\"memoryMaxBytes\":"
            + bounded.memoryMax
            + ",\"peakHeldBytes\":"
            + bounded.peakHeld
            + ",\"peakNettyDirectBytes\":"
            + bounded.peakNettyDirect
            + ",\"nettyDirectOverMax\":"
            + Json.num((double) bounded.peakNettyDirect / bounded.memoryMax)
            + ",\"batchSize\":\""
            + batchSize
            + "\""
            + ",\"withinBound\":"
            + (bounded.peakHeld <= bounded.memoryMax)
            + ",\"pausedMillis\":"
            + bounded.pausedMillis
            + ",\"congestedPushes\":"
            + bounded.congested
            + ",\"ingestMBps\":"
            + Json.num(bounded.result.ingestMBps())
            + ",\"unboundedIngestMBps\":"
            + Json.num(free.result.ingestMBps())
            + ",\"unboundedMemoryMaxBytes\":"
            + free.memoryMax
            + ",\"unboundedPeakHeldBytes\":"
            + free.peakHeld
            + ",\"ratio\":"
            + Json.num(ratio)
            + ",\"verified\":"
            + (bounded.result.verified() && free.result.verified())
            + "}");
    out.flush();
  }
}
