package io.sluice.benchmarks;

import com.beust.jcommander.IParameterValidator;
import com.beust.jcommander.ParameterException;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * The {@code --chart FILE} option every benchmark has: checked as the options are parsed (so a bad
 * path ends the command with exit code 2 before anything runs), and, after the run, the {@link
 * BarChart} of the command's result table written there.
 */
public final class ChartOption implements IParameterValidator {
  static final String NAME = "--chart";

  /** JCommander makes one for every {@code --chart} it parses. */
  public ChartOption() {}

  /** Checks the file named by {@code --chart}; JCommander calls it when the option is given. */
  @Override
  public void validate(String name, String value) {
    check(name, value);
  }

  /**
   * The file {@code value} names, when a chart can be written there: its directory exists and is
   * writable, and it is not a directory itself.
   *
   * @throws ParameterException naming {@code option} and the path
   */
  static Path check(String option, String value) {
    if (value == null || value.isBlank()) {
      throw new ParameterException(option + " needs a file name, e.g. " + option + " bench.svg");
    }
    Path file;
    try {
      file = Paths.get(value).toAbsolutePath().normalize();
    } catch (RuntimeException e) {
      throw new ParameterException(option + ": '" + value + "' is not a file name");
    }
    if (Files.isDirectory(file)) {
      throw new ParameterException(option + ": " + file + " is a directory, not a file");
    }
    Path parent = file.getParent();
    if (parent == null || !Files.isDirectory(parent)) {
      throw new ParameterException(
          option + ": the directory of " + file + " does not exist (" + parent + ")");
    }
    if (!Files.isWritable(parent) || (Files.exists(file) && !Files.isWritable(file))) {
      throw new ParameterException(option + ": cannot write " + file);
    }
    return file;
  }

  /**
   * Writes {@code chart} to {@code file} and prints its path on {@code out}; a chart that cannot be
   * written is reported there too, not thrown: the run's results stand without it.
   */
  static void write(BarChart chart, Path file, PrintStream out) {
    try {
      chart.write(file);
      out.println("# chart: " + file.toAbsolutePath());
    } catch (IOException e) {
      out.println("# chart not written to " + file.toAbsolutePath() + ": " + e);
    }
  }
}
