package io.sluice.ctl;

import com.beust.jcommander.Parameter;
import com.beust.jcommander.ParametersDelegate;
import java.util.ArrayList;
import java.util.List;

/** Command-line options of {@code bin/sluice-ctl}: the ones every command takes, and each one's. */
final class CtlOptions {
  private CtlOptions() {}

  /**
   * Which servers and how to reach them; accepted before the command name and after it (after
   * wins). Unset values are null, so that the two places can be merged.
   */
  static final class Common {
    @Parameter(
        names = "--servers",
        description = "Comma-separated admin addresses host:port (sluice.metrics.port)")
    String servers;

    @Parameter(
        names = "--yarn",
        description =
            "ResourceManager web address host:port (or http[s]://host:port; comma-separated for"
                + " HA): the servers are its RUNNING NodeManagers")
    String yarn;

    @Parameter(
        names = "--admin-port",
        description = "The servers' admin port with --yarn (default 9291)")
    Integer adminPort;

    @Parameter(names = "--https", description = "Talk HTTPS (servers with sluice.tls.enabled)")
    Boolean https;

    @Parameter(
        names = "--trust-store",
        description = "Key store (PKCS12 or JKS) of the certificates or CAs to trust over HTTPS")
    String trustStore;

    @Parameter(
        names = "--trust-store-password",
        description = "Password of --trust-store (or env SLUICE_TRUST_STORE_PASSWORD)")
    String trustStorePassword;

    @Parameter(
        names = "--token",
        description = "The servers' sluice.admin.token, for actions (or env SLUICE_ADMIN_TOKEN)")
    String token;

    @Parameter(names = "--token-file", description = "A file holding the token")
    String tokenFile;

    @Parameter(names = "--timeout", description = "Seconds to wait for each answer (default 10)")
    Integer timeout;

    @Parameter(names = "--parallelism", description = "Servers asked at the same time (default 32)")
    Integer parallelism;

    @Parameter(names = "--json", description = "One JSON document on stdout instead of tables")
    Boolean json;

    @Parameter(
        names = {"--help", "-h"},
        help = true,
        description = "Show the help")
    boolean help;

    /** Takes every value {@code later} sets. */
    void override(Common later) {
      servers = later.servers != null ? later.servers : servers;
      yarn = later.yarn != null ? later.yarn : yarn;
      adminPort = later.adminPort != null ? later.adminPort : adminPort;
      https = later.https != null ? later.https : https;
      trustStore = later.trustStore != null ? later.trustStore : trustStore;
      trustStorePassword =
          later.trustStorePassword != null ? later.trustStorePassword : trustStorePassword;
      token = later.token != null ? later.token : token;
      tokenFile = later.tokenFile != null ? later.tokenFile : tokenFile;
      timeout = later.timeout != null ? later.timeout : timeout;
      parallelism = later.parallelism != null ? later.parallelism : parallelism;
      json = later.json != null ? later.json : json;
      help |= later.help;
    }

    boolean json() {
      return Boolean.TRUE.equals(json);
    }

    boolean https() {
      return Boolean.TRUE.equals(https);
    }
  }

  /** A command that takes only the common options. */
  static class Command {
    @ParametersDelegate Common common = new Common();
  }

  /** A command about one application: {@code shuffles APP}, {@code expire APP}. */
  static final class AppCommand extends Command {
    @Parameter(description = "APP")
    List<String> app = new ArrayList<>();
  }

  /** {@code watch}. */
  static final class Watch extends Command {
    @Parameter(
        names = "--interval",
        description = "Seconds between refreshes (default 2; fractions allowed)")
    Double interval;

    @Parameter(names = "--count", description = "Stop after this many refreshes")
    Integer count;
  }
}
