package io.sluice.client.coordinator;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.protocol.PartitionRecords;
import io.sluice.protocol.SplitPages;
import io.sluice.protocol.proto.CommittedShuffle;
import io.sluice.protocol.proto.MapRecords;
import io.sluice.protocol.proto.RecordCursor;
import io.sluice.protocol.proto.SplitCursor;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import org.junit.jupiter.api.Test;

class MapRecordStoreTest {
  /** Records of every {@code step}-th partition in [0, n), with values derived from map and p. */
  private static PartitionRecords records(int map, int n, int step) {
    int count = (n + step - 1) / step;
    int[] p = new int[count];
    int[] b = new int[count];
    long[] by = new long[count];
    long[] c = new long[count];
    for (int i = 0; i < count; i++) {
      p[i] = i * step;
      b[i] = 1 + (p[i] + map) % 7;
      by[i] = 1000L * map + p[i];
      c[i] = PartitionRecords.mix(map, p[i]);
    }
    return PartitionRecords.of(p, b, by, c);
  }

  /** Every (map, attempt, partition) of the answers to a range, page after page, checked. */
  private static List<long[]> readAll(ShuffleCommit commit, int start, int end, int sm, int em) {
    List<long[]> out = new ArrayList<>();
    SplitCursor next = null;
    RecordCursor recordsNext = null;
    boolean first = true;
    while (first || next != null || recordsNext != null) {
      CommittedShuffle page =
          commit.answer(start, end, sm, em, next, recordsNext, SplitPages.MAX_PAGE_BYTES);
      assertThat(page.getSerializedSize()).isLessThan(SplitPages.MAX_PAGE_BYTES + 64);
      first = false;
      for (MapRecords m : page.getMapRecordsList()) {
        PartitionRecords r = PartitionRecords.decode(m.getRecords(), "test");
        for (int i = 0; i < r.size(); i++) {
          assertThat(r.partition(i)).isBetween(start, end - 1);
          assertThat(r.batches(i)).isEqualTo(1 + (r.partition(i) + m.getMapIndex()) % 7);
          assertThat(r.checksum(i))
              .isEqualTo(PartitionRecords.mix(m.getMapIndex(), r.partition(i)));
          out.add(new long[] {m.getMapIndex(), m.getAttempt(), r.partition(i)});
        }
      }
      next = page.hasNext() ? page.getNext() : null;
      recordsNext = page.hasRecordsNext() ? page.getRecordsNext() : null;
    }
    return out;
  }

  @Test
  void recordsComeBackOnceEachInPagesBoundedLikeSplits() {
    MapRecordStore store = new MapRecordStore(4);
    // map 0 sends its 40,000 records in three MapperEnd pages; map 2 has two ended attempts
    PartitionRecords all = records(0, 40_000, 1);
    store.add(0, 0, slice(all, 0, 16_384), true);
    store.add(0, 0, slice(all, 16_384, 32_768), true);
    store.add(0, 0, slice(all, 32_768, 40_000), false);
    store.add(2, 1, records(2, 40_000, 3), false);
    store.add(2, 0, records(2, 40_000, 5), false);
    store.add(3, 0, PartitionRecords.EMPTY, false);
    ShuffleCommit commit =
        new ShuffleCommit(4, new int[] {0, -1, 0, 0}, List.of(), new BitSet(), "", store);

    List<long[]> read = readAll(commit, 100, 30_000, 0, 4);

    int expected =
        multiples(1, 100, 30_000) + multiples(3, 100, 30_000) + multiples(5, 100, 30_000);
    assertThat(read).hasSize(expected);
    for (int i = 1; i < read.size(); i++) {
      long[] a = read.get(i - 1);
      long[] b = read.get(i);
      assertThat(a[0] < b[0] || a[0] == b[0] && (a[1] < b[1] || a[1] == b[1] && a[2] < b[2]))
          .as("record %d follows record %d", i, i - 1)
          .isTrue();
    }
    CommittedShuffle firstPage = commit.answer(100, 30_000, 0, 4, null, null, 1 << 20);
    assertThat(firstPage.getRecordedMapsList()).containsExactly(0, 2, 0, 1);
    assertThat(firstPage.getRecordedAttemptsList()).containsExactly(0, 0, 1, 0);
  }

  @Test
  void aMapRangeGetsOnlyItsMaps() {
    MapRecordStore store = new MapRecordStore(3);
    for (int m = 0; m < 3; m++) {
      store.add(m, 0, records(m, 100, 1), false);
    }
    ShuffleCommit commit =
        new ShuffleCommit(3, new int[] {0, 0, 0}, List.of(), new BitSet(), "", store);

    List<long[]> read = readAll(commit, 10, 20, 1, 2);

    assertThat(read).hasSize(10).allMatch(r -> r[0] == 1);
    assertThat(commit.answer(10, 20, 1, 2, null, null, 1 << 20).getRecordedMapsList())
        .containsExactly(1);
  }

  @Test
  void aRepeatedMapEndKeepsTheFirstRecords() {
    MapRecordStore store = new MapRecordStore(1);
    store.add(0, 0, records(0, 10, 1), false);
    store.add(0, 0, records(0, 10, 2), false);
    ShuffleCommit commit = new ShuffleCommit(1, new int[] {0}, List.of(), new BitSet(), "", store);

    assertThat(readAll(commit, 0, 10, 0, 1)).hasSize(10);
  }

  private static int multiples(int k, int from, int to) {
    int n = 0;
    for (int p = from; p < to; p++) {
      n += p % k == 0 ? 1 : 0;
    }
    return n;
  }

  private static PartitionRecords slice(PartitionRecords r, int from, int to) {
    return PartitionRecords.decode(r.encode(from, to), "slice");
  }
}
