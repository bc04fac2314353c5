package io.sluice.benchmarks;

import com.beust.jcommander.Parameter;
import com.beust.jcommander.ParameterException;
import io.sluice.client.BatchCodec;
import io.sluice.client.ClientConf;
import io.sluice.common.SluiceConf;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/** Command-line options of {@code shuffle-bench server}. */
public final class ServerBenchmarkOptions {
  @Parameter(
      names = "--size",
      description = "Bytes of records pushed per pusher count (k, m, g suffixes)")
  String size = "2g";

  @Parameter(names = "--partitions", description = "Reduce partitions per shuffle")
  int partitions = 200;

  @Parameter(
      names = "--pushers",
      description = "Comma-separated counts of concurrent map tasks; one shuffle per count")
  String pushers = "1,4,16";

  @Parameter(
      names = "--maps-per-pusher",
      description =
          "Map tasks per pusher: each round runs pushers x this many map tasks, as many at a time"
              + " as pushers, each writing its share of --size. Many small map tasks push small"
              + " batches, like a wide shuffle of many tasks; the table's 'srv CPU µs/batch' is"
              + " the server's cost of each")
  int mapsPerPusher = 1;

  @Parameter(
      names = "--partitions-per-reader",
      description =
          "Partitions each reader reads with one partition reader, one after another, as a reduce"
              + " task of a coalesced partition range does (AQE); 1 reads each alone")
  int partitionsPerReader = 1;

  @Parameter(
      names = "--record-bytes",
      description =
          "Longest record, 16 to 8192 bytes: records are 100 bytes to it (all of it when it is"
              + " at most 100)")
  int recordBytes = Records.MAX_LENGTH;

  @Parameter(
      names = "--dir",
      description =
          "Server data directory, also used for the raw disk baseline"
              + " (default: a fresh directory under java.io.tmpdir, deleted afterwards)")
  String dir;

  @Parameter(names = "--memory", description = "Server memory for pushed data (sluice.memory.max)")
  String memory = "1g";

  @Parameter(
      names = "--compression",
      description =
          "Batch codec (sluice.push.compression): none or lz4. Default none, because the"
              + " payload is random-ish and does not compress")
  String compression = "none";

  @Parameter(names = "--readers", description = "Reader threads; each reads whole partitions")
  int readers = 2;

  @Parameter(
      names = "--warmup",
      description =
          "Bytes pushed and read once with the largest pusher count before the measured runs,"
              + " unreported (0: no warmup)")
  String warmup = "256m";

  @Parameter(
      names = "--checksums",
      description =
          "Batch checksums: on (pushers seal every batch with its CRC32C, readers verify it, and"
              + " the server verifies it on push: sluice.integrity.verifyOnPush=true unless --conf"
              + " says false), off (none written or verified, through a switch only benchmarks"
              + " use; the product has no off), or both (off and on in one run, a server each,"
              + " their rounds taking turns; the last JSON line compares them: serverCpuRatio,"
              + " ingestRatio)")
  String checksums = "on";

  @Parameter(
      names = "--tls",
      description =
          "Run every round twice, plain and over TLS (sluice.tls.*, a self-signed certificate made"
              + " with keytool for this run), on a server each, their rounds taking turns; the last"
              + " JSON line compares them: tlsIngestRatio, tlsReadRatio (TLS over plain)")
  boolean tls;

  @Parameter(
      names = "--auth",
      description =
          "Run every round also with per-application authentication (sluice.auth.*), on a server"
              + " of its own, the rounds taking turns with the plain run; the last JSON line"
              + " compares them: authIngestRatio, authReadRatio (auth over plain)")
  boolean auth;

  @Parameter(
      names = "--replication",
      description =
          "sluice.replication.factor: 1 (one server), 2 (two servers, a replica of every split on"
              + " the other one, the client pushing to both), or both (factor 1 and factor 2 in one"
              + " run on the same two servers, their rounds taking turns; the last JSON line"
              + " compares them: replicationRatio, push+commit time of factor 2 over factor 1)")
  String replication = "1";

  @Parameter(names = "--seed", description = "Seed of the record generator")
  long seed = 0x5eed;

  @Parameter(
      names = "--conf",
      description =
          "A sluice.* setting key=value for the server and the clients (repeatable); the options"
              + " above win over it")
  List<String> conf = new ArrayList<>();

  @Parameter(
      names = ChartOption.NAME,
      validateWith = ChartOption.class,
      description =
          "Also writes an SVG chart of push, ingest and read MB/s per pusher count (and per run"
              + " compared), next to the raw disk rate, to this file (its directory must exist)")
  String chart;

  @Parameter(
      names = {"--help", "-h"},
      help = true,
      description = "Show this help")
  boolean help;

  // parsed by validate()
  long sizeBytes;
  long memoryBytes;
  long warmupBytes;

  /** The {@code --conf} settings. */
  Map<String, String> settings() {
    Map<String, String> settings = new TreeMap<>();
    for (String kv : conf) {
      int eq = kv.indexOf('=');
      if (eq <= 0 || !kv.startsWith("sluice.")) {
        throw new ParameterException("--conf: expected sluice.<key>=<value>, got '" + kv + "'");
      }
      settings.put(kv.substring(0, eq).trim(), kv.substring(eq + 1).trim());
    }
    return settings;
  }

  /** Whether each run writes and verifies checksums, in run order: off before on for both. */
  List<Boolean> checksumRuns() {
    switch (checksums) {
      case "off":
        return List.of(false);
      case "both":
        return List.of(false, true);
      default:
        return List.of(true);
    }
  }

  /** How each run's connections are secured, in run order: plain first, then auth, then TLS. */
  List<WireSecurity> securityRuns() {
    List<WireSecurity> runs = new ArrayList<>(List.of(WireSecurity.PLAIN));
    if (auth) {
      runs.add(WireSecurity.AUTH);
    }
    if (tls) {
      runs.add(WireSecurity.TLS);
    }
    return runs;
  }

  /** The replication factor of each run, in run order: 1 before 2 for both. */
  List<Integer> replicationRuns() {
    switch (replication) {
      case "2":
        return List.of(2);
      case "both":
        return List.of(1, 2);
      default:
        return List.of(1);
    }
  }

  /** In-process servers per setup: two when a run replicates (the replica needs another one). */
  int serverCount() {
    return replication.equals("1") ? 1 : 2;
  }

  /** The pusher counts, in the order given. */
  List<Integer> pusherCounts() {
    List<Integer> counts = new ArrayList<>();
    for (String s : pushers.split(",")) {
      if (s.isBlank()) {
        continue;
      }
      try {
        counts.add(Integer.parseInt(s.trim()));
      } catch (NumberFormatException e) {
        throw new ParameterException("--pushers: '" + s.trim() + "' is not a number");
      }
    }
    return counts;
  }

  /**
   * Checks the values together.
   *
   * @throws ParameterException naming the option
   */
  void validate() {
    sizeBytes = ByteSizes.parse("--size", size);
    memoryBytes = ByteSizes.parse("--memory", memory);
    warmupBytes = ByteSizes.parse("--warmup", warmup);
    if (mapsPerPusher < 1 || mapsPerPusher > 100_000) {
      throw new ParameterException(
          "--maps-per-pusher: " + mapsPerPusher + " is not between 1 and 100000");
    }
    if (recordBytes < Records.HEADER_SIZE || recordBytes > Records.MAX_LENGTH) {
      throw new ParameterException(
          "--record-bytes: "
              + recordBytes
              + " is not between "
              + Records.HEADER_SIZE
              + " and "
              + Records.MAX_LENGTH);
    }
    List<Integer> counts = pusherCounts();
    if (counts.isEmpty()) {
      throw new ParameterException("--pushers needs at least one count");
    }
    for (int c : counts) {
      if (c < 1 || c > 1024) {
        throw new ParameterException("--pushers: " + c + " is not between 1 and 1024");
      }
      if (sizeBytes / c / mapsPerPusher < recordBytes) {
        throw new ParameterException(
            "--size "
                + size
                + " is too small for "
                + c * mapsPerPusher
                + " map tasks: each needs at least --record-bytes ("
                + recordBytes
                + ")");
      }
    }
    if (partitions < 1) {
      throw new ParameterException("--partitions must be at least 1");
    }
    if (partitionsPerReader < 1 || partitionsPerReader > partitions) {
      throw new ParameterException(
          "--partitions-per-reader: "
              + partitionsPerReader
              + " is not between 1 and --partitions ("
              + partitions
              + ")");
    }
    if (readers < 1) {
      throw new ParameterException("--readers must be at least 1");
    }
    if (memoryBytes < 2L << 20) {
      throw new ParameterException("--memory must be at least 2m");
    }
    List<String> unknown = SluiceConf.of(settings()).unknownKeys();
    if (!unknown.isEmpty()) {
      throw new ParameterException("--conf: unknown settings " + unknown);
    }
    checksums = checksums.toLowerCase(Locale.ROOT);
    if (!List.of("on", "off", "both").contains(checksums)) {
      throw new ParameterException("--checksums must be on, off or both, not " + checksums);
    }
    if ((tls || auth) && checksums.equals("both")) {
      throw new ParameterException(
          "--tls and --auth compare with a plain run; use them with --checksums on or off");
    }
    if (settings().keySet().stream().anyMatch(k -> k.startsWith("sluice.tls."))) {
      throw new ParameterException("--conf: use --tls instead of sluice.tls.* settings");
    }
    if (settings().keySet().stream().anyMatch(k -> k.startsWith("sluice.auth."))) {
      throw new ParameterException("--conf: use --auth instead of sluice.auth.* settings");
    }
    replication = replication.trim().toLowerCase(Locale.ROOT);
    if (!List.of("1", "2", "both").contains(replication)) {
      throw new ParameterException("--replication must be 1, 2 or both, not " + replication);
    }
    if (replication.equals("both") && (tls || auth || checksums.equals("both"))) {
      throw new ParameterException(
          "--replication both compares with a factor-1 run; use it without --tls, --auth and"
              + " --checksums both");
    }
    if (settings().containsKey(ClientConf.REPLICATION_FACTOR.name())) {
      throw new ParameterException(
          "--conf: use --replication instead of " + ClientConf.REPLICATION_FACTOR.name());
    }
    compression = compression.toLowerCase(Locale.ROOT);
    try {
      BatchCodec.named(compression);
    } catch (IllegalArgumentException e) {
      throw new ParameterException("--compression must be none or lz4, not " + compression);
    }
  }
}
