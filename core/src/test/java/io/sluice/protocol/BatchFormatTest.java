package io.sluice.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class BatchFormatTest {
  private static ByteBuf batch(int map, int attempt, int id, int length, int actualBytes) {
    ByteBuf b = Unpooled.buffer();
    BatchFormat.writeHeader(b, map, attempt, id, length);
    b.writeZero(actualBytes);
    return b;
  }

  private static ByteBuf sealed(int map, int attempt, int id, byte[] payload) {
    ByteBuf b = Unpooled.buffer();
    BatchFormat.writeBatch(b, map, attempt, id, payload);
    return b;
  }

  /** What a reader finds wrong with the batch at the start of {@code b}, or null. */
  private static String readerVerdict(ByteBuf b) {
    String problem = BatchFormat.headerProblem(b, 0, b.readableBytes());
    return problem != null ? problem : BatchFormat.checksumProblem(b, 0);
  }

  @Test
  void headerLayoutIsMagicVersionFlagsIdsLengthChecksum() {
    ByteBuf b = sealed(3, 1, 7, new byte[] {10, 20, 30});
    assertThat(b.readableBytes()).isEqualTo(BatchFormat.HEADER_SIZE + 3).isEqualTo(27);
    assertThat(b.getUnsignedShort(0)).isEqualTo(0x5342);
    assertThat((int) b.getUnsignedByte(2)).isEqualTo(2);
    assertThat(b.getUnsignedByte(3)).isZero();
    assertThat(b.getInt(BatchFormat.MAP_INDEX_OFFSET)).isEqualTo(3);
    assertThat(b.getInt(8)).isEqualTo(1);
    assertThat(b.getInt(12)).isEqualTo(7);
    assertThat(b.getInt(BatchFormat.LENGTH_OFFSET)).isEqualTo(3);
    java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
    byte[] bytes = new byte[b.readableBytes()];
    b.getBytes(0, bytes);
    crc.update(bytes, 0, BatchFormat.CHECKSUM_OFFSET);
    crc.update(bytes, BatchFormat.HEADER_SIZE, 3);
    assertThat(b.getInt(BatchFormat.CHECKSUM_OFFSET)).isEqualTo((int) crc.getValue());
    assertThat(readerVerdict(b)).isNull();
  }

  /** The promise: no single flipped bit of a batch, header or payload, goes unnoticed. */
  @Test
  void everySingleBitFlipOfASmallBatchIsDetected() {
    byte[] payload = new byte[40];
    new Random(13).nextBytes(payload);
    ByteBuf b = sealed(2, 1, 5, payload);
    assertThat(readerVerdict(b)).isNull();
    int bits = b.readableBytes() * 8;
    for (int bit = 0; bit < bits; bit++) {
      int at = bit / 8;
      byte original = b.getByte(at);
      b.setByte(at, original ^ (1 << (bit % 8)));
      assertThat(readerVerdict(b)).as("bit %d (byte %d) flipped", bit % 8, at).isNotNull();
      b.setByte(at, original);
    }
    assertThat(readerVerdict(b)).isNull();
  }

  /** Heap, direct (copied below 2 KiB, viewed above) and composite bodies checksum alike. */
  @Test
  void aBatchChecksumsAlikeInEveryKindOfBuffer() {
    for (int length : new int[] {1, 40, 2047 - BatchFormat.HEADER_SIZE, 2048, 70_000}) {
      byte[] payload = new byte[length];
      new Random(length).nextBytes(payload);
      ByteBuf heap = sealed(4, 0, 9, payload);
      int expected = BatchFormat.storedChecksum(heap, 0);
      ByteBuf direct = Unpooled.directBuffer().writeBytes(heap, 0, heap.readableBytes());
      // a header split from its payload, in two direct parts
      int cut = BatchFormat.HEADER_SIZE / 2;
      ByteBuf composite =
          Unpooled.compositeBuffer()
              .addComponent(true, Unpooled.directBuffer().writeBytes(heap, 0, cut))
              .addComponent(
                  true, Unpooled.directBuffer().writeBytes(heap, cut, heap.readableBytes() - cut));
      for (ByteBuf b : List.of(heap, direct, composite)) {
        assertThat(BatchFormat.computeChecksum(b, 0))
            .as("%d payload bytes in %s", length, b.getClass().getSimpleName())
            .isEqualTo(expected);
        assertThat(readerVerdict(b)).isNull();
      }
      heap.release();
      direct.release();
      composite.release();
    }
  }

  @Test
  void aChecksumMismatchNamesExpectedAndActual() {
    ByteBuf b = sealed(0, 0, 0, new byte[] {1, 2, 3, 4});
    int expected = BatchFormat.storedChecksum(b, 0);
    b.setByte(BatchFormat.HEADER_SIZE + 1, 9);
    int actual = BatchFormat.computeChecksum(b, 0);
    assertThat(BatchFormat.checksumProblem(b, 0))
        .contains("CRC32C")
        .contains(String.format("expected 0x%08x", expected))
        .contains(String.format("actual 0x%08x", actual));
  }

  @Test
  void aBatchWithoutChecksumIsRefusedByADefaultCheck() {
    ByteBuf b = sealed(0, 0, 0, new byte[] {1});
    BatchFormat.sealWithoutChecksum(b, 0);
    assertThat(BatchFormat.headerProblem(b, 0, b.readableBytes())).isNull();
    assertThat(BatchFormat.withoutChecksum(b, 0)).isTrue();
    assertThat(BatchFormat.checksumProblem(b, 0)).contains("carries no checksum");
  }

  @Test
  void checksumProblemsNamesTheBatchAndItsOffset() {
    ByteBuf body =
        Unpooled.wrappedBuffer(sealed(1, 0, 0, new byte[10]), sealed(4, 2, 9, new byte[6]));
    assertThat(BatchFormat.checksumProblems(body)).isNull();
    int second = BatchFormat.HEADER_SIZE + 10;
    body.setByte(second + BatchFormat.HEADER_SIZE + 5, 1);
    assertThat(BatchFormat.checksumProblems(body))
        .startsWith("batch 1 (map 4 attempt 2 batch id 9, at byte " + second + " of the body)")
        .contains("CRC32C");
    body.release();
  }

  @Test
  void wellFormedBodyVisitsEveryHeader() {
    ByteBuf body = Unpooled.wrappedBuffer(batch(1, 0, 0, 3, 3), batch(2, 1, 5, 0, 0));
    List<String> seen = new ArrayList<>();
    assertThat(BatchFormat.check(body, (m, a, b, l) -> seen.add(m + "/" + a + "/" + b + "/" + l)))
        .isNull();
    assertThat(seen).containsExactly("1/0/0/3", "2/1/5/0");
    assertThat(body.readerIndex()).isZero();
    body.release();
  }

  @Test
  void problemsAreNamed() {
    assertThat(BatchFormat.check(Unpooled.EMPTY_BUFFER, (m, a, b, l) -> {}))
        .isEqualTo("push body is empty");
    assertThat(BatchFormat.check(Unpooled.buffer().writeZero(10), (m, a, b, l) -> {}))
        .contains("truncated");
    assertThat(BatchFormat.check(batch(0, 0, 0, 10, 9), (m, a, b, l) -> {}))
        .contains("claims 10 payload bytes but 9 remain");
    assertThat(BatchFormat.check(batch(0, 0, 0, -1, 0), (m, a, b, l) -> {}))
        .contains("claims -1 payload bytes");
    assertThat(BatchFormat.check(batch(-3, 0, 0, 0, 0), (m, a, b, l) -> {}))
        .contains("negative map index");
    assertThat(BatchFormat.check(batch(5, 0, 0, 0, 0), (m, a, b, l) -> {}, 5))
        .contains("names map index 5 but the shuffle registered 5 maps");
    ByteBuf v1 = Unpooled.buffer().writeInt(0).writeInt(0).writeInt(0).writeInt(8).writeZero(8);
    assertThat(BatchFormat.check(v1, (m, a, b, l) -> {}))
        .contains("batch 0 is not a batch header")
        .contains("0x5342");
    ByteBuf v3 = batch(0, 0, 0, 0, 0);
    v3.setByte(2, 3);
    assertThat(BatchFormat.check(v3, (m, a, b, l) -> {})).contains("format version 3");
    ByteBuf flags = batch(0, 0, 0, 0, 0);
    flags.setByte(3, 0x82);
    assertThat(BatchFormat.check(flags, (m, a, b, l) -> {})).contains("unknown flags 0x82");
  }
}
