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
import io.sluice.server.IntegrityConf;
import io.sluice.server.ServerConf;
import io.sluice.server.ShuffleServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A server, its coordinator and a client of the server benchmark with batch checksums on or off:
 * on, pushers seal every batch, readers verify it and the server verifies it on push ({@code
 * sluice.integrity.verifyOnPush}, unless {@code --conf} sets it false); off, none of them, through
 * {@link ChecksumBenchmarkSwitch}, which is set only while one of its rounds runs. Two setups can
 * be open at once (each in a directory of its own), so that their rounds take turns. With {@code
 * sluice.tls.*} settings (from {@code --tls}) the server, coordinator and client speak TLS.
 */
final class ChecksumSetup implements AutoCloseable {
  final ChecksumRun run;
  private final ShuffleServer server;
  private final ClientContext context;
  private final ShuffleCoordinator coordinator;
  private final ShuffleRound round;
  private int nextShuffleId;

  private ChecksumSetup(
      ChecksumRun run,
      ShuffleServer server,
      ClientContext context,
      ShuffleCoordinator coordinator,
      ShuffleRound round) {
    this.run = run;
    this.server = server;
    this.context = context;
    this.coordinator = coordinator;
    this.round = round;
  }

  static ChecksumSetup open(
      ServerBenchmarkOptions options,
      Path dir,
      boolean checksums,
      WireSecurity security,
      Map<String, String> securitySettings,
      CpuMeter cpu)
      throws IOException {
    Map<String, String> settings = new TreeMap<>();
    settings.put(IntegrityConf.VERIFY_ON_PUSH.name(), Boolean.toString(checksums));
    settings.putAll(options.settings());
    if (!checksums) {
      settings.put(IntegrityConf.VERIFY_ON_PUSH.name(), "false");
    }
    settings.putAll(securitySettings);
    Files.createDirectories(dir);
    SluiceConf conf =
        SluiceConf.of(settings)
            .with(
                Map.of(
                    ServerConf.HOST.name(),
                    "127.0.0.1",
                    ServerConf.PORT.name(),
                    "0",
                    ServerConf.DIRS.name(),
                    dir.toString(),
                    ServerConf.MEMORY_MAX.name(),
                    Long.toString(options.memoryBytes),
                    ClientConf.COMPRESSION.name(),
                    options.compression));
    ServerConf serverConf = new ServerConf(conf);
    ChecksumRun run = new ChecksumRun(checksums, serverConf.integrity().verifyOnPush(), security);
    run.serverCpuSupported = cpu.serverCpuSupported();
    String appId =
        "sluice-bench-"
            + ProcessHandle.current().pid()
            + (checksums ? "-on" : "-off")
            + (security == WireSecurity.PLAIN ? "" : "-" + security.key);
    ShuffleServer server =
        new ShuffleServer(serverConf, new NetworkConf(conf), new MetricRegistry(), Clock.SYSTEM);
    ClientContext context = null;
    ShuffleCoordinator coordinator = null;
    try {
      context = new ClientContext(conf);
      coordinator =
          new ShuffleCoordinator(
              appId,
              List.of(ClientContext.address("127.0.0.1", server.port())),
              context,
              "127.0.0.1");
      ShuffleRound round =
          new ShuffleRound(
              context,
              coordinator,
              new CoordinatorClient(
                  context,
                  coordinator.appId(),
                  ClientContext.address("127.0.0.1", coordinator.port())),
              new Records(options.seed),
              cpu,
              server.metrics(),
              options.partitions,
              options.readers);
      return new ChecksumSetup(run, server, context, coordinator, round);
    } catch (IOException | RuntimeException e) {
      if (coordinator != null) {
        coordinator.close();
      }
      if (context != null) {
        context.close();
      }
      server.close();
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

  @Override
  public void close() {
    run.memoryPeak = server.memory().peak();
    run.checksumFailures = server.metrics().checksumFailures().getCount();
    coordinator.close();
    context.close();
    server.close();
  }
}
