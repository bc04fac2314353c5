package io.sluice.benchmarks;

import java.io.PrintStream;
import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

/**
 * What {@code shuffle-bench tenants} measured over its rounds. Each headline figure is the median
 * over the rounds of that round's figure (a ratio pairs the round's beside with the same round's
 * alone); the slowest small shuffle beside is the slowest of the whole run. Every figure also has
 * its spread over the rounds.
 */
final class TenantsReport {
  private final List<TenantsRound> rounds;
  private final long peakHeldBytes;
  private final long memoryMaxBytes;
  private final boolean verified;
  private final String failure;

  TenantsReport(
      List<TenantsRound> rounds,
      long peakHeldBytes,
      long memoryMaxBytes,
      boolean verified,
      String failure) {
    this.rounds = List.copyOf(rounds);
    this.peakHeldBytes = peakHeldBytes;
    this.memoryMaxBytes = memoryMaxBytes;
    this.verified = verified;
    this.failure = failure;
  }

  private Spread spread(ToDoubleFunction<TenantsRound> measure) {
    return Spread.of(rounds.stream().mapToDouble(measure).toArray());
  }

  Spread smallAloneSec() {
    return spread(TenantsRound::smallAloneSec);
  }

  Spread smallBesideSec() {
    return spread(TenantsRound::smallBesideSec);
  }

  Spread smallBesideSlowestSec() {
    return spread(TenantsRound::smallBesideSlowestSec);
  }

  Spread smallShufflesBeside() {
    return spread(r -> r.smallBeside.size());
  }

  Spread smallSlowdown() {
    return spread(TenantsRound::smallSlowdown);
  }

  Spread heavyAloneMBps() {
    return spread(TenantsRound::heavyAloneMBps);
  }

  Spread heavyBesideMBps() {
    return spread(TenantsRound::heavyBesideMBps);
  }

  Spread heavyThroughputRatio() {
    return spread(TenantsRound::heavyThroughputRatio);
  }

  Spread pausedMillisBeside() {
    return spread(r -> r.pausedMillisBeside);
  }

  private int smallShufflesBesideTotal() {
    return rounds.stream().mapToInt(r -> r.smallBeside.size()).sum();
  }

  String json() {
    return "{\"benchmark\":\"tenants\""
        + ",\"rounds\":"
        + rounds.size()
        + ",\"smallAloneSec\":"
        + Json.num(smallAloneSec().median())
        + ",\"smallBesideSec\":"
        + Json.num(smallBesideSec().median())
        + ",\"smallBesideSlowestSec\":"
        + Json.num(smallBesideSlowestSec().max())
        + ",\"smallShufflesBeside\":"
        + smallShufflesBesideTotal()
        + ",\"smallSlowdown\":"
        + Json.num(smallSlowdown().median())
        + ",\"heavyAloneMBps\":"
        + Json.num(heavyAloneMBps().median())
        + ",\"heavyBesideMBps\":"
        + Json.num(heavyBesideMBps().median())
        + ",\"heavyThroughputRatio\":"
        + Json.num(heavyThroughputRatio().median())
        + ",\"pausedMillisBeside\":"
        + Json.num(pausedMillisBeside().median())
        + ",\"peakHeldBytes\":"
        + peakHeldBytes
        + ",\"memoryMaxBytes\":"
        + memoryMaxBytes
        + ",\"withinBound\":"
        + (peakHeldBytes <= memoryMaxBytes)
        + ",\"verified\":"
        + verified
        + ",\"spread\":{\"smallAloneSec\":"
        + smallAloneSec().json()
        + ",\"smallBesideSec\":"
        + smallBesideSec().json()
        + ",\"smallBesideSlowestSec\":"
        + smallBesideSlowestSec().json()
        + ",\"smallShufflesBeside\":"
        + smallShufflesBeside().json()
        + ",\"smallSlowdown\":"
        + smallSlowdown().json()
        + ",\"heavyAloneMBps\":"
        + heavyAloneMBps().json()
        + ",\"heavyBesideMBps\":"
        + heavyBesideMBps().json()
        + ",\"heavyThroughputRatio\":"
        + heavyThroughputRatio().json()
        + ",\"pausedMillisBeside\":"
        + pausedMillisBeside().json()
        + "}}";
  }

  private static void row(PrintStream out, String name, String format, Spread s) {
    out.printf(
        Locale.ROOT,
        "%-36s " + format + " " + format + " " + format + "%n",
        name,
        s.min(),
        s.median(),
        s.max());
  }

  void print(PrintStream out) {
    out.println();
    out.printf(
        Locale.ROOT,
        "%-36s %10s %10s %10s%n",
        "over " + rounds.size() + " rounds",
        "min",
        "median",
        "max");
    row(out, "small shuffle alone, median s", "%10.3f", smallAloneSec());
    row(out, "small shuffle beside, median s", "%10.3f", smallBesideSec());
    row(out, "small slowdown, beside / alone", "%10.2f", smallSlowdown());
    row(out, "small shuffle beside, slowest s", "%10.3f", smallBesideSlowestSec());
    row(out, "small shuffles beside", "%10.0f", smallShufflesBeside());
    row(out, "heavy ingest alone, MB/s", "%10.1f", heavyAloneMBps());
    row(out, "heavy ingest beside, MB/s", "%10.1f", heavyBesideMBps());
    row(out, "heavy ingest, beside / alone", "%10.2f", heavyThroughputRatio());
    row(out, "pushes paused beside, s", "%10.2f", spread(r -> r.pausedMillisBeside / 1000.0));
    out.printf(
        Locale.ROOT,
        "peak held %d of %d bytes (%.3f); verified: %s%n",
        peakHeldBytes,
        memoryMaxBytes,
        (double) peakHeldBytes / memoryMaxBytes,
        verified ? "yes" : "NO (" + failure + ")");
    out.println(json());
    out.flush();
  }
}
