package io.sluice.flink;

import java.util.List;

/**
 * What an input gate reads of one producer partition: subpartitions {@code startSubpartition} to
 * {@code endSubpartition}, both inclusive.
 */
final class ConsumedPartition {
  private final SluiceShuffleDescriptor descriptor;
  private final int startSubpartition;
  private final int endSubpartition;

  ConsumedPartition(
      SluiceShuffleDescriptor descriptor, int startSubpartition, int endSubpartition) {
    if (startSubpartition < 0
        || endSubpartition < startSubpartition
        || endSubpartition >= descriptor.numSubpartitions()) {
      throw new IllegalArgumentException(
          "invalid subpartition range ["
              + startSubpartition
              + ", "
              + endSubpartition
              + "] of "
              + descriptor.mapPartitionId()
              + ", which has "
              + descriptor.numSubpartitions()
              + " subpartitions");
    }
    this.descriptor = descriptor;
    this.startSubpartition = startSubpartition;
    this.endSubpartition = endSubpartition;
  }

  SluiceShuffleDescriptor descriptor() {
    return descriptor;
  }

  int startSubpartition() {
    return startSubpartition;
  }

  int endSubpartition() {
    return endSubpartition;
  }

  /** The subpartitions read: the gate's channels for this producer. */
  int width() {
    return endSubpartition - startSubpartition + 1;
  }

  /** The channels of a gate that reads {@code consumed}: one per (producer, subpartition). */
  static int channels(List<ConsumedPartition> consumed) {
    int channels = 0;
    for (ConsumedPartition c : consumed) {
      channels += c.width();
    }
    return channels;
  }
}
