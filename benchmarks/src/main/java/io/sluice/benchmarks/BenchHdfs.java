package io.sluice.benchmarks;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.MiniDFSCluster;

/**
 * A one-DataNode HDFS in the benchmark's JVM, on loopback, for {@code shuffle-bench spark
 * --hdfs-tier}: the servers' distributed tier writes to it and the executors read from it.
 */
final class BenchHdfs implements AutoCloseable {
  private final MiniDFSCluster cluster;

  private BenchHdfs(MiniDFSCluster cluster) {
    this.cluster = cluster;
  }

  static BenchHdfs start(Path dir) throws IOException {
    Configuration conf = new Configuration();
    conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, dir.toString());
    MiniDFSCluster cluster = new MiniDFSCluster.Builder(conf).numDataNodes(1).build();
    cluster.waitActive();
    return new BenchHdfs(cluster);
  }

  /** Server settings that put every split in the distributed tier on this HDFS. */
  Map<String, String> serverSettings() {
    return Map.of(
        "sluice.storage.policy", "local,hdfs",
        "sluice.storage.hdfs.dir", "hdfs://127.0.0.1:" + cluster.getNameNodePort() + "/sluice",
        "sluice.storage.hdfs.minSplitSize", "0");
  }

  @Override
  public void close() {
    cluster.shutdown();
  }
}
