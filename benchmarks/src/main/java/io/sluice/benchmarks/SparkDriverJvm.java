package io.sluice.benchmarks;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Starts the child JVM of the Spark benchmarks ({@link SparkBenchmarkDriver}) on one Spark line's
 * class path, with the {@code --add-opens} Spark needs, every Spark endpoint on loopback and the
 * built-in shuffle's files under the benchmark's directory. Its standard output is the driver's
 * protocol; its standard error goes to this JVM's.
 */
final class SparkDriverJvm {
  private static final List<String> OPENS =
      List.of(
          "java.lang",
          "java.lang.invoke",
          "java.lang.reflect",
          "java.io",
          "java.net",
          "java.nio",
          "java.util",
          "java.util.concurrent",
          "java.util.concurrent.atomic",
          "jdk.internal.ref",
          "sun.nio.ch",
          "sun.nio.cs",
          "sun.security.action",
          "sun.util.calendar");

  private SparkDriverJvm() {}

  /**
   * Starts the driver with {@code args} ({@code key=value}, see {@link SparkBenchmarkDriver}).
   *
   * @param dir the benchmark's directory: {@code spark-home} (the local-cluster workers' work
   *     directories) and {@code spark-local} (the built-in shuffle's files) go in it
   * @throws IOException when the line's jars are missing (naming the command that builds them) or
   *     the JVM cannot start
   */
  static Process start(SparkBenchmark.SparkLine line, List<String> args, Path dir)
      throws IOException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-Xmx2g");
    // the log configuration bin/shuffle-bench gave this JVM (not its profiling options: those
    // are for the servers, here), and any -Dspark.* setting in SLUICE_JAVA_OPTS: Spark reads
    // those as settings of the application (-Dspark.sluice.push.bufferSize=256k, say)
    for (String arg : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
      if (arg.startsWith("-Dlog4j2.configurationFile=")
          || arg.startsWith("-Dsluice.log.dir=")
          || arg.startsWith("-Dspark.")) {
        command.add(arg);
      }
    }
    for (String open : OPENS) {
      command.add("--add-opens=java.base/" + open + "=ALL-UNNAMED");
    }
    command.add("-Djdk.reflect.useDirectMethodHandle=false");
    command.add("-Dio.netty.tryReflectionSetAccessible=true");
    command.add("-cp");
    command.add(line.classpath());
    command.add(SparkBenchmarkDriver.class.getName());
    command.addAll(args);
    ProcessBuilder child =
        new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT);
    // every Spark endpoint (driver, local-cluster workers, executors) on loopback
    child.environment().put("SPARK_LOCAL_IP", "127.0.0.1");
    // the local-cluster workers keep their work directories (executor logs) under SPARK_HOME
    Path sparkHome = Files.createDirectories(dir.resolve("spark-home"));
    child.environment().put("SPARK_HOME", sparkHome.toString());
    // the built-in shuffle's files on the same disk as the Sluice servers' (executors and the
    // workers that start them read SPARK_LOCAL_DIRS)
    Path localDirs = Files.createDirectories(dir.resolve("spark-local"));
    child.environment().put("SPARK_LOCAL_DIRS", localDirs.toString());
    return child.start();
  }
}
