package io.sluice.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.protocol.proto.PartitionRecordList;
import org.junit.jupiter.api.Test;

class PartitionRecordsTest {
  private static final int[][] BATCHES = {{0, 0x1234}, {1, 0x5678}, {2, 0x9abc}, {3, 0xdef0}};

  private static RecordTally tally(int... order) {
    RecordTally t = new RecordTally();
    for (int i : order) {
      t.add(7, 100 + i, BATCHES[i][0], BATCHES[i][1]);
    }
    return t;
  }

  @Test
  void theRecordDoesNotDependOnOrderButOnEveryBatch() {
    RecordTally inOrder = tally(0, 1, 2, 3);
    RecordTally shuffled = tally(2, 0, 3, 1);
    assertThat(shuffled.checksum(7)).isEqualTo(inOrder.checksum(7));
    assertThat(shuffled.batches(7)).isEqualTo(4);
    assertThat(shuffled.bytes(7)).isEqualTo(inOrder.bytes(7));

    // a batch missing, one counted twice, or one replaced by another of the same size
    assertThat(tally(0, 1, 3).checksum(7)).isNotEqualTo(inOrder.checksum(7));
    assertThat(tally(0, 1, 1, 2, 3).checksum(7)).isNotEqualTo(inOrder.checksum(7));
    assertThat(tally(0, 1, 1, 3).checksum(7)).isNotEqualTo(inOrder.checksum(7));
    // the same CRC under another id (a copy under a fresh id)
    RecordTally freshId = tally(0, 1, 2);
    freshId.add(7, 103, 3, BATCHES[2][1]);
    assertThat(freshId.checksum(7)).isNotEqualTo(inOrder.checksum(7));
  }

  @Test
  void recordsRoundTripAndOnlyTouchedKeysAreKept() {
    RecordTally t = new RecordTally();
    for (int p : new int[] {16_777_216, 3, 70_000, 3}) {
      t.add(p, 10, 0, p);
    }
    PartitionRecords r = t.toRecords();
    assertThat(r.size()).isEqualTo(3);
    assertThat(r.partition(0)).isEqualTo(3);
    assertThat(r.batches(0)).isEqualTo(2);
    assertThat(r.partition(2)).isEqualTo(16_777_216);

    PartitionRecords back = PartitionRecords.decode(r.encode(), "test");
    for (int i = 0; i < r.size(); i++) {
      assertThat(back.partition(i)).isEqualTo(r.partition(i));
      assertThat(back.batches(i)).isEqualTo(r.batches(i));
      assertThat(back.bytes(i)).isEqualTo(r.bytes(i));
      assertThat(back.checksum(i)).isEqualTo(r.checksum(i));
    }
    PartitionRecords tail = PartitionRecords.decode(r.encode(1, 3), "tail");
    assertThat(tail.partition(0)).isEqualTo(70_000);
    assertThat(r.firstAtOrAfter(4)).isEqualTo(1);
    assertThat(r.encode().getSerializedSize()).isLessThan(3 * PartitionRecords.MAX_WIRE_BYTES);
  }

  @Test
  void malformedRecordsAreRefusedNamingTheirOwner() {
    PartitionRecordList repeated =
        PartitionRecordList.newBuilder()
            .addPartitionDeltas(4)
            .addPartitionDeltas(0)
            .addBatches(1)
            .addBatches(1)
            .addBytes(1)
            .addBytes(1)
            .addChecksums(0)
            .addChecksums(0)
            .build();
    assertThatThrownBy(() -> PartitionRecords.decode(repeated, "map 3 attempt 1"))
        .hasMessageContaining("map 3 attempt 1")
        .hasMessageContaining("out of order");
    PartitionRecordList noBatch =
        PartitionRecordList.newBuilder()
            .addPartitionDeltas(4)
            .addBatches(0)
            .addBytes(1)
            .addChecksums(0)
            .build();
    assertThatThrownBy(() -> PartitionRecords.decode(noBatch, "map 3 attempt 1"))
        .hasMessageContaining("0 batches");
    PartitionRecordList uneven = noBatch.toBuilder().addBytes(2).build();
    assertThatThrownBy(() -> PartitionRecords.decode(uneven, "map 3 attempt 1"))
        .hasMessageContaining("differ in length");
  }
}
