package io.sluice.daemon;

import com.beust.jcommander.Parameter;
import java.util.ArrayList;
import java.util.List;

/** Command-line options of {@code bin/shuffle-daemon run}. */
final class DaemonOptions {
  @Parameter(
      names = "--conf",
      description =
          "Configuration file (sluice.* keys) layered over conf/sluice-defaults.conf and"
              + " conf/sluice.conf; may be repeated, a later file wins")
  List<String> confFiles = new ArrayList<>();

  @Parameter(names = "--port", description = "Port to serve on (sluice.server.port); 0 picks one")
  Integer port;

  @Parameter(names = "--host", description = "Address to bind (sluice.server.host)")
  String host;

  @Parameter(
      names = "--dirs",
      description = "Comma-separated data directories (sluice.server.dirs)")
  String dirs;

  @Parameter(
      names = "--memory",
      description = "Most bytes of unflushed pushed data held, e.g. 2g (sluice.memory.max)")
  String memory;

  @Parameter(
      names = {"--set", "-D"},
      description = "Any other key, as key=value; may be repeated")
  List<String> settings = new ArrayList<>();

  @Parameter(
      names = "--port-file",
      description = "Write the bound port to this file once serving (for scripts and tests)")
  String portFile;

  @Parameter(
      names = {"--help", "-h"},
      help = true,
      description = "Show this help")
  boolean help;
}
