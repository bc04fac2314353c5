package io.sluice.server.sort;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.protocol.BatchFormat;
import io.sluice.server.storage.CommittedSplitFile;
import io.sluice.server.storage.CommittedSplitFiles;
import io.sluice.server.storage.CommittedSplitFiles.Batch;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SplitSorterTest {
  @TempDir Path tmp;

  private static List<Batch> interleaved(int maps, int batchesPerMap, long seed) {
    Random random = new Random(seed);
    List<Batch> batches = new ArrayList<>();
    int[] nextId = new int[maps];
    for (int i = 0; i < maps * batchesPerMap; i++) {
      int map = random.nextInt(maps);
      byte[] payload = new byte[random.nextInt(3000)];
      random.nextBytes(payload);
      batches.add(new Batch(map, nextId[map]++, payload));
    }
    return batches;
  }

  private static byte[] concat(List<Batch> batches) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (Batch b : batches) {
      out.writeBytes(b.bytes());
    }
    return out.toByteArray();
  }

  @Test
  void sortedCopyGroupsBatchesByMapInFileOrderAndIndexesThem() throws IOException {
    List<Batch> batches = interleaved(7, 30, 42);
    CommittedSplitFile split = CommittedSplitFiles.write(tmp.resolve("3-0.data"), 3, batches);

    SortedSplitIndex index = new SplitSorter(10_000).sort(split);

    List<Batch> expected = new ArrayList<>(batches);
    expected.sort(Comparator.comparingInt(b -> b.mapIndex)); // stable: file order within a map
    byte[] sorted = Files.readAllBytes(SplitSorter.sortedPath(split));
    assertThat(sorted).isEqualTo(concat(expected));
    assertThat(index.dataLength()).isEqualTo(split.length());

    // every map's range holds exactly that map's batches
    for (int map = 0; map < 7; map++) {
      int m = map;
      List<Long> chunks = index.rangeChunkOffsets(map, map + 1);
      byte[] range =
          java.util.Arrays.copyOfRange(
              sorted, (int) (long) chunks.get(0), (int) (long) chunks.get(chunks.size() - 1));
      List<Batch> ofMap = new ArrayList<>();
      expected.stream().filter(b -> b.mapIndex == m).forEach(ofMap::add);
      assertThat(range).isEqualTo(concat(ofMap));
    }
    // chunk boundaries fall on batch boundaries and are about the chunk size apart
    List<Long> all = index.rangeChunkOffsets(0, Integer.MAX_VALUE);
    List<Long> batchStarts = new ArrayList<>();
    long pos = 0;
    for (Batch b : expected) {
      batchStarts.add(pos);
      pos += b.bytes().length;
    }
    batchStarts.add(pos);
    assertThat(batchStarts).containsAll(all);
    for (int i = 1; i < all.size() - 1; i++) {
      assertThat(all.get(i) - all.get(i - 1)).isGreaterThanOrEqualTo(10_000);
    }

    // the index on disk is what the next reader finds
    SortedSplitIndex reread = SplitSorter.existing(split);
    assertThat(reread).isNotNull();
    assertThat(reread.rangeChunkOffsets(2, 5)).isEqualTo(index.rangeChunkOffsets(2, 5));
  }

  @Test
  void emptySplitSortsToAnEmptyCopy() throws IOException {
    CommittedSplitFile split = CommittedSplitFiles.write(tmp.resolve("0-0.data"), 0, List.of());
    SortedSplitIndex index = new SplitSorter(1024).sort(split);
    assertThat(index.mapCount()).isZero();
    assertThat(index.rangeChunkOffsets(0, 10)).containsExactly(0L);
  }

  @Test
  void malformedSplitFailsNamingTheFileAndLeavesNoCopy() throws IOException {
    Path file = tmp.resolve("1-0.data");
    CommittedSplitFile split =
        CommittedSplitFiles.write(file, 1, List.of(new Batch(0, 0, new byte[100])));
    byte[] bytes = Files.readAllBytes(file);
    bytes[BatchFormat.LENGTH_OFFSET + 3] = (byte) 200; // payload length 200 > 100 bytes left
    Files.write(file, bytes);
    assertThatThrownBy(() -> new SplitSorter(1024).sort(split))
        .isInstanceOf(IOException.class)
        .hasMessageContaining(file.toString())
        .hasMessageContaining("malformed batch at offset 0");
    assertThat(Files.exists(SplitSorter.sortedPath(split))).isFalse();
    assertThat(Files.exists(SplitSorter.indexPath(split))).isFalse();
    assertThat(SplitSorter.existing(split)).isNull();
  }

  @Test
  void staleIndexOfAnotherSourceLengthIsIgnored() throws IOException {
    Path file = tmp.resolve("2-0.data");
    CommittedSplitFile first =
        CommittedSplitFiles.write(file, 2, List.of(new Batch(1, 0, new byte[10])));
    new SplitSorter(1024).sort(first);
    CommittedSplitFile second =
        CommittedSplitFiles.write(
            file, 2, List.of(new Batch(1, 0, new byte[10]), new Batch(0, 0, new byte[5])));
    assertThat(SplitSorter.existing(second)).isNull();
  }
}
