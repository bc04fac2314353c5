package io.sluice.flink;

import io.sluice.client.ClientContext;
import io.sluice.client.mappartition.MapPartitionPlacement;
import io.sluice.protocol.MapPartitionId;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.runtime.execution.SuppressRestartsException;
import org.apache.flink.runtime.io.network.partition.ResultPartitionID;
import org.apache.flink.runtime.io.network.partition.ResultPartitionType;
import org.apache.flink.runtime.jobgraph.IntermediateDataSetID;
import org.apache.flink.runtime.shuffle.JobShuffleContext;
import org.apache.flink.runtime.shuffle.PartitionDescriptor;
import org.apache.flink.runtime.shuffle.ProducerDescriptor;
import org.apache.flink.runtime.shuffle.ShuffleDescriptor;
import org.apache.flink.runtime.shuffle.ShuffleMaster;
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
 */
public final class SluiceShuffleMaster implements ShuffleMaster<SluiceShuffleDescriptor> {
  private static final Logger LOG = LoggerFactory.getLogger(SluiceShuffleMaster.class);

  private final Configuration flinkConf;
  private final Map<JobID, JobShuffle> jobs = new ConcurrentHashMap<>();
  private final Map<String, JobShuffle> jobsByApp = new ConcurrentHashMap<>();
  private List<InetSocketAddress> servers;
  private FlinkClientConf conf;
  private ClientContext context;

  public SluiceShuffleMaster(Configuration flinkConf) {
    this.flinkConf = flinkConf;
  }

  /** Reads the settings (failing on a missing or invalid {@code sluice.servers}) and connects. */
  @Override
  public synchronized void start() {
    if (context != null) {
      return;
    }
    this.servers = FlinkClientConf.servers(flinkConf);
    this.conf = new FlinkClientConf(flinkConf, segmentSize(flinkConf));
    this.context = new ClientContext(conf.sluiceConf());
    LOG.info("Sluice shuffle master started with servers {}", format(servers));
    if (!conf.unknownKeys().isEmpty()) {
      LOG.warn("Unknown Sluice settings in Flink's configuration (typos?): {}", conf.unknownKeys());
    }
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
            producer.getProducerExecutionId().getAttemptNumber());
    ResultPartitionID flinkId =
        new ResultPartitionID(partition.getPartitionId(), producer.getProducerExecutionId());
    return job.placement()
        .place(
            shuffleId,
            partition.getTotalNumberOfPartitions(),
            partition.getNumberOfSubpartitions(),
            context.conf().replicationFactor())
        .thenApply(
            copies -> {
              job.placed(flinkId, copies);
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

  @Override
  public void unregisterJob(JobID jobId) {
    JobShuffle job = jobs.remove(jobId);
    if (job == null) {
      return;
    }
    jobsByApp.remove(job.appId());
    job.placement().close();
    LOG.info("Flink job {} ended; dropped Sluice application {}", jobId, job.appId());
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
