package io.sluice.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * One round of {@code shuffle-bench tenants}: the small application's shuffles and the heavy push
 * alone, then the heavy push again with small shuffles beside it.
 */
final class TenantsRound {
  final List<RoundResult> smallAlone;
  final RoundResult heavyAlone;
  final List<RoundResult> smallBeside;
  final RoundResult heavyBeside;
  final long pausedMillisBeside;

  TenantsRound(
      List<RoundResult> smallAlone,
      RoundResult heavyAlone,
      List<RoundResult> smallBeside,
      RoundResult heavyBeside,
      long pausedMillisBeside) {
    this.smallAlone = List.copyOf(smallAlone);
    this.heavyAlone = heavyAlone;
    this.smallBeside = List.copyOf(smallBeside);
    this.heavyBeside = heavyBeside;
    this.pausedMillisBeside = pausedMillisBeside;
  }

  /** The median small shuffle alone (push, commit and read), seconds. */
  double smallAloneSec() {
    return Spread.median(seconds(smallAlone));
  }

  /** The median small shuffle beside the heavy push, seconds; NaN when none ran beside it. */
  double smallBesideSec() {
    return Spread.median(seconds(smallBeside));
  }

  /** The slowest small shuffle beside the heavy push, seconds; NaN when none ran beside it. */
  double smallBesideSlowestSec() {
    double[] secs = seconds(smallBeside);
    return secs.length == 0 ? Double.NaN : secs[secs.length - 1];
  }

  double smallSlowdown() {
    return smallBesideSec() / smallAloneSec();
  }

  double heavyAloneMBps() {
    return heavyAlone.ingestMBps();
  }

  double heavyBesideMBps() {
    return heavyBeside.ingestMBps();
  }

  double heavyThroughputRatio() {
    return heavyBesideMBps() / heavyAloneMBps();
  }

  List<RoundResult> all() {
    List<RoundResult> all = new ArrayList<>(smallAlone);
    all.add(heavyAlone);
    all.addAll(smallBeside);
    all.add(heavyBeside);
    return all;
  }

  /** One line of the run's progress. */
  String line(String label) {
    return String.format(
        Locale.ROOT,
        "%s: small %.3f s alone, %.3f s beside (%d, slowest %.3f s, x%.2f);"
            + " heavy %.1f MB/s alone, %.1f MB/s beside (x%.2f); paused %.2f s",
        label,
        smallAloneSec(),
        smallBesideSec(),
        smallBeside.size(),
        smallBesideSlowestSec(),
        smallSlowdown(),
        heavyAloneMBps(),
        heavyBesideMBps(),
        heavyThroughputRatio(),
        pausedMillisBeside / 1000.0);
  }

  private static double[] seconds(List<RoundResult> rounds) {
    return rounds.stream()
        .filter(r -> r.failure == null)
        .mapToDouble(r -> (r.pushNanos + r.commitNanos + r.readNanos) / 1e9)
        .sorted()
        .toArray();
  }
}
