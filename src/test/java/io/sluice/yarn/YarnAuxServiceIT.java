package io.sluice.yarn;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.codahale.metrics.MetricRegistry;
import io.sluice.client.ClientContext;
import io.sluice.client.ServerRequests;
import io.sluice.common.SluiceConf;
import io.sluice.e2e.ApplicationClient;
import io.sluice.protocol.StatusException;
import io.sluice.protocol.proto.ServerAddress;
import io.sluice.protocol.proto.Status;
import io.sluice.server.state.ServerStateStore;
import io.sluice.testutil.Records;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.URLClassLoader;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.management.ObjectName;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.apache.hadoop.yarn.server.nodemanager.NodeManager;
import org.apache.hadoop.yarn.server.nodemanager.containermanager.ContainerManagerImpl;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * A real NodeManager (MiniYARNCluster, one RM and one NM in this JVM) that loads the aux service
 * from the shaded jar through its isolated class loader, configured as an operator would: the
 * service starts with the NodeManager, a client pushes, commits and reads through it, the
 * NodeManager's stopApplication deletes a finished application's files, its metrics show in the
 * NodeManager's JMX, and stopping the cluster leaves no Sluice thread, port or open store behind.
 * One cluster serves the whole class (starting and stopping one takes seconds).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class YarnAuxServiceIT {
  private static final int PARTITIONS = 6;
  private static final int RECORDS = 150;
  private static final long WAIT_MILLIS = TimeUnit.SECONDS.toMillis(90);
  private static final String CLUSTER_SECRET = "the-yarn-clusters-sluice-secret-0123";
  private static final String ADMIN_TOKEN = "the-operators-admin-token-4567";
  private static int adminPort;

  private static Path shadedJar;
  private static MiniYARNCluster cluster;
  private static YarnClient yarn;
  private static int port;
  private static List<Path> dataDirs;

  @BeforeAll
  static void startCluster() throws Exception {
    String jar = System.getProperty("sluice.auxServiceJar");
    assertThat(jar).as("the build passes -Dsluice.auxServiceJar").isNotNull();
    shadedJar = Paths.get(jar);
    assertThat(shadedJar).as("the shaded jar, copied by the build").isRegularFile();

    YarnConfiguration conf = new YarnConfiguration();
    conf.set(YarnConfiguration.NM_AUX_SERVICES, SluiceShuffleService.NAME);
    conf.set(
        "yarn.nodemanager.aux-services." + SluiceShuffleService.NAME + ".class",
        "io.sluice.yarn.SluiceShuffleService");
    conf.set(
        "yarn.nodemanager.aux-services." + SluiceShuffleService.NAME + ".classpath",
        shadedJar.toString());
    conf.set("sluice.server.host", "127.0.0.1");
    conf.set("sluice.server.port", "0");
    conf.set("sluice.memory.max", "64m");
    conf.set("sluice.flush.size", "64k");
    conf.set("sluice.network.ioThreads", "2");
    conf.set("sluice.commit.fsync", "false");
    // authentication on, as an operator sets it in yarn-site.xml
    conf.set("sluice.auth.enabled", "true");
    conf.set("sluice.auth.clusterSecret", CLUSTER_SECRET);
    // the admin API on a free port, its actions behind a token
    try (java.net.ServerSocket free = new java.net.ServerSocket(0)) {
      adminPort = free.getLocalPort();
    }
    conf.set("sluice.metrics.port", Integer.toString(adminPort));
    conf.set("sluice.admin.token", ADMIN_TOKEN);
    conf.setInt(YarnConfiguration.RM_AM_MAX_ATTEMPTS, 1);
    cluster = new MiniYARNCluster("sluice-yarn", 1, 1, 1);
    cluster.init(conf);
    cluster.start();
    assertThat(cluster.waitForNodeManagersToConnect(WAIT_MILLIS)).isTrue();

    ByteBuffer meta = metadata().get(SluiceShuffleService.NAME);
    assertThat(meta).as("the NodeManager's aux service metadata").isNotNull();
    port = meta.getInt(0);
    dataDirs =
        Arrays.stream(nodeManager().getConfig().getTrimmedStrings(YarnConfiguration.NM_LOCAL_DIRS))
            .map(d -> Paths.get(d.replaceFirst("^file:", ""), "sluice"))
            .collect(Collectors.toList());

    yarn = YarnClient.createYarnClient();
    yarn.init(cluster.getConfig());
    yarn.start();
  }

  @AfterAll
  static void stopCluster() {
    if (yarn != null) {
      yarn.stop();
    }
    if (cluster != null) {
      cluster.stop();
    }
  }

  private static NodeManager nodeManager() {
    return cluster.getNodeManager(0);
  }

  private static Map<String, ByteBuffer> metadata() {
    return ((ContainerManagerImpl) nodeManager().getNMContext().getContainerManager())
        .getAuxServiceMetaData();
  }

  /** {@code <local-dir>/sluice} for each of the NodeManager's local directories. */
  private static List<Path> dataDirs() {
    return dataDirs;
  }

  @Test
  @Order(1)
  void theNodeManagerRunsTheServiceFromTheShadedJarInItsOwnClassLoader() throws Exception {
    assertThat(port).isPositive();
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
    }
    ClassLoader loader = serviceClassLoader();
    assertThat(loader.getClass().getName())
        .isEqualTo("org.apache.hadoop.util.ApplicationClassLoader");
    assertThat(Arrays.asList(((URLClassLoader) loader).getURLs()))
        .contains(shadedJar.toUri().toURL());
    Class<?> service = loader.loadClass("io.sluice.yarn.SluiceShuffleService");
    assertThat(service.getClassLoader()).isSameAs(loader);
    assertThat(service).isNotSameAs(SluiceShuffleService.class);
    // Netty is relocated, and its renamed native epoll library loads from the jar
    Class<?> epoll = loader.loadClass("io.sluice.shaded.io.netty.channel.epoll.Epoll");
    assertThat(epoll.getMethod("unavailabilityCause").invoke(null)).isNull();
    // RocksDB (not relocated) loaded its native library from the jar: the state store is open
    Path state = dataDirs().get(0).resolve(".sluice-state");
    assertThat(state.resolve("CURRENT")).exists();
    assertThat(state.resolve("LOCK")).exists();
  }

  /** The loader of the threads the service started: the NodeManager's isolated one. */
  private static ClassLoader serviceClassLoader() {
    List<Thread> housekeeping = sluiceThreads("sluice-housekeeping");
    assertThat(housekeeping).as("the server's housekeeping thread").hasSize(1);
    return housekeeping.get(0).getContextClassLoader();
  }

  @Test
  @Order(2)
  void aClientPushesCommitsAndReadsAndStopApplicationDeletesTheFiles() throws Exception {
    ApplicationId appId = submitSleepingApplication();
    // the NodeManager sends stopApplication only for applications it ran a container of
    await(
        () -> nodeManager().getNMContext().getApplications().containsKey(appId),
        "the NodeManager to launch " + appId);
    ServerAddress server = ClientContext.address("127.0.0.1", port);
    try (ClientContext stranger = new ClientContext(SluiceConf.of(Map.of()))) {
      assertThatThrownBy(
              () ->
                  stranger.call(
                      appId.toString(), server, ServerRequests.heartbeat(appId.toString())))
          .isInstanceOfSatisfying(
              StatusException.class, e -> assertThat(e.status()).isEqualTo(Status.FORBIDDEN));
    }
    try (ApplicationClient app =
        new ApplicationClient(
            appId.toString(),
            List.of(server),
            Map.of(
                "sluice.auth.enabled", "true",
                "sluice.auth.clusterSecret", CLUSTER_SECRET,
                "sluice.auth.appSecret", "the-applications-own-secret-0123"))) {
      app.coordinator().registerShuffle(0, 2, PARTITIONS);
      app.runMap(0, 0, PARTITIONS, RECORDS, 200);
      app.runMap(0, 1, PARTITIONS, RECORDS, 200);
      Records.Checker checker = app.readAll(0, PARTITIONS, 2);
      for (int m = 0; m < 2; m++) {
        for (int p = 0; p < PARTITIONS; p++) {
          assertThat(checker.count(m, p)).as("map %d partition %d", m, p).isEqualTo(RECORDS);
        }
      }
      assertThat(applicationFiles(appId)).hasSize(PARTITIONS);

      yarn.killApplication(appId);
      await(() -> applicationFiles(appId).isEmpty(), "stopApplication to delete " + appId);
      assertThat(dataDirs().stream().map(d -> d.resolve(appId.toString())))
          .allMatch(d -> !Files.exists(d));
    }
    // the NodeManager's metrics system shows the server's metrics in its JMX; it refreshes what
    // JMX sees once per metrics period (10 s by default)
    long pushed = 2L * PARTITIONS * RECORDS * 200;
    await(() -> jmxLong("bytesPushedCount") > pushed, "bytesPushedCount > " + pushed + " in JMX");
    assertThat(jmxLong("bytesFlushedCount")).isGreaterThan(pushed);
    assertThat(jmxLong("memoryMax")).isEqualTo(64L << 20);
  }

  @Test
  @Order(3)
  void theNodeManagersServiceAnswersTheAdminApiAndDecommissionsWithTheToken() throws Exception {
    HttpClient http = HttpClient.newHttpClient();
    URI api = URI.create("http://127.0.0.1:" + adminPort + "/api/v1/");
    HttpResponse<String> status =
        http.send(
            HttpRequest.newBuilder(api.resolve("status")).build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(status.statusCode()).isEqualTo(200);
    assertThat(status.body()).contains("\"state\":\"SERVING\"", "\"server\":\"127.0.0.1:" + port);

    HttpRequest.Builder decommission =
        HttpRequest.newBuilder(api.resolve("decommission"))
            .POST(HttpRequest.BodyPublishers.noBody());
    assertThat(http.send(decommission.build(), HttpResponse.BodyHandlers.ofString()).statusCode())
        .as("without the token")
        .isEqualTo(401);
    HttpResponse<String> drained =
        http.send(
            decommission.header("Authorization", "Bearer " + ADMIN_TOKEN).build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(drained.body()).as("no application holds data").contains("DRAINED");
    HttpResponse<String> serving =
        http.send(
            HttpRequest.newBuilder(api.resolve("cancel-decommission"))
                .header("Authorization", "Bearer " + ADMIN_TOKEN)
                .POST(HttpRequest.BodyPublishers.noBody())
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(serving.body()).contains("SERVING");
  }

  @Test
  @Order(4)
  void sparkOnYarnFindsTheNodeManagersAsItsServers() throws Exception {
    org.apache.spark.SparkConf spark =
        new org.apache.spark.SparkConf(false)
            .set("spark.master", "yarn")
            .set(org.apache.spark.shuffle.sluice.YarnServerDiscovery.SERVER_PORT, "" + port);
    for (Map.Entry<String, String> e : cluster.getConfig()) {
      spark.set("spark.hadoop." + e.getKey(), e.getValue());
    }
    List<ServerAddress> servers =
        org.apache.spark.shuffle.sluice.ServerDiscovery.fromConf(spark).servers(spark);
    assertThat(servers)
        .containsExactly(
            ClientContext.address(nodeManager().getNMContext().getNodeId().getHost(), port));
  }

  private static long jmxLong(String attribute) {
    try {
      ObjectName bean = new ObjectName("Hadoop:service=NodeManager,name=SluiceShuffleService");
      return ((Number) ManagementFactory.getPlatformMBeanServer().getAttribute(bean, attribute))
          .longValue();
    } catch (javax.management.JMException e) {
      throw new AssertionError("cannot read " + attribute + " of the Sluice source in JMX", e);
    }
  }

  private static ApplicationId submitSleepingApplication() throws Exception {
    ApplicationSubmissionContext context =
        yarn.createApplication().getApplicationSubmissionContext();
    context.setApplicationName("sluice-yarn-test");
    context.setResource(Resource.newInstance(256, 1));
    context.setAMContainerSpec(
        ContainerLaunchContext.newInstance(
            Collections.emptyMap(),
            Collections.emptyMap(),
            List.of("sleep 600"),
            null,
            null,
            null));
    return yarn.submitApplication(context);
  }

  @Test
  @Order(5)
  void stoppingTheNodeManagerLeavesNoSluiceThreadPortOrOpenStore() throws Exception {
    ClassLoader loader = serviceClassLoader();
    yarn.stop();
    yarn = null;
    cluster.stop();
    cluster = null;

    List<Thread> left = new ArrayList<>();
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.getName().startsWith("sluice-server")
          || t.getName().startsWith("sluice-housekeeping")
          || t.getName().startsWith("sluice-flusher")
          || t.getContextClassLoader() == loader) {
        t.join(WAIT_MILLIS); // a stopped event loop's thread may take a moment to end
        if (t.isAlive()) {
          left.add(t);
        }
      }
    }
    assertThat(left).as("threads the service left").isEmpty();
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
      throw new AssertionError("port " + port + " still accepts connections");
    } catch (java.net.ConnectException expected) {
      // closed
    }
    // the state store was closed: another process (here, this JVM) can open it
    Path state = dataDirs().get(0).resolve(".sluice-state");
    ServerStateStore.open(state, false, new MetricRegistry()).close();
  }

  private static List<Thread> sluiceThreads(String prefix) {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().startsWith(prefix))
        .collect(Collectors.toList());
  }

  private static List<Path> applicationFiles(ApplicationId appId) {
    List<Path> files = new ArrayList<>();
    for (Path dir : dataDirs()) {
      Path app = dir.resolve(appId.toString());
      if (!Files.exists(app)) {
        continue;
      }
      while (true) {
        List<Path> found = new ArrayList<>();
        try (Stream<Path> walk = Files.walk(app)) {
          walk.filter(Files::isRegularFile).forEach(found::add);
          files.addAll(found);
          break;
        } catch (java.nio.file.NoSuchFileException e) {
          break; // the whole application directory is gone
        } catch (java.io.IOException | java.io.UncheckedIOException e) {
          // a file vanished mid-walk: walk again rather than report a partial list
        }
      }
    }
    return files;
  }

  /** Waits for a condition the NodeManager reaches on its own threads, up to a generous bound. */
  private static void await(BooleanSupplier condition, String what) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MILLIS);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting for " + what);
      }
      Thread.sleep(50);
    }
  }
}
