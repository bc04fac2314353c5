package io.sluice.e2e.flink;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.flink.api.common.BatchShuffleMode;
import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExecutionOptions;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.streaming.util.TestStreamEnvironment;
import org.apache.flink.util.CloseableIterator;

/**
 * The main class of the Flink JVM {@link FlinkShadedJarIT} starts: a MiniCluster whose shuffle
 * service comes from the shaded jar on the class path, running the word count of {@link FlinkJobs}.
 * Refers to nothing of Sluice but the factory's name.
 *
 * <p>Arguments: the Sluice servers ({@code host:port,...}) and the file to write the sorted result
 * lines to.
 */
public final class ShadedJarJob {
  private ShadedJarJob() {}

  public static void main(String[] args) throws Exception {
    Configuration conf = new Configuration();
    conf.setString("shuffle-service-factory.class", "io.sluice.flink.SluiceShuffleServiceFactory");
    conf.setString("sluice.servers", args[0]);
    conf.setString("sluice.flink.regionSize", "128k");
    conf.setString("sluice.flink.inputGateMemory", "128k");
    conf.set(RestOptions.BIND_PORT, "0");
    conf.set(TaskManagerOptions.NETWORK_MEMORY_MIN, MemorySize.parse("32m"));
    conf.set(TaskManagerOptions.NETWORK_MEMORY_MAX, MemorySize.parse("32m"));
    conf.set(TaskManagerOptions.MANAGED_MEMORY_SIZE, MemorySize.parse("32m"));
    MiniCluster cluster =
        new MiniCluster(
            new MiniClusterConfiguration.Builder()
                .setConfiguration(conf)
                .setNumTaskManagers(1)
                .setNumSlotsPerTaskManager(2)
                .build());
    cluster.start();
    List<String> result = new ArrayList<>();
    try {
      Configuration job = new Configuration();
      job.set(ExecutionOptions.RUNTIME_MODE, RuntimeExecutionMode.BATCH);
      job.set(ExecutionOptions.BATCH_SHUFFLE_MODE, BatchShuffleMode.ALL_EXCHANGES_BLOCKING);
      TestStreamEnvironment env =
          new TestStreamEnvironment(
              cluster, job, 2, Collections.emptyList(), Collections.emptyList());
      try (CloseableIterator<String> it = FlinkJobs.wordCount(env).executeAndCollect()) {
        it.forEachRemaining(result::add);
      }
    } finally {
      cluster.close();
    }
    Collections.sort(result);
    Files.write(Paths.get(args[1]), result, StandardCharsets.UTF_8);
    System.exit(0);
  }
}
