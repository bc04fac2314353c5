package io.sluice.spark.suites;

import com.codahale.metrics.MetricRegistry;
import io.sluice.common.Clock;
import io.sluice.common.SluiceConf;
import io.sluice.network.NetworkConf;
import io.sluice.server.ServerConf;
import io.sluice.server.ShuffleServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Sluice servers in the test JVM on ephemeral loopback ports, and the Spark settings to use them.
 */
final class LocalSluiceServers implements AutoCloseable {
  static final String MANAGER = "org.apache.spark.shuffle.sluice.SluiceShuffleManager";
  static final String DATA_IO = "org.apache.spark.shuffle.sluice.SluiceShuffleDataIO";

  private final List<ShuffleServer> servers = new ArrayList<>();

  LocalSluiceServers(Path root, int count) throws IOException {
    for (int i = 0; i < count; i++) {
      Path dir = Files.createDirectories(root.resolve("server" + i));
      SluiceConf conf =
          SluiceConf.of(
              Map.of(
                  "sluice.server.host", "127.0.0.1",
                  "sluice.server.port", "0",
                  "sluice.server.dirs", dir.toString(),
                  "sluice.network.ioThreads", "2",
                  "sluice.memory.max", "256m",
                  "sluice.commit.fsync", "false"));
      servers.add(
          new ShuffleServer(
              new ServerConf(conf), new NetworkConf(conf), new MetricRegistry(), Clock.SYSTEM));
    }
  }

  /** {@code spark.shuffle.manager}, the shuffle IO plugin and {@code spark.sluice.servers}. */
  Map<String, String> sparkSettings() {
    Map<String, String> s = new LinkedHashMap<>();
    s.put("spark.shuffle.manager", MANAGER);
    s.put("spark.shuffle.sort.io.plugin.class", DATA_IO);
    s.put(
        "spark.sluice.servers",
        servers.stream().map(v -> "127.0.0.1:" + v.port()).collect(Collectors.joining(",")));
    return s;
  }

  @Override
  public void close() {
    servers.forEach(ShuffleServer::close);
  }
}
