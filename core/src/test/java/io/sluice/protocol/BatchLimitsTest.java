package io.sluice.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.protocol.proto.PushData;
import org.junit.jupiter.api.Test;

class BatchLimitsTest {
  @Test
  void aBatchTakesAtMostHalfAFrame() {
    int header = BatchLimits.maxPushHeaderSize("application_1700000000000_0001");
    assertThat(BatchLimits.maxBatchSize(128 << 20, header)).isEqualTo(64 << 20);
    assertThat(BatchLimits.maxBatchSize(Integer.MAX_VALUE, header))
        .isEqualTo(Integer.MAX_VALUE / 2)
        .isLessThanOrEqualTo(BatchLimits.MAX_RAW_SIZE);
  }

  @Test
  void aLongApplicationIdLeavesLessThanHalfASmallFrame() {
    String appId = "a".repeat(700);
    int header = BatchLimits.maxPushHeaderSize(appId);
    int max = BatchLimits.maxBatchSize(1024, header);
    assertThat(max).isLessThan(512);
    assertThat(BatchLimits.FRAME_OVERHEAD + header + max).isEqualTo(1024);
  }

  @Test
  void pushHeaderBoundHoldsForAnyNumbers() {
    String appId = "app-1";
    int bound = BatchLimits.maxPushHeaderSize(appId);
    long[] requestIds = {0, 1, Long.MAX_VALUE, Long.MIN_VALUE, -1};
    int[] ints = {0, 1, Integer.MAX_VALUE, Integer.MIN_VALUE, -1};
    for (long r : requestIds) {
      for (int i : ints) {
        PushData h =
            PushData.newBuilder()
                .setRequestId(r)
                .setAppId(appId)
                .setShuffleId(i)
                .setPartitionId(i)
                .setEpoch(i)
                .build();
        assertThat(h.getSerializedSize()).isLessThanOrEqualTo(bound);
      }
    }
  }
}
