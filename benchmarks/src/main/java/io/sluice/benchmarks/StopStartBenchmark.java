package io.sluice.benchmarks;

import com.beust.jcommander.Parameter;
import com.beust.jcommander.ParameterException;
import com.codahale.metrics.MetricRegistry;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.sluice.client.ClientConf;
import io.sluice.client.ClientContext;
import io.sluice.client.PartitionLocations;
import io.sluice.client.coordinator.CoordinatorClient;
import io.sluice.client.coordinator.ShuffleCommit;
import io.sluice.client.coordinator.ShuffleCoordinator;
import io.sluice.client.push.MapOutputPusher;
import io.sluice.client.read.PartitionReader;
import io.sluice.client.read.ShuffleBatch;
import io.sluice.common.Clock;
import io.sluice.common.SluiceConf;
import io.sluice.network.NetworkConf;
import io.sluice.protocol.StatusException;
import io.sluice.protocol.proto.CommittedShuffle;
import io.sluice.server.ServerConf;
import io.sluice.server.ShuffleServer;
import io.sluice.server.state.StateRecovery;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * {@code shuffle-bench stopstart}: how long one server's graceful stop and its start take, and how
 * they grow with what it holds. Stop: a server in this JVM takes {@code --stop-sizes} bytes of one
 * application's shuffle from {@code --pushers} map tasks that push everything but never finish, so
 * every split stays open; then {@link ShuffleServer#close()} (which commits and records the open
 * splits) is timed, and a new server on the same directories must restore every byte. Start: a
 * server's state store is filled with {@code --start-splits} committed splits (small ones, from
 * shuffles of {@code --splits-per-shuffle} partitions), the server stopped, and a new {@link
 * ShuffleServer} on the same port, directories and state store timed until its constructor returns
 * (it serves from then on), then until one split was read back; the median of {@code
 * --start-repeats}. Both next to an empty server's stop and start. Prints a table and, last, one
 * JSON object. Exit code 1 when data was not restored or did not read back.
 */
final class StopStartBenchmark {
  static final String NAME = "stopstart";
  static final String DESCRIPTION =
      "a server's graceful stop with GiBs uncommitted, and its start with 10,000s of splits";

  /** Bytes of the records the stop's map tasks write (batches of sluice.push.bufferSize). */
  private static final int RECORD = 32 << 10;

  /** Bytes of the one record each split of the start's state holds. */
  private static final int SMALL_RECORD = 100;

  private static final long WAIT_MILLIS = TimeUnit.MINUTES.toMillis(5);

  /** Options. */
  static final class Options {
    @Parameter(
        names = "--stop-sizes",
        description = "Comma-separated uncommitted bytes the stopping server holds (k, m, g)")
    String stopSizes = "512m,1g";

    @Parameter(
        names = "--start-splits",
        description = "Comma-separated committed splits in the starting server's state store")
    String startSplits = "5000,10000";

    @Parameter(names = "--pushers", description = "Map tasks pushing the stop's data at once")
    int pushers = 4;

    @Parameter(names = "--partitions", description = "Partitions (open splits) of the stop's data")
    int partitions = 200;

    @Parameter(
        names = "--splits-per-shuffle",
        description = "Partitions of each shuffle that fills the start's state store")
    int splitsPerShuffle = 1000;

    @Parameter(
        names = "--repeats",
        description = "Stops and starts timed per size; the best counts, the median is shown")
    int repeats = 3;

    @Parameter(
        names = "--server-conf",
        description = "A server setting key=value (repeatable), e.g. sluice.commit.fsync=false")
    List<String> serverConf = new ArrayList<>();

    @Parameter(
        names = "--dir",
        description =
            "Data and state directories (default: a fresh one under java.io.tmpdir, deleted after)")
    String dir;

    @Parameter(
        names = ChartOption.NAME,
        validateWith = ChartOption.class,
        description =
            "Also writes an SVG chart of stop and start seconds, the empty server (baseline) vs"
                + " each size, to this file (its directory must exist)")
    String chart;

    @Parameter(names = "--help", help = true, description = "Show the options")
    boolean help;

    long[] stopBytes() {
      String[] parts = stopSizes.split(",");
      long[] bytes = new long[parts.length];
      for (int i = 0; i < parts.length; i++) {
        bytes[i] = ByteSizes.parse("--stop-sizes", parts[i]);
        if (bytes[i] <= 0) {
          throw new ParameterException("--stop-sizes: every size must be positive");
        }
      }
      return bytes;
    }

    int[] startSplitCounts() {
      String[] parts = startSplits.split(",");
      int[] splits = new int[parts.length];
      for (int i = 0; i < parts.length; i++) {
        try {
          splits[i] = Integer.parseInt(parts[i].trim().replace("_", ""));
        } catch (NumberFormatException e) {
          splits[i] = -1;
        }
        if (splits[i] <= 0) {
          throw new ParameterException(
              "--start-splits: '" + parts[i] + "' is not a positive number of splits");
        }
      }
      return splits;
    }

    void check() {
      stopBytes();
      startSplitCounts();
      if (pushers < 1 || partitions < 1 || splitsPerShuffle < 1 || repeats < 1) {
        throw new ParameterException(
            "--pushers, --partitions, --splits-per-shuffle and --repeats must be positive");
      }
      BenchmarkCli.settings("--server-conf", serverConf);
    }
  }

  /** One size's timed stops. */
  static final class Stop {
    final long bytes;

    /** The quickest stop; then the median and every stop, in order. */
    final double seconds;

    final double median;
    final double[] all;

    /** Pushed bytes the server still held in memory when each stop began. */
    final long[] heldBytes;

    /**
     * What a server started on a stopped server's directories restored: the fewest splits and bytes
     * over the stops.
     */
    final int restoredSplits;

    final long restoredBytes;

    Stop(long bytes, double[] all, long[] heldBytes, int restoredSplits, long restoredBytes) {
      this.bytes = bytes;
      this.seconds = Arrays.stream(all).min().orElse(Double.NaN);
      this.median = median(all);
      this.all = all;
      this.heldBytes = heldBytes;
      this.restoredSplits = restoredSplits;
      this.restoredBytes = restoredBytes;
    }
  }

  /** One state size's timed starts. */
  static final class Start {
    final int splits;

    /** The quickest start until the constructor returned (the server serves from then on). */
    final double seconds;

    final double median;
    final double[] all;

    /** The quickest start until one split was read back from the new server. */
    final double firstReadSeconds;

    final int restoredSplits;

    Start(int splits, double[] all, double firstReadSeconds, int restoredSplits) {
      this.splits = splits;
      this.seconds = Arrays.stream(all).min().orElse(Double.NaN);
      this.median = median(all);
      this.all = all;
      this.firstReadSeconds = firstReadSeconds;
      this.restoredSplits = restoredSplits;
    }
  }

  private final Options options;
  private final Map<String, String> settings;
  private final PrintStream out;
  private final byte[] data = new byte[1 << 20];

  private StopStartBenchmark(Options options, PrintStream out) {
    this.options = options;
    this.settings = BenchmarkCli.settings("--server-conf", options.serverConf);
    this.out = out;
    new SplittableRandom(0x5eed).nextBytes(data);
  }

  static int run(String[] args, PrintStream out, PrintStream err) {
    Options options = new Options();
    Integer exit = BenchmarkCli.parse(NAME, options, () -> options.help, args, out, err);
    if (exit != null) {
      return exit;
    }
    try {
      options.check();
    } catch (ParameterException | IllegalArgumentException e) {
      err.println("shuffle-bench " + NAME + ": " + e.getMessage());
      return 2;
    }
    try (BenchDirectory dir = BenchDirectory.open(options.dir, "sluice-stopstart-")) {
      return new StopStartBenchmark(options, out).run(dir.path(), err);
    } catch (IOException | ExecutionException | TimeoutException | RuntimeException e) {
      err.println("shuffle-bench " + NAME + " failed: " + e);
      return 1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      err.println("shuffle-bench " + NAME + " interrupted");
      return 1;
    }
  }

  private int run(Path dir, PrintStream err)
      throws IOException, InterruptedException, ExecutionException, TimeoutException {
    SluiceConf probe = serverConf(dir.resolve("probe"), 0);
    out.printf(
        Locale.ROOT,
        "shuffle-bench stopstart: stop with %s uncommitted (%d pushers, %d partitions, never"
            + " finished); start with %s committed splits (%d per shuffle); best of %d; server"
            + " and client in one JVM, %d CPUs; sluice.commit.fsync %s, sluice.memory.max %d,"
            + " data under %s%n",
        options.stopSizes,
        options.pushers,
        options.partitions,
        options.startSplits,
        options.splitsPerShuffle,
        options.repeats,
        Runtime.getRuntime().availableProcessors(),
        new ServerConf(probe).commitFsync(),
        new ServerConf(probe).memoryMax(),
        dir);
    out.println("warmup (a stop with 64 MiB, a start with 500 splits; not reported)");
    stop(dir.resolve("warmup-stop"), 64L << 20, 1);
    start(dir.resolve("warmup-start"), 500, 1);

    Stop emptyStop = stop(dir.resolve("empty-stop"), 0, options.repeats);
    Start emptyStart = start(dir.resolve("empty-start"), 0, options.repeats);
    out.printf(
        Locale.ROOT,
        "empty server: stop %.3f s, start %.3f s%n",
        emptyStop.seconds,
        emptyStart.seconds);
    List<Stop> stops = new ArrayList<>();
    for (long bytes : options.stopBytes()) {
      Stop s = stop(dir.resolve("stop-" + bytes), bytes, options.repeats);
      stops.add(s);
      out.printf(
          Locale.ROOT,
          "stop with %.1f MiB uncommitted (MiB of it in memory: %s): %s s (best %.3f); a new"
              + " server restored at least %d split(s) of %.1f MiB%n",
          s.bytes / 1048576.0,
          Arrays.toString(Arrays.stream(s.heldBytes).map(b -> b >> 20).toArray()),
          rounded(s.all),
          s.seconds,
          s.restoredSplits,
          s.restoredBytes / 1048576.0);
    }
    List<Start> starts = new ArrayList<>();
    for (int splits : options.startSplitCounts()) {
      Start s = start(dir.resolve("start-" + splits), splits, options.repeats);
      starts.add(s);
      out.printf(
          Locale.ROOT,
          "start with %d committed split(s): %s s (best %.3f), first read %.3f s%n",
          s.splits,
          rounded(s.all),
          s.seconds,
          s.firstReadSeconds);
    }
    StopStartReport report = new StopStartReport(options, emptyStop, emptyStart, stops, starts);
    if (options.chart != null) {
      ChartOption.write(report.chart(), Path.of(options.chart), out);
    }
    report.print(out);
    String problem = report.problem();
    if (problem != null) {
      err.println("shuffle-bench " + NAME + ": " + problem);
      return 1;
    }
    return 0;
  }

  /** The settings of a server with its data in {@code run}/data and its state in run/state. */
  private SluiceConf serverConf(Path run, int port) {
    Map<String, String> values = new LinkedHashMap<>();
    values.put(ServerConf.HOST.name(), "127.0.0.1");
    values.put(ServerConf.PORT.name(), Integer.toString(port));
    values.put(ServerConf.DIRS.name(), run.resolve("data").toString());
    values.put(ServerConf.STATE_DIR.name(), run.resolve("state").toString());
    values.put(ClientConf.COMPRESSION.name(), "none");
    values.putAll(settings);
    return SluiceConf.of(values);
  }

  private static ShuffleServer newServer(SluiceConf conf) throws IOException {
    return new ShuffleServer(
        new ServerConf(conf), new NetworkConf(conf), new MetricRegistry(), Clock.SYSTEM);
  }

  private static ShuffleCoordinator coordinator(
      String name, ClientContext context, ShuffleServer server) throws IOException {
    return new ShuffleCoordinator(
        "sluice-stopstart-" + name + "-" + ProcessHandle.current().pid(),
        List.of(ClientContext.address("127.0.0.1", server.port())),
        context,
        "127.0.0.1");
  }

  private static String rounded(double[] seconds) {
    return Arrays.toString(
        Arrays.stream(seconds).map(v -> Math.round(v * 1000) / 1000.0).toArray());
  }

  /** {@code repeats} timed stops with {@code bytes} uncommitted, each on fresh directories. */
  private Stop stop(Path run, long bytes, int repeats)
      throws IOException, InterruptedException, ExecutionException {
    double[] seconds = new double[repeats];
    long[] held = new long[repeats];
    int splits = Integer.MAX_VALUE;
    long restored = Long.MAX_VALUE;
    for (int r = 0; r < repeats; r++) {
      StateRecovery.Summary summary =
          stopOnce(run.resolve(Integer.toString(r)), bytes, seconds, held, r);
      splits = Math.min(splits, summary == null ? 0 : summary.splits());
      restored = Math.min(restored, summary == null ? 0 : summary.bytes());
    }
    return new Stop(bytes, seconds, held, splits, restored);
  }

  /**
   * Starts a server, has it take {@code bytes} of one shuffle that no map finishes, and times its
   * graceful stop into {@code seconds[r]}; then starts a server on the same directories: what it
   * restored (null without bytes).
   */
  private StateRecovery.Summary stopOnce(Path run, long bytes, double[] seconds, long[] held, int r)
      throws IOException, InterruptedException, ExecutionException {
    Files.createDirectories(run);
    SluiceConf conf = serverConf(run, 0);
    ShuffleServer server = newServer(conf);
    try (ClientContext context = new ClientContext(conf);
        ShuffleCoordinator coordinator = coordinator("stop", context, server)) {
      if (bytes > 0) {
        push(context, coordinator, server, bytes);
      }
      held[r] = server.memory().held();
      long begin = System.nanoTime();
      server.close();
      seconds[r] = (System.nanoTime() - begin) / 1e9;
      // the coordinator closes now: its server is gone, so nothing is unregistered there
    } finally {
      server.close();
    }
    StateRecovery.Summary restored = null;
    if (bytes > 0) {
      try (ShuffleServer again = newServer(conf)) {
        restored = again.recovery();
      }
    }
    return restored;
  }

  /**
   * Pushes {@code bytes} with {@code --pushers} map tasks over {@code --partitions} partitions;
   * every task flushes what it buffers but never finishes, and returns once the server took all.
   */
  private void push(
      ClientContext context, ShuffleCoordinator coordinator, ShuffleServer server, long bytes)
      throws IOException, InterruptedException, ExecutionException {
    int maps = options.pushers;
    coordinator.registerShuffle(0, maps, options.partitions);
    PartitionLocations locations = coordinator.locations(0);
    CoordinatorClient client =
        new CoordinatorClient(
            context, coordinator.appId(), ClientContext.address("127.0.0.1", coordinator.port()));
    long before = server.metrics().bytesPushed().getCount();
    ExecutorService tasks = Executors.newFixedThreadPool(maps, new DefaultThreadFactory("map"));
    try {
      List<Future<Long>> written = new ArrayList<>();
      for (int m = 0; m < maps; m++) {
        int map = m;
        long share = bytes / maps + (map < bytes % maps ? 1 : 0);
        written.add(tasks.submit(() -> pushUnfinished(context, client, coordinator, map, share)));
      }
      long total = 0;
      for (Future<Long> f : written) {
        total += f.get();
      }
      // the pushes in flight are acknowledged once the server counted their bytes
      long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MILLIS);
      while (server.metrics().bytesPushed().getCount() - before < total) {
        if (System.nanoTime() > deadline) {
          throw new IOException(
              "the server took "
                  + (server.metrics().bytesPushed().getCount() - before)
                  + " of the "
                  + total
                  + " bytes pushed");
        }
        Thread.sleep(5);
      }
    } finally {
      tasks.shutdownNow();
    }
  }

  /** One map task that writes {@code share} bytes, pushes them all and never finishes. */
  private long pushUnfinished(
      ClientContext context,
      CoordinatorClient client,
      ShuffleCoordinator coordinator,
      int map,
      long share)
      throws IOException {
    SplittableRandom random = new SplittableRandom(map);
    long total = 0;
    MapOutputPusher pusher =
        new MapOutputPusher(
            context, client, coordinator.appId(), 0, map, 0, coordinator.locations(0));
    try {
      while (total < share) {
        int length = (int) Math.min(RECORD, share - total);
        int offset = random.nextInt(data.length - length + 1);
        pusher.write(random.nextInt(options.partitions), data, offset, length);
        total += length;
      }
      pusher.flush();
    } finally {
      pusher.close(); // no finish: the map never reports its end, its splits stay open
    }
    return total;
  }

  /**
   * Fills a server's state store with {@code splits} committed splits, stops it, and times {@code
   * repeats} starts on the same port, directories and state store (each but the last stopped
   * again): until the constructor returned, and until one split was read back.
   */
  private Start start(Path run, int splits, int repeats)
      throws IOException, InterruptedException, ExecutionException, TimeoutException {
    Files.createDirectories(run);
    ShuffleServer server = newServer(serverConf(run, 0));
    int port = server.port();
    SluiceConf conf = serverConf(run, port);
    double[] seconds = new double[repeats];
    double firstRead = Double.POSITIVE_INFINITY;
    int restored = 0;
    try (ClientContext context = new ClientContext(conf);
        ShuffleCoordinator coordinator = coordinator("start", context, server)) {
      CoordinatorClient client =
          new CoordinatorClient(
              context, coordinator.appId(), ClientContext.address("127.0.0.1", coordinator.port()));
      CommittedShuffle probe = splits > 0 ? commit(context, coordinator, client, splits) : null;
      int probeShuffle = (splits - 1) / options.splitsPerShuffle;
      for (int r = 0; r < repeats; r++) {
        server.close();
        long begin = System.nanoTime();
        server = newServer(conf);
        long serving = System.nanoTime();
        if (probe != null) {
          readBack(context, coordinator.appId(), probeShuffle, probe);
        }
        long read = System.nanoTime();
        seconds[r] = (serving - begin) / 1e9;
        firstRead = Math.min(firstRead, (read - begin) / 1e9);
        restored = server.recovery().splits();
      }
    } finally {
      server.close();
    }
    return new Start(splits, seconds, firstRead, restored);
  }

  /**
   * Commits {@code splits} splits of one byte-sized record each, in shuffles of {@code
   * --splits-per-shuffle} partitions with one map; the committed splits of the last shuffle's
   * partition 0.
   */
  private CommittedShuffle commit(
      ClientContext context, ShuffleCoordinator coordinator, CoordinatorClient client, int splits)
      throws IOException, InterruptedException, ExecutionException, TimeoutException {
    int shuffles = (splits + options.splitsPerShuffle - 1) / options.splitsPerShuffle;
    for (int s = 0; s < shuffles; s++) {
      int partitions = Math.min(options.splitsPerShuffle, splits - s * options.splitsPerShuffle);
      coordinator.registerShuffle(s, 1, partitions);
      try (MapOutputPusher pusher =
          new MapOutputPusher(
              context, client, coordinator.appId(), s, 0, 0, coordinator.locations(s))) {
        for (int p = 0; p < partitions; p++) {
          pusher.write(p, data, p % 1024, SMALL_RECORD);
        }
        pusher.finish();
      }
      ShuffleCommit committed = coordinator.committed(s).get(WAIT_MILLIS, TimeUnit.MILLISECONDS);
      if (!committed.lostPartitions().isEmpty() || committed.splits().size() != partitions) {
        throw new IOException(
            "shuffle "
                + s
                + " committed "
                + committed.splits().size()
                + " of "
                + partitions
                + " split(s): "
                + committed.lostReason());
      }
    }
    try {
      return client.committedSplits(shuffles - 1, 0, 1);
    } catch (StatusException e) {
      throw new IOException("coordinator: " + e.getMessage(), e);
    }
  }

  /** Reads partition 0 of {@code shuffle} and checks it holds its one record. */
  private void readBack(ClientContext context, String appId, int shuffle, CommittedShuffle probe)
      throws IOException {
    long bytes = 0;
    try (PartitionReader reader = new PartitionReader(context, appId, shuffle, probe, 0, 1)) {
      for (ShuffleBatch batch = reader.next(); batch != null; batch = reader.next()) {
        if (!Arrays.equals(
            batch.bytes(), 0, batch.length(), data, 0, Math.min(batch.length(), SMALL_RECORD))) {
          throw new IOException("split 0 of shuffle " + shuffle + " read back other bytes");
        }
        bytes += batch.length();
      }
    }
    if (bytes != SMALL_RECORD) {
      throw new IOException(
          "split 0 of shuffle " + shuffle + " read back " + bytes + " bytes, not " + SMALL_RECORD);
    }
  }

  static double median(double[] values) {
    double[] v = values.clone();
    Arrays.sort(v);
    int n = v.length;
    return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  }
}
