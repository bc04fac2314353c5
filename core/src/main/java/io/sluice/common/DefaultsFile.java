package io.sluice.common;

import io.sluice.auth.AuthConf;
import io.sluice.client.ClientConf;
import io.sluice.network.NetworkConf;
import io.sluice.network.TlsConf;
import io.sluice.server.IntegrityConf;
import io.sluice.server.ServerConf;
import io.sluice.server.admin.AdminConf;
import io.sluice.server.metrics.MetricsConf;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Renders {@code conf/sluice-defaults.conf} from {@link ConfigKeys#ALL}: every key in that order,
 * each as a {@code # doc} line and a {@code key = default} line, under one header per concern.
 * {@code DefaultsFileTest} fails when the checked-in file differs from {@link #render()}, and when
 * docs/configuration.md lacks a key's row with its default and doc.
 *
 * <p>Regenerate with {@code java -cp core/target/classes io.sluice.common.DefaultsFile
 * conf/sluice-defaults.conf} (without an argument it prints the file).
 */
public final class DefaultsFile {
  /** Header of each concern, keyed by the list its config class declares. */
  private static final Map<List<ConfigKey<?>>, String> SECTIONS = new LinkedHashMap<>();

  static {
    SECTIONS.put(
        ServerConf.KEYS,
        "Shuffle server: where it listens, where it writes, how much it may hold.");
    SECTIONS.put(
        AdminConf.KEYS,
        "Admin API (/api/v1 on sluice.metrics.port): who may act, and draining before a stop.");
    SECTIONS.put(
        MetricsConf.KEYS, "Metrics: what /metrics shows (Prometheus format, sluice.metrics.port).");
    SECTIONS.put(
        IntegrityConf.KEYS, "Data integrity: checksums of batches and blocks on the server.");
    SECTIONS.put(
        AuthConf.KEYS, "Authentication: who may act for an application (see docs/security.md).");
    SECTIONS.put(NetworkConf.KEYS, "Transport, shared by servers and clients.");
    SECTIONS.put(
        TlsConf.KEYS,
        "TLS on every port (shuffle servers, coordinator endpoint, metrics), servers and clients.");
    SECTIONS.put(ClientConf.KEYS, "Client library: pushing, reading, the lifecycle coordinator.");
  }

  private static final String OTHER_SECTION = "Other settings.";

  private static final String PREAMBLE =
      "# Sluice configuration: every key, its default and what it does.\n"
          + "#\n"
          + "# Generated from the code by io.sluice.common.DefaultsFile; do not edit by hand, a test\n"
          + "# checks this file against the code. Put your settings in conf/sluice.conf (or a file\n"
          + "# of your own passed with 'bin/shuffle-daemon start --conf FILE', or --set key=value);\n"
          + "# the daemon reads this file first, then conf/sluice.conf, then each --conf, then its\n"
          + "# command-line options. docs/configuration.md describes every key by component.\n"
          + "#\n"
          + "# Sizes take the suffixes k, m, g, t (powers of 1024); durations need a unit: ms, s,\n"
          + "# min or h. ${java.io.tmpdir} and ${user.home} are expanded.\n";

  private DefaultsFile() {}

  /** The text of {@code conf/sluice-defaults.conf}; lines end with {@code \n}. */
  public static String render() {
    StringBuilder text = new StringBuilder(PREAMBLE);
    String section = null;
    for (ConfigKey<?> key : ConfigKeys.ALL) {
      if (key.doc().contains("\n") || key.defaultValue().contains("\\")) {
        // one comment line per doc, and no escapes, so the file reads back as written
        throw new IllegalStateException(
            key + ": doc must be one line and the default must not contain a backslash");
      }
      String header = sectionOf(key);
      if (!header.equals(section)) {
        section = header;
        text.append("\n# ---- ").append(header).append("\n");
      }
      text.append("\n# ").append(key.doc()).append("\n");
      text.append(key.name()).append(" = ").append(key.defaultValue()).append("\n");
    }
    return text.toString();
  }

  private static String sectionOf(ConfigKey<?> key) {
    for (Map.Entry<List<ConfigKey<?>>, String> e : SECTIONS.entrySet()) {
      if (e.getKey().contains(key)) {
        return e.getValue();
      }
    }
    return OTHER_SECTION;
  }

  /** Writes the file to {@code args[0]}, or prints it when there is no argument. */
  public static void main(String[] args) throws IOException {
    if (args.length > 1) {
      throw new IllegalArgumentException("usage: DefaultsFile [OUTPUT_FILE]");
    }
    if (args.length == 1) {
      Files.writeString(Paths.get(args[0]), render(), StandardCharsets.UTF_8);
    } else {
      write(System.out, render());
    }
  }

  private static void write(PrintStream out, String text) {
    out.print(text);
    out.flush();
  }
}
