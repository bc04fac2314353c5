package io.sluice.benchmarks;

import com.beust.jcommander.JCommander;
import com.beust.jcommander.ParameterException;
import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.net.URISyntaxException;
import java.nio.file.Files;
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

  /**
   * The class path of a child JVM that runs an engine line: the benchmark's classes, then the jars
   * of {@code module} (under benchmarks/, in its target/lib).
   *
   * @throws IOException naming the command that builds the line's jars when they are missing
   */
  static String lineClasspath(String module) throws IOException {
    // bin/shuffle-bench sets both; the benchmarks' own tests the property
    String home =
        System.getProperty("sluice.home", System.getenv().getOrDefault("SLUICE_HOME", "."));
    Path lib = Path.of(home, "benchmarks", module, "target", "lib");
    if (!Files.isDirectory(lib)) {
      throw new IOException(
          lib
              + " is missing: build the line's jars with 'mvn -B -DskipTests -pl benchmarks/"
              + module
              + " -am package'");
    }
    try {
      String ours =
          Path.of(BenchmarkCli.class.getProtectionDomain().getCodeSource().getLocation().toURI())
              .toString();
      return ours + File.pathSeparator + lib + "/*";
    } catch (URISyntaxException e) {
      throw new IOException("cannot locate the benchmark classes: " + e.getMessage(), e);
    }
  }
}
