package io.sluice.daemon;

import com.beust.jcommander.JCommander;
import io.sluice.common.SluiceConf;
import io.sluice.server.ServerConf;
import io.sluice.server.memory.DirectMemoryLimit;
import java.io.IOException;
import java.io.PrintStream;

/**
 * Prints the {@code -XX:MaxDirectMemorySize} that {@code bin/shuffle-daemon} gives a daemon started
 * with the same options, unless {@code SLUICE_DIRECT_MEMORY} is set: {@code sluice.memory.max},
 * read from the same layers as the daemon (see {@link ShuffleDaemon#loadConf}), plus the headroom
 * {@link DirectMemoryLimit#check} demands, plus {@link #JDK_SLACK}. So the check at start passes
 * for any {@code --memory}.
 *
 * <p>Prints a size in MiB such as {@code 1216m} and exits 0; prints nothing and exits 2 when the
 * options or the configuration do not parse (the daemon then reports what is wrong).
 */
public final class DirectMemorySize {
  /**
   * Direct memory beside Netty's: the JDK's own direct buffers (file channel copies, the admin HTTP
   * server), which the JVM counts against the same limit.
   */
  static final long JDK_SLACK = 64L << 20;

  private DirectMemorySize() {}

  public static void main(String[] args) {
    System.exit(run(args, System.out, System.err));
  }

  /** Prints the limit to {@code out} and returns 0, or the reason to {@code err} and returns 2. */
  static int run(String[] args, PrintStream out, PrintStream err) {
    try {
      out.println(
          forOptions(args, System.getProperty("sluice.home", System.getenv("SLUICE_HOME"))));
      return 0;
    } catch (RuntimeException | IOException e) {
      err.println("shuffle-daemon: cannot size direct memory: " + e.getMessage());
      return 2;
    }
  }

  /**
   * The limit for a daemon run with {@code args} and {@code home} as {@code sluice.home}, e.g.
   * {@code 4672m} for {@code --memory 4g}.
   *
   * @throws com.beust.jcommander.ParameterException when the options do not parse
   * @throws IllegalArgumentException naming the key when sluice.memory.max does not parse
   * @throws IOException when a configuration file cannot be read
   */
  static String forOptions(String[] args, String home) throws IOException {
    DaemonOptions options = new DaemonOptions();
    JCommander.newBuilder().addObject(options).build().parse(args);
    SluiceConf conf = ShuffleDaemon.loadConf(options, home);
    return megabytes(forMemoryMax(conf.get(ServerConf.MEMORY_MAX)));
  }

  /** The direct memory limit, in bytes, for a budget of {@code memoryMax} bytes. */
  static long forMemoryMax(long memoryMax) {
    return memoryMax + DirectMemoryLimit.headroom(memoryMax) + JDK_SLACK;
  }

  /** {@code bytes} rounded up to whole MiB, as a JVM size option takes it: {@code 1216m}. */
  static String megabytes(long bytes) {
    return ((bytes + (1L << 20) - 1) >> 20) + "m";
  }
}
