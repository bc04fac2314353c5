package io.sluice.server.metrics;

import com.codahale.metrics.Gauge;
import com.codahale.metrics.MetricRegistry;
import io.sluice.server.memory.MemoryAccount;
import io.sluice.server.memory.MemoryBudget;
import io.sluice.server.storage.ApplicationInfo;
import io.sluice.server.storage.DataDirectories;
import io.sluice.server.storage.DataDirectory;
import io.sluice.server.storage.ServerShuffle;
import io.sluice.server.storage.ShuffleRegistry;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.IntSupplier;
import java.util.function.Supplier;

/**
 * What a server's {@code /metrics} shows beyond its registry's metrics: the {@code server} label of
 * every sample, the paths of its data directories (their metrics' {@code directory} label) and,
 * read at each scrape, its applications ({@code sluice_application_*}, the {@code
 * sluice.metrics.topApplications} largest one by one and the rest as {@code other}).
 *
 * <p>It lives in the registry, as the gauge {@value #APPLICATIONS} (the number of applications), so
 * {@link PrometheusFormat#render} finds it there and JMX and the NodeManager's metrics bridge see a
 * plain number. A registry without one renders without the label and the application series.
 */
public final class PrometheusSource implements Gauge<Integer> {
  /** Its name in the registry; its value is the number of applications registered. */
  public static final String APPLICATIONS = PrometheusNames.SERVER + "applications";

  /** The memory budget's watermarks in bytes, registered by {@link #register}. */
  public static final String PAUSE_WATERMARK = PrometheusNames.SERVER + "memoryPauseWatermark";

  public static final String REPLICA_PAUSE_WATERMARK =
      PrometheusNames.SERVER + "memoryReplicaPauseWatermark";
  public static final String RESUME_WATERMARK = PrometheusNames.SERVER + "memoryResumeWatermark";

  /** What one application holds and moved on this server at one scrape. */
  public static final class Application {
    final String id;
    final long storedBytes;
    final long pushedBytes;
    final long readBytes;
    final long splits;
    final long memoryHeldBytes;
    final long refusedBytes;

    /**
     * @param splits its open and committed splits
     * @param memoryHeldBytes bytes of the memory budget it holds (its {@link MemoryAccount})
     * @param refusedBytes bytes of its pushes refused for its limit (sluice.app.maxStoredBytes)
     */
    public Application(
        String id,
        long storedBytes,
        long pushedBytes,
        long readBytes,
        long splits,
        long memoryHeldBytes,
        long refusedBytes) {
      this.id = Objects.requireNonNull(id, "id");
      this.storedBytes = storedBytes;
      this.pushedBytes = pushedBytes;
      this.readBytes = readBytes;
      this.splits = splits;
      this.memoryHeldBytes = memoryHeldBytes;
      this.refusedBytes = refusedBytes;
    }

    /** What the server's registry and memory budget say about one application now. */
    static Application of(ApplicationInfo info, MemoryBudget memory) {
      long splits = 0;
      long stored = 0;
      for (ServerShuffle s : info.shuffles()) {
        splits += s.openSplitCount() + s.committedSplitCount();
        stored += s.storedBytes();
      }
      return new Application(
          info.appId(),
          stored,
          info.pushedBytes(),
          info.readBytes(),
          splits,
          memory.heldBy(info.appId()),
          info.refusedBytes());
    }
  }

  private final String server;
  private final int topApplications;
  private final Supplier<List<Path>> directories;
  private final Supplier<List<Application>> applications;
  private final IntSupplier applicationCount;

  /**
   * @param server the {@code server} label ({@code host:port} of the shuffle port), or null for
   *     none
   * @param topApplications applications shown one by one; the rest are summed as {@code other}
   * @param directories the data directories, whose metrics are labelled with their paths
   * @param applications the applications at a scrape
   */
  public PrometheusSource(
      String server,
      int topApplications,
      Supplier<List<Path>> directories,
      Supplier<List<Application>> applications) {
    this(server, topApplications, directories, applications, () -> applications.get().size());
  }

  private PrometheusSource(
      String server,
      int topApplications,
      Supplier<List<Path>> directories,
      Supplier<List<Application>> applications,
      IntSupplier applicationCount) {
    if (topApplications < 0) {
      throw new IllegalArgumentException("topApplications must not be negative");
    }
    this.server = server;
    this.topApplications = topApplications;
    this.directories = directories;
    this.applications = applications;
    this.applicationCount = applicationCount;
  }

  /**
   * Registers a server's source in its registry, with the memory budget's watermarks as gauges
   * ({@value #PAUSE_WATERMARK}, {@value #REPLICA_PAUSE_WATERMARK}, {@value #RESUME_WATERMARK}).
   *
   * @param server {@code host:port} of the shuffle port
   * @param topApplications {@code sluice.metrics.topApplications}
   */
  public static PrometheusSource register(
      MetricRegistry metrics,
      String server,
      int topApplications,
      ShuffleRegistry shuffles,
      DataDirectories dirs,
      MemoryBudget memory) {
    List<Path> roots = new ArrayList<>();
    for (DataDirectory d : dirs.all()) {
      roots.add(d.root());
    }
    List<Path> fixed = List.copyOf(roots);
    PrometheusSource source =
        new PrometheusSource(
            server,
            topApplications,
            () -> fixed,
            () -> {
              List<Application> list = new ArrayList<>();
              for (ApplicationInfo info : shuffles.applications()) {
                list.add(Application.of(info, memory));
              }
              return list;
            },
            shuffles::applicationCount);
    metrics.register(PAUSE_WATERMARK, (Gauge<Long>) memory::pauseWatermarkBytes);
    metrics.register(REPLICA_PAUSE_WATERMARK, (Gauge<Long>) memory::replicaPauseWatermarkBytes);
    metrics.register(RESUME_WATERMARK, (Gauge<Long>) memory::resumeWatermarkBytes);
    metrics.register(APPLICATIONS, source);
    return source;
  }

  /** The source registered in {@code registry}, or null. */
  static PrometheusSource in(MetricRegistry registry) {
    Gauge<?> g = registry.getGauges().get(APPLICATIONS);
    return g instanceof PrometheusSource ? (PrometheusSource) g : null;
  }

  @Override
  public Integer getValue() {
    return applicationCount.getAsInt();
  }

  /** The {@code server} label, or null. */
  public String server() {
    return server;
  }

  public int topApplications() {
    return topApplications;
  }

  List<Path> directories() {
    return directories.get();
  }

  List<Application> applications() {
    return applications.get();
  }
}
