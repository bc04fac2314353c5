package io.sluice.flink;

import io.sluice.client.ClientContext;
import io.sluice.client.mappartition.MapPartitionPlacement;
import io.sluice.client.mappartition.MapPartitionProbe;
import io.sluice.common.Futures;
import io.sluice.protocol.MapPartitionId;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.BatchExecutionOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.runtime.execution.SuppressRestartsException;
import org.apache.flink.runtime.executiongraph.ResultPartitionBytes;
import org.apache.flink.runtime.io.network.partition.ResultPartitionID;
import org.apache.flink.runtime.io.network.partition.ResultPartitionType;
import org.apache.flink.runtime.jobgraph.IntermediateDataSetID;
import org.apache.flink.runtime.shuffle.DefaultPartitionWithMetrics;
import org.apache.flink.runtime.shuffle.DefaultShuffleMetrics;
import org.apache.flink.runtime.shuffle.JobShuffleContext;
import org.apache.flink.runtime.shuffle.PartitionDescriptor;
import org.apache.flink.runtime.shuffle.PartitionWithMetrics;
import org.apache.flink.runtime.shuffle.ProducerDescriptor;
import org.apache.flink.runtime.shuffle.ShuffleDescriptor;
import org.apache.flink.runtime.shuffle.ShuffleMaster;
import org.apache.flink.runtime.shuffle.ShuffleMasterSnapshot;
import org.apache.flink.runtime.shuffle.ShuffleMasterSnapshotContext;
import org.apache.flink.runtime.shuffle.TaskInputsOutputsDescriptor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The JobManager side: one Sluice application per Flink job ({@code flink-<job id>}), which places
 * every result partition on a server and releases it when Flink no longer needs it. A server that
 * stops answering makes Flink forget the partitions it held, so their producers run again when a
 * consumer needs them. Only blocking exchanges are served.
 *
 * <p>With {@code sluice.replication.factor} 2 (read from Flink's configuration like every {@code
 * sluice.*} setting) every partition gets a primary and a replica server ({@link
 * MapPartitionPlacement}); its producer writes both and its consumers fall back to the replica. A
 * lost server then costs only the partitions whose other copy is lost too: the others stay tracked,
 * and no producer reruns for them.
 *
 * <p><b>JobManager failover</b> (batch jobs with {@code execution.batch.job-recovery.enabled}): the
 * state of each job ({@link JobShuffle}) goes into Flink's snapshots; the next JobManager's shuffle
 * master restores it, keeps heartbeating the job's application, and tells Flink which partitions of
 * finished producers the servers still hold ({@link #getPartitionWithMetrics}), so only the others
 * run again. The snapshot and restore methods exist in two forms: Flink 1.20 calls the ones without
 * a job id, Flink 2.x those with one; each line ignores the other form.
 */
public final class SluiceShuffleMaster implements ShuffleMaster<SluiceShuffleDescriptor> {
  private static final Logger LOG = LoggerFactory.getLogger(SluiceShuffleMaster.class);

  private final Configuration flinkConf;
  private final Map<JobID, JobShuffle> jobs = new ConcurrentHashMap<>();
  private final Map<String, JobShuffle> jobsByApp = new ConcurrentHashMap<>();
  private final boolean jobRecovery;

  /** Where warnings about the configuration go: the JobManager's log. */
  private final Consumer<String> configWarnings;

  private List<InetSocketAddress> servers;
  private FlinkClientConf conf;
  private ClientContext context;

  public SluiceShuffleMaster(Configuration flinkConf) {
    this(flinkConf, LOG::warn);
  }

  /** With the configuration's warnings sent to {@code configWarnings} (tests). */
  SluiceShuffleMaster(Configuration flinkConf, Consumer<String> configWarnings) {
    this.flinkConf = flinkConf;
    this.configWarnings = configWarnings;
    this.jobRecovery = flinkConf.get(BatchExecutionOptions.JOB_RECOVERY_ENABLED);
  }

  /** Reads the settings (failing on a missing or invalid {@code sluice.servers}) and connects. */
  @Override
  public synchronized void start() {
    if (context != null) {
      return;
    }
    // first: a misspelled key may be why the settings below fail
    for (String warning : FlinkClientConf.unknownKeyWarnings(flinkConf)) {
      configWarnings.accept("Flink configuration: " + warning);
    }
    this.servers = FlinkClientConf.servers(flinkConf);
    this.conf = new FlinkClientConf(flinkConf, segmentSize(flinkConf));
    this.context = new ClientContext(conf.sluiceConf());
    LOG.info(
        "Sluice shuffle master (plugin for Flink {}) started with servers {}",
        FlinkLine.NAME,
        format(servers));
  }

  private static String format(List<InetSocketAddress> servers) {
    StringBuilder b = new StringBuilder();
    for (InetSocketAddress s : servers) {
      b.append(b.length() == 0 ? "" : ",")
          .append(s.getHostString())
          .append(':')
          .append(s.getPort());
    }
    return b.toString();
  }

  static int segmentSize(Configuration flinkConf) {
    return (int) flinkConf.get(TaskManagerOptions.MEMORY_SEGMENT_SIZE).getBytes();
  }

  static String appId(JobID jobId) {
    return "flink-" + jobId.toHexString();
  }

  @Override
  public void registerJob(JobShuffleContext jobContext) {
    start();
    JobID jobId = jobContext.getJobId();
    String appId = appId(jobId);
    MapPartitionPlacement placement =
        new MapPartitionPlacement(context, appId, servers, server -> serverLost(appId, server));
    JobShuffle job = new JobShuffle(appId, jobContext, placement);
    jobs.put(jobId, job);
    jobsByApp.put(appId, job);
    LOG.info("Flink job {} shuffles through Sluice as application {}", jobId, appId);
  }

  @Override
  public CompletableFuture<SluiceShuffleDescriptor> registerPartitionWithProducer(
      JobID jobId, PartitionDescriptor partition, ProducerDescriptor producer) {
    ResultPartitionType type = partition.getPartitionType();
    if (!type.isBlockingOrBlockingPersistentResultPartition()) {
      // a setting to change, not a failure a restart could fix
      return CompletableFuture.failedFuture(
          new SuppressRestartsException(
              new IllegalStateException(nonBlocking(partition.getResultId(), type))));
    }
    JobShuffle job = jobs.get(jobId);
    if (job == null) {
      return CompletableFuture.failedFuture(
          new IllegalStateException(
              "Flink job " + jobId + " is not registered with the Sluice shuffle master"));
    }
    int shuffleId = job.shuffleId(partition.getResultId());
    MapPartitionId id =
        new MapPartitionId(
            job.appId(),
            shuffleId,
            partition.getPartitionId().getPartitionNumber(),
            job.attempt(producer.getProducerExecutionId().getAttemptNumber()));
    ResultPartitionID flinkId =
        new ResultPartitionID(partition.getPartitionId(), producer.getProducerExecutionId());
    List<InetSocketAddress> fallback = List.of(servers.get(0));
    return job.placement()
        .place(
            shuffleId,
            partition.getTotalNumberOfPartitions(),
            partition.getNumberOfSubpartitions(),
            context.conf().replicationFactor())
        .handle(
            (placed, error) -> {
              // never completed exceptionally here, on the placement thread: Flink handles a
              // failed registration on the thread that completes it, outside the JobMaster's
              // main thread. The producer is deployed to write where no server took it, fails
              // there, and Flink reruns it.
              List<InetSocketAddress> copies = placed;
              if (error != null) {
                LOG.warn(
                    "Could not place {} of Flink job {}; its producer fails on {} and Flink reruns"
                        + " it: {}",
                    id,
                    jobId,
                    format(fallback),
                    Futures.cause(error).getMessage());
                copies = fallback;
              }
              InetSocketAddress primary = copies.get(0);
              InetSocketAddress replica = copies.size() > 1 ? copies.get(1) : null;
              SluiceShuffleDescriptor descriptor =
                  new SluiceShuffleDescriptor(
                      flinkId,
                      id,
                      primary.getHostString(),
                      primary.getPort(),
                      replica == null ? null : replica.getHostString(),
                      replica == null ? 0 : replica.getPort(),
                      partition.getNumberOfSubpartitions());
              job.placed(descriptor, copies);
              LOG.debug("Placed {}", descriptor);
              return descriptor;
            });
  }

  @Override
  public void releasePartitionExternally(ShuffleDescriptor shuffleDescriptor) {
    if (!(shuffleDescriptor instanceof SluiceShuffleDescriptor)) {
      return;
    }
    SluiceShuffleDescriptor descriptor = (SluiceShuffleDescriptor) shuffleDescriptor;
    JobShuffle job = jobsByApp.get(descriptor.mapPartitionId().appId());
    if (job == null) {
      return; // the job ended: its application's files were dropped with it
    }
    for (InetSocketAddress server : job.released(descriptor.getResultPartitionID())) {
      job.placement().release(descriptor.mapPartitionId(), server);
    }
  }

  /**
   * Called when the job's JobManager stops: the job ended, or (with {@code
   * execution.batch.job-recovery.enabled}) the JobManager may have lost leadership, which Flink
   * does not tell apart. Without job recovery, or when no partition is tracked any more (Flink
   * releases every partition when a job ends; a running job that placed any keeps some until its
   * last stage is done), the application's files are dropped at once. Otherwise they are left for
   * the next JobManager, which takes the job over if it comes within {@code sluice.app.timeout};
   * after that the servers expire the application.
   */
  @Override
  public void unregisterJob(JobID jobId) {
    JobShuffle job = jobs.remove(jobId);
    if (job == null) {
      return;
    }
    jobsByApp.remove(job.appId());
    if (jobRecovery && !job.tracksNothing()) {
      job.placement().detach();
      LOG.info(
          "Flink job {} left this JobManager with result partitions on the servers; Sluice"
              + " application {} stays there for a JobManager that takes the job over"
              + " (execution.batch.job-recovery.enabled), at most sluice.app.timeout",
          jobId,
          job.appId());
    } else {
      job.placement().close();
      LOG.info("Flink job {} ended; dropped Sluice application {}", jobId, job.appId());
    }
  }

  /**
   * Yes: with {@code execution.batch.job-recovery.enabled}, a JobManager failover keeps the
   * partitions of finished producers ({@link #snapshotState}, {@link #restoreState}, {@link
   * #getPartitionWithMetrics}).
   */
  @Override
  public boolean supportsBatchSnapshot() {
    return true;
  }

  /** Flink 1.20's snapshot: every job this shuffle master tracks. */
  public void snapshotState(
      CompletableFuture<ShuffleMasterSnapshot> snapshot, ShuffleMasterSnapshotContext context) {
    Map<JobID, JobShuffle.State> states = new HashMap<>();
    for (Map.Entry<JobID, JobShuffle> e : jobs.entrySet()) {
      states.put(e.getKey(), e.getValue().snapshot());
    }
    snapshot.complete(new SluiceShuffleMasterSnapshot(states));
  }

  /** Flink 2.x's snapshot: the one job {@code jobId}. */
  public void snapshotState(
      CompletableFuture<ShuffleMasterSnapshot> snapshot,
      ShuffleMasterSnapshotContext context,
      JobID jobId) {
    JobShuffle job = jobs.get(jobId);
    snapshot.complete(
        new SluiceShuffleMasterSnapshot(job == null ? Map.of() : Map.of(jobId, job.snapshot())));
  }

  /**
   * Flink 1.20's restore, which names no job: every job of the snapshot registered here that has
   * not placed anything yet takes over its state. A recovering job registers, then restores, then
   * schedules; a job already running in the same session cluster is left alone.
   */
  public void restoreState(List<ShuffleMasterSnapshot> snapshots) {
    for (Map.Entry<JobID, JobShuffle> e : jobs.entrySet()) {
      if (e.getValue().isUntouched()) {
        restoreState(snapshots, e.getKey());
      }
    }
  }

  /** Flink 2.x's restore: job {@code jobId} takes over the state of the last snapshot. */
  public void restoreState(List<ShuffleMasterSnapshot> snapshots, JobID jobId) {
    JobShuffle job = jobs.get(jobId);
    JobShuffle.State state = null;
    for (ShuffleMasterSnapshot s : snapshots) {
      if (s instanceof SluiceShuffleMasterSnapshot) {
        JobShuffle.State st = ((SluiceShuffleMasterSnapshot) s).jobs().get(jobId);
        state = st != null ? st : state;
      }
    }
    if (job == null || state == null) {
      return;
    }
    job.placement().adopt(job.restore(state));
    LOG.info(
        "Flink job {} taken over from a JobManager before: Sluice application {} keeps {} result"
            + " partitions it placed",
        jobId,
        job.appId(),
        state.partitions());
  }

  /** Whether {@code partition} of job {@code jobId} is a Sluice partition this master tracks. */
  boolean tracks(JobID jobId, ResultPartitionID partition) {
    JobShuffle job = jobs.get(jobId);
    return job != null && job.descriptor(partition) != null;
  }

  /**
   * The expected partitions that a server still holds committed, each with its bytes per
   * subpartition (as stored: compressed when the writer compressed): after a JobManager failover,
   * their producers need not run again. Those no server holds (or a server restarted since their
   * commit no longer has numbers for) are left out, and Flink reruns their producers. Waits at most
   * {@code timeout}.
   */
  @Override
  public CompletableFuture<Collection<PartitionWithMetrics>> getPartitionWithMetrics(
      JobID jobId, Duration timeout, Set<ResultPartitionID> expectedPartitions) {
    JobShuffle job = jobs.get(jobId);
    if (job == null) {
      return CompletableFuture.completedFuture(List.of());
    }
    List<CompletableFuture<PartitionWithMetrics>> probes = new ArrayList<>();
    for (ResultPartitionID id : expectedPartitions) {
      SluiceShuffleDescriptor d = job.descriptor(id);
      if (d == null) {
        continue;
      }
      probes.add(
          MapPartitionProbe.committedBytes(
                  context, d.mapPartitionId(), d.servers(), d.numSubpartitions())
              .<PartitionWithMetrics>thenApply(
                  bytes ->
                      bytes == null
                          ? null
                          : new DefaultPartitionWithMetrics(
                              d, new DefaultShuffleMetrics(new ResultPartitionBytes(bytes))))
              .completeOnTimeout(null, timeout.toMillis(), TimeUnit.MILLISECONDS));
    }
    return CompletableFuture.allOf(probes.toArray(new CompletableFuture<?>[0]))
        .thenApply(
            ignored -> {
              List<PartitionWithMetrics> found = new ArrayList<>();
              for (CompletableFuture<PartitionWithMetrics> p : probes) {
                PartitionWithMetrics m = p.join();
                if (m != null) {
                  found.add(m);
                }
              }
              LOG.info(
                  "Flink job {}: {} of {} expected result partitions are on the Sluice servers;"
                      + " Flink reruns the producers of the others",
                  jobId,
                  found.size(),
                  expectedPartitions.size());
              Set<ResultPartitionID> kept = new HashSet<>();
              for (PartitionWithMetrics m : found) {
                kept.add(m.getPartition().getResultPartitionID());
              }
              job.keepRestored(kept)
                  .forEach(
                      (dropped, copies) -> {
                        for (InetSocketAddress server : copies) {
                          job.placement().release(dropped, server);
                        }
                      });
              return found;
            });
  }

  /**
   * The network memory a task's writers and gates take: {@code sluice.flink.regionSize} per result
   * partition and {@code sluice.flink.inputGateMemory} per input gate.
   *
   * @throws IllegalStateException when an input or output is not a blocking exchange
   */
  @Override
  public MemorySize computeShuffleMemorySizeForTask(TaskInputsOutputsDescriptor task) {
    for (Map.Entry<IntermediateDataSetID, ResultPartitionType> e :
        task.getPartitionTypes().entrySet()) {
      checkBlocking(e.getKey(), e.getValue());
    }
    for (Map.Entry<IntermediateDataSetID, ResultPartitionType> e :
        task.getInputPartitionTypes().entrySet()) {
      checkBlocking(e.getKey(), e.getValue());
    }
    FlinkClientConf c =
        conf != null ? conf : new FlinkClientConf(flinkConf, segmentSize(flinkConf));
    long perWriter = (long) c.writerBuffers() * c.segmentSize();
    long perGate = (long) c.gateBuffers() * c.segmentSize();
    return new MemorySize(
        perWriter * task.getPartitionTypes().size() + perGate * task.getInputGateNums());
  }

  private static void checkBlocking(IntermediateDataSetID dataSet, ResultPartitionType type) {
    if (!type.isBlockingOrBlockingPersistentResultPartition()) {
      throw new IllegalStateException(nonBlocking(dataSet, type));
    }
  }

  static String nonBlocking(IntermediateDataSetID dataSet, ResultPartitionType type) {
    return "Sluice serves blocking exchanges only, but the exchange of intermediate data set "
        + dataSet
        + " is "
        + type
        + ". For a batch job set execution.batch-shuffle-mode: ALL_EXCHANGES_BLOCKING (with"
        + " execution.runtime-mode: BATCH); streaming jobs need Flink's default shuffle service:"
        + " set sluice.flink.fallback: auto to run them on Flink's Netty shuffle in this cluster.";
  }

  private void serverLost(String appId, InetSocketAddress server) {
    JobShuffle job = jobsByApp.get(appId);
    if (job == null) {
      return;
    }
    List<ResultPartitionID> lost = job.lostOn(server);
    if (lost.isEmpty()) {
      LOG.info(
          "Sluice server {}:{} of application {} stopped answering; every partition on it has a"
              + " copy on another server, so no producer reruns",
          server.getHostString(),
          server.getPort(),
          appId);
      return;
    }
    LOG.warn(
        "Sluice server {}:{} of application {} stopped answering: {} result partitions on it are"
            + " lost (no other copy); Flink reruns their producers when consumers need them",
        server.getHostString(),
        server.getPort(),
        appId,
        lost.size());
    job.context()
        .stopTrackingAndReleasePartitions(lost)
        .whenComplete(
            (ok, error) -> {
              if (error != null) {
                LOG.warn(
                    "Could not tell Flink that {} partitions of application {} are lost on {}:{}",
                    lost.size(),
                    appId,
                    server.getHostString(),
                    server.getPort(),
                    error);
              }
            });
  }

  @Override
  public synchronized void close() {
    for (JobID jobId : List.copyOf(jobs.keySet())) {
      unregisterJob(jobId);
    }
    if (context != null) {
      context.close();
      context = null;
    }
  }
}
