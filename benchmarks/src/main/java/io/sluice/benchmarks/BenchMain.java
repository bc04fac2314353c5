package io.sluice.benchmarks;

import java.io.PrintStream;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Entry point of {@code bin/shuffle-bench <name> [options]}: runs the benchmark named by the first
 * argument with the rest of the arguments. Exit codes: 0 success, 1 a benchmark failed (for
 * example, data did not verify), 2 bad usage.
 */
public final class BenchMain {
  /** A benchmark: its description and how to run it. */
  private interface Benchmark {
    int run(String[] args, PrintStream out, PrintStream err);
  }

  private static final Map<String, String> DESCRIPTIONS = new LinkedHashMap<>();
  private static final Map<String, Benchmark> BENCHMARKS = new LinkedHashMap<>();

  static {
    DESCRIPTIONS.put(ServerBenchmark.NAME, ServerBenchmark.DESCRIPTION);
    BENCHMARKS.put(ServerBenchmark.NAME, ServerBenchmark::run);
    DESCRIPTIONS.put(PressureBenchmark.NAME, PressureBenchmark.DESCRIPTION);
    BENCHMARKS.put(PressureBenchmark.NAME, PressureBenchmark::run);
    DESCRIPTIONS.put(TenantsBenchmark.NAME, TenantsBenchmark.DESCRIPTION);
    BENCHMARKS.put(TenantsBenchmark.NAME, TenantsBenchmark::run);
    DESCRIPTIONS.put(SparkBenchmark.NAME, SparkBenchmark.DESCRIPTION);
    BENCHMARKS.put(SparkBenchmark.NAME, SparkBenchmark::run);
    DESCRIPTIONS.put(RestartBenchmark.NAME, RestartBenchmark.DESCRIPTION);
    BENCHMARKS.put(RestartBenchmark.NAME, RestartBenchmark::run);
    DESCRIPTIONS.put(StopStartBenchmark.NAME, StopStartBenchmark.DESCRIPTION);
    BENCHMARKS.put(StopStartBenchmark.NAME, StopStartBenchmark::run);
    DESCRIPTIONS.put(FlinkBenchmark.NAME, FlinkBenchmark.DESCRIPTION);
    BENCHMARKS.put(FlinkBenchmark.NAME, FlinkBenchmark::run);
  }

  private BenchMain() {}

  public static void main(String[] args) {
    int code = run(args, System.out, System.err);
    System.out.flush();
    System.err.flush();
    System.exit(code);
  }

  static int run(String[] args, PrintStream out, PrintStream err) {
    if (args.length == 0) {
      usage(err);
      return 2;
    }
    String name = args[0];
    if (name.equals("-h") || name.equals("--help") || name.equals("help")) {
      usage(out);
      return 0;
    }
    Benchmark benchmark = BENCHMARKS.get(name);
    if (benchmark == null) {
      err.println("shuffle-bench: unknown benchmark '" + name + "'");
      usage(err);
      return 2;
    }
    return benchmark.run(Arrays.copyOfRange(args, 1, args.length), out, err);
  }

  private static void usage(PrintStream s) {
    s.println("Usage: shuffle-bench <benchmark> [options]   (shuffle-bench <benchmark> --help)");
    s.println("Benchmarks:");
    for (Map.Entry<String, String> e : DESCRIPTIONS.entrySet()) {
      s.printf("  %-10s %s%n", e.getKey(), e.getValue());
    }
    s.println("Every benchmark takes --chart FILE: an SVG bar chart of its result table.");
  }
}
