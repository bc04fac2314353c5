package org.apache.spark.shuffle.sluice;

/**
 * A map task's order-independent checksum of the records it writes, where the Spark line asks for
 * one ({@link SparkLine#mapChecksum}); reported in the map's status.
 */
abstract class MapChecksum {
  /** No checksum asked for: updates cost nothing and the value is 0. */
  static final MapChecksum NONE =
      new MapChecksum() {
        @Override
        void update(int partition, Object key, Object value) {}

        @Override
        long value() {
          return 0;
        }
      };

  /** Counts one record written to {@code partition}. */
  abstract void update(int partition, Object key, Object value);

  /** The checksum of every record counted. */
  abstract long value();
}
