package io.sluice.flink;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.runtime.io.network.NettyShuffleServiceFactory;
import org.apache.flink.runtime.io.network.api.writer.ResultPartitionWriter;
import org.apache.flink.runtime.io.network.partition.consumer.IndexedInputGate;
import org.apache.flink.runtime.shuffle.ShuffleDescriptor;
import org.apache.flink.runtime.shuffle.ShuffleEnvironment;
import org.apache.flink.runtime.shuffle.ShuffleEnvironmentContext;
import org.apache.flink.runtime.shuffle.ShuffleMaster;
import org.apache.flink.runtime.shuffle.ShuffleMasterContext;
import org.apache.flink.runtime.shuffle.ShuffleServiceFactory;
import org.apache.flink.runtime.util.EnvironmentInformation;

/**
 * Sluice as Flink's shuffle service: the blocking exchanges of batch jobs go through Sluice servers
 * instead of the TaskManagers, so producers' TaskManagers can go away once they finished.
 *
 * <h2>Operator how-to (Flink 1.20)</h2>
 *
 * <ol>
 *   <li>Copy {@code sluice-flink-client-<version>-shaded.jar} into {@code $FLINK_HOME/lib/} on the
 *       JobManager and every TaskManager (the shuffle service is loaded by Flink's framework class
 *       loader, not as a plugin).
 *   <li>In {@code config.yaml} (the setting is cluster-wide):
 *       <pre>
 * shuffle-service-factory.class: io.sluice.flink.SluiceShuffleServiceFactory
 * sluice.servers: host1:9290,host2:9290        # the Sluice servers
 * execution.runtime-mode: BATCH
 * execution.batch-shuffle-mode: ALL_EXCHANGES_BLOCKING
 * </pre>
 *   <li>Give TaskManagers network memory ({@code taskmanager.memory.network.min/max}) for every
 *       task that may run at once: {@code sluice.flink.regionSize} (64m by default) per result
 *       partition it writes plus {@code sluice.flink.inputGateMemory} (2m) per input it reads. A
 *       smaller region costs more, smaller reads; a larger one more memory.
 *   <li>Every other {@code sluice.*} client setting (compression, push and read settings) is read
 *       from the same file.
 * </ol>
 *
 * <p>Streaming jobs and pipelined or hybrid exchanges run on Flink's own Netty shuffle in the same
 * cluster ({@code sluice.flink.fallback: auto}, the default; it gets {@code
 * sluice.flink.fallback.networkMemoryFraction} of each TaskManager's network memory), or are
 * refused with an error naming the setting to change ({@code never}). When a Sluice server is lost,
 * Flink reruns the producers whose data it held.
 */
public final class SluiceShuffleServiceFactory
    implements ShuffleServiceFactory<ShuffleDescriptor, ResultPartitionWriter, IndexedInputGate> {

  /**
   * Refuses a Flink this jar is not built for, naming the jar to install: the plugin uses Flink
   * internals whose signatures change between releases, which would otherwise fail as a {@code
   * NoSuchMethodError} in the first task. An unknown version (Flink run from classes without its
   * version file) is let through.
   */
  static void checkFlinkVersion(String version) {
    if (!FlinkLine.runsOn(version) && !version.equals(EnvironmentInformation.UNKNOWN)) {
      throw new IllegalStateException(
          "This Sluice plugin jar is built for Flink "
              + FlinkLine.NAME
              + ", but this is Flink "
              + version
              + ". Put the plugin jar of your Flink line into Flink's lib/ instead:"
              + " sluice-flink-client-<version>-shaded.jar for Flink 1.20,"
              + " sluice-flink-client-<version>-flink2.3-shaded.jar for Flink 2.0 to 2.3.");
    }
  }

  @Override
  public ShuffleMaster<ShuffleDescriptor> createShuffleMaster(
      ShuffleMasterContext shuffleMasterContext) {
    checkFlinkVersion(EnvironmentInformation.getVersion());
    Configuration conf = shuffleMasterContext.getConfiguration();
    SluiceShuffleMaster sluice = new SluiceShuffleMaster(conf);
    if (!FlinkClientConf.fallsBack(conf)) {
      return widen(sluice);
    }
    return new FallbackShuffleMaster(
        sluice, new NettyShuffleServiceFactory().createShuffleMaster(shuffleMasterContext));
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private static ShuffleMaster<ShuffleDescriptor> widen(SluiceShuffleMaster master) {
    return (ShuffleMaster) master;
  }

  @Override
  public ShuffleEnvironment<ResultPartitionWriter, IndexedInputGate> createShuffleEnvironment(
      ShuffleEnvironmentContext context) {
    checkFlinkVersion(EnvironmentInformation.getVersion());
    Configuration conf = context.getConfiguration();
    if (!FlinkClientConf.fallsBack(conf)) {
      return new SluiceShuffleEnvironment(context);
    }
    long network = context.getNetworkMemorySize().getBytes();
    long forNetty = (long) (network * FlinkClientConf.fallbackNetworkFraction(conf));
    SluiceShuffleEnvironment sluice =
        new SluiceShuffleEnvironment(withNetworkMemory(context, network - forNetty));
    return new FallbackShuffleEnvironment(
        sluice,
        new NettyShuffleServiceFactory()
            .createShuffleEnvironment(withNetworkMemory(context, forNetty)));
  }

  /** {@code context} with {@code bytes} of network memory. */
  private static ShuffleEnvironmentContext withNetworkMemory(
      ShuffleEnvironmentContext context, long bytes) {
    return new ShuffleEnvironmentContext(
        context.getConfiguration(),
        context.getTaskExecutorResourceId(),
        new MemorySize(bytes),
        context.isLocalCommunicationOnly(),
        context.getHostAddress(),
        context.getNumberOfSlots(),
        context.getTmpDirPaths(),
        context.getEventPublisher(),
        context.getParentMetricGroup(),
        context.getIoExecutor(),
        context.getScheduledExecutor());
  }
}
