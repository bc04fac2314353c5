package org.apache.spark.shuffle.sluice;

import org.apache.spark.SparkConf;
import org.apache.spark.shuffle.api.ShuffleDataIO;
import org.apache.spark.shuffle.api.ShuffleDriverComponents;
import org.apache.spark.shuffle.api.ShuffleExecutorComponents;
import org.apache.spark.shuffle.sort.io.LocalDiskShuffleDriverComponents;
import org.apache.spark.shuffle.sort.io.LocalDiskShuffleExecutorComponents;

/**
 * Spark's shuffle IO plugin for Sluice ({@code
 * spark.shuffle.sort.io.plugin.class=org.apache.spark.shuffle.sluice.SluiceShuffleDataIO}). Its
 * driver components declare reliable storage: map output lives on the Sluice servers, so Spark does
 * not rerun maps when an executor goes, and allows dynamic allocation without the external shuffle
 * service. Shuffle removal still goes through the block manager master, which calls the driver's
 * {@link SluiceShuffleManager#unregisterShuffle}. The executor components are Spark's local-disk
 * ones; the Sluice writer never uses them.
 *
 * <p>Spark 3.3 and 3.4 do not ask the driver components about reliable storage (Spark 3.5 added the
 * question): there, dynamic allocation without the external shuffle service needs {@code
 * spark.dynamicAllocation.shuffleTracking.enabled}. Spark then keeps an executor that ran map tasks
 * until their shuffle is gone, or for {@code spark.dynamicAllocation.shuffleTracking.timeout} when
 * set: the output is on the Sluice servers, so a short timeout loses nothing.
 */
public final class SluiceShuffleDataIO implements ShuffleDataIO {
  private final SparkConf conf;

  public SluiceShuffleDataIO(SparkConf conf) {
    this.conf = conf;
  }

  @Override
  public ShuffleExecutorComponents executor() {
    return new LocalDiskShuffleExecutorComponents(conf);
  }

  @Override
  public ShuffleDriverComponents driver() {
    return new ReliableDriverComponents();
  }

  /** Spark's local-disk driver components, declaring the storage reliable. */
  private static final class ReliableDriverComponents extends LocalDiskShuffleDriverComponents {
    // no @Override: Spark 3.3 and 3.4 do not have the method (the 3.5 and 4 builds check it)
    public boolean supportsReliableStorage() {
      return true;
    }
  }
}
