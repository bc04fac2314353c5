package io.sluice.benchmarks;

import com.beust.jcommander.JCommander;
import com.beust.jcommander.ParameterException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

/** What the engine benchmarks share: option parsing and running themselves in a child JVM. */
final class BenchmarkCli {
  private BenchmarkCli() {}

  /**
   * Parses {@code args} into {@code options}.
   *
   * @return null when the benchmark should run; otherwise its exit code: 2 after a bad option
   *     (named on {@code err}), 0 after printing the help asked for
   */
  static Integer parse(
      String name,
      Object options,
      BooleanSupplier helpAsked,
      String[] args,
      PrintStream out,
      PrintStream err) {
    JCommander commander =
        JCommander.newBuilder().programName("shuffle-bench " + name).addObject(options).build();
    try {
      commander.parse(args);
    } catch (ParameterException e) {
      err.println("shuffle-bench " + name + ": " + e.getMessage());
      return 2;
    }
    if (helpAsked.getAsBoolean()) {
      StringBuilder usage = new StringBuilder();
      commander.getUsageFormatter().usage(usage);
      out.print(usage);
      return 0;
    }
    return null;
  }

  /**
   * The command that runs benchmark {@code name} again in a child JVM: this JVM's options, then
   * {@code jvmOptions} (which mark the child), on {@code classpath}.
   */
  static ProcessBuilder childJvm(
      String name, List<String> jvmOptions, String classpath, String[] args) {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments());
    command.addAll(jvmOptions);
    command.add("-cp");
    command.add(classpath);
    command.add(BenchMain.class.getName());
    command.add(name);
    command.addAll(Arrays.asList(args));
    return new ProcessBuilder(command).inheritIO();
  }

  /**
   * The key=value settings of a repeated {@code option} as a map, in order.
   *
   * @throws IllegalArgumentException naming the option and the setting that is not key=value
   */
  static Map<String, String> settings(String option, List<String> settings) {
    Map<String, String> out = new LinkedHashMap<>();
    for (String setting : settings) {
      int eq = setting.indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException(
            option
                + " takes key=value, e.g. sluice.read.sortMapRanges=true, not '"
                + setting
                + "'");
      }
      out.put(setting.substring(0, eq).trim(), setting.substring(eq + 1).trim());
    }
    return out;
  }
}
