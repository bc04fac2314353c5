package io.sluice.benchmarks;

import com.codahale.metrics.MetricRegistry;
import io.sluice.client.ChecksumBenchmarkSwitch;
import io.sluice.client.ClientConf;
import io.sluice.client.ClientContext;
import io.sluice.client.coordinator.CoordinatorClient;
import io.sluice.client.coordinator.ShuffleCoordinator;
import io.sluice.common.Clock;
import io.sluice.common.SluiceConf;
import io.sluice.network.NetworkConf;
import io.sluice.protocol.proto.ServerAddress;
import io.sluice.server.IntegrityConf;
import io.sluice.server.ServerConf;
import io.sluice.server.ServerMetrics;
import io.sluice.server.ShuffleServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The servers, coordinator and client of the server benchmark with batch checksums on or off: on,
 * pushers seal every batch, readers verify it and the server verifies it on push ({@code
 * sluice.integrity.verifyOnPush}, unless {@code --conf} sets it false); off, none of them, through
 * {@link ChecksumBenchmarkSwitch}, which is set only while one of its rounds runs. Two setups can
 * be open at once (each in a directory of its own), so that their rounds take turns. With {@code
 * sluice.tls.*} settings (from {@code --tls}) the servers, coordinator and client speak TLS. With
 * {@code --replication 2} or {@code both} a setup has two servers (data directories {@code
 * server-0} and {@code server-1}); {@link #sharing} opens a second client and coordinator with
 * another replication factor on the same servers.
 */
final class ChecksumSetup implements AutoCloseable {
  final ChecksumRun run;
  private final SluiceConf conf;
  private final List<ShuffleServer> servers;
  private final boolean ownsServers;
  private final ClientContext context;
  private final ShuffleCoordinator coordinator;
  private final ShuffleRound round;
  private int nextShuffleId;

  private ChecksumSetup(
      ChecksumRun run,
      SluiceConf conf,
      List<ShuffleServer> servers,
      boolean ownsServers,
      ClientContext context,
      ShuffleCoordinator coordinator,
      ShuffleRound round) {
    this.run = run;
    this.conf = conf;
    this.servers = servers;
    this.ownsServers = ownsServers;
    this.context = context;
    this.coordinator = coordinator;
    this.round = round;
  }

  /** Opens {@link ServerBenchmarkOptions#serverCount} servers under {@code dir} and a client. */
  static ChecksumSetup open(
      ServerBenchmarkOptions options,
      Path dir,
      boolean checksums,
      WireSecurity security,
      Map<String, String> securitySettings,
      int replicationFactor,
      CpuMeter cpu)
      throws IOException {
    Map<String, String> settings = new TreeMap<>();
    settings.put(IntegrityConf.VERIFY_ON_PUSH.name(), Boolean.toString(checksums));
    settings.putAll(options.settings());
    if (!checksums) {
      settings.put(IntegrityConf.VERIFY_ON_PUSH.name(), "false");
    }
    settings.putAll(securitySettings);
    SluiceConf conf =
        SluiceConf.of(settings)
            .with(
                Map.of(
                    ServerConf.HOST.name(),
                    "127.0.0.1",
                    ServerConf.PORT.name(),
                    "0",
                    ServerConf.MEMORY_MAX.name(),
                    Long.toString(options.memoryBytes),
                    ClientConf.COMPRESSION.name(),
                    options.compression));
    List<ShuffleServer> servers = new ArrayList<>();
    try {
      for (int i = 0; i < options.serverCount(); i++) {
        Path serverDir = options.serverCount() == 1 ? dir : dir.resolve("server-" + i);
        Files.createDirectories(serverDir);
        SluiceConf serverConf = conf.with(Map.of(ServerConf.DIRS.name(), serverDir.toString()));
        servers.add(
            new ShuffleServer(
                new ServerConf(serverConf),
                new NetworkConf(serverConf),
                new MetricRegistry(),
                Clock.SYSTEM));
      }
      return client(options, conf, servers, true, checksums, security, replicationFactor, cpu);
    } catch (IOException | RuntimeException e) {
      servers.forEach(ShuffleServer::close);
      throw e;
    }
  }

  /**
   * A setup on this one's servers with another replication factor: a client and coordinator (an
   * application) of its own. Close it before this one, which closes the servers.
   */
  ChecksumSetup sharing(ServerBenchmarkOptions options, int replicationFactor, CpuMeter cpu)
      throws IOException {
    return client(
        options, conf, servers, false, run.checksums, run.security, replicationFactor, cpu);
  }

  private static ChecksumSetup client(
      ServerBenchmarkOptions options,
      SluiceConf conf,
      List<ShuffleServer> servers,
      boolean ownsServers,
      boolean checksums,
      WireSecurity security,
      int replicationFactor,
      CpuMeter cpu)
      throws IOException {
    ChecksumRun run =
        new ChecksumRun(
            checksums,
            new ServerConf(conf).integrity().verifyOnPush(),
            security,
            replicationFactor);
    run.serverCpuSupported = cpu.serverCpuSupported();
    String appId =
        "sluice-bench-"
            + ProcessHandle.current().pid()
            + (checksums ? "-on" : "-off")
            + (security == WireSecurity.PLAIN ? "" : "-" + security.key)
            + "-factor"
            + replicationFactor;
    List<ServerAddress> addresses = new ArrayList<>();
    List<ServerMetrics> metrics = new ArrayList<>();
    for (ShuffleServer server : servers) {
      addresses.add(ClientContext.address("127.0.0.1", server.port()));
      metrics.add(server.metrics());
    }
    ClientContext context = null;
    ShuffleCoordinator coordinator = null;
    try {
      context =
          new ClientContext(
              conf.with(
                  Map.of(
                      ClientConf.REPLICATION_FACTOR.name(), Integer.toString(replicationFactor))));
      coordinator = new ShuffleCoordinator(appId, addresses, context, "127.0.0.1");
      ShuffleRound round =
          new ShuffleRound(
              context,
              coordinator,
              new CoordinatorClient(
                  context,
                  coordinator.appId(),
                  ClientContext.address("127.0.0.1", coordinator.port())),
              new Records(options.seed, options.recordBytes),
              cpu,
              metrics,
              options.partitions,
              options.readers,
              options.mapsPerPusher,
              options.partitionsPerReader);
      return new ChecksumSetup(run, conf, servers, ownsServers, context, coordinator, round);
    } catch (IOException | RuntimeException e) {
      if (coordinator != null) {
        coordinator.close();
      }
      if (context != null) {
        context.close();
      }
      throw e;
    }
  }

  /** One shuffle of {@code bytes} from {@code pushers} map tasks, with this setup's checksums. */
  RoundResult round(int pushers, long bytes) throws InterruptedException {
    if (!run.checksums) {
      System.setProperty(ChecksumBenchmarkSwitch.PROPERTY, "true");
    }
    try {
      return round.run(nextShuffleId++, pushers, bytes);
    } catch (IOException | RuntimeException e) {
      return RoundResult.failed(pushers, e.toString());
    } finally {
      System.clearProperty(ChecksumBenchmarkSwitch.PROPERTY);
    }
  }

  /** Closes the client and coordinator, and the servers unless they are {@link #sharing}'s. */
  @Override
  public void close() {
    for (ShuffleServer server : servers) {
      run.memoryPeak = Math.max(run.memoryPeak, server.memory().peak());
      run.checksumFailures += server.metrics().checksumFailures().getCount();
    }
    coordinator.close();
    context.close();
    if (ownsServers) {
      servers.forEach(ShuffleServer::close);
    }
  }
}
