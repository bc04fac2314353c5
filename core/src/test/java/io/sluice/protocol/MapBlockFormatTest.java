package io.sluice.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class MapBlockFormatTest {
  private static ByteBuf sealed(int subpartition, int kind, byte[] payload) {
    ByteBuf b = Unpooled.buffer();
    MapBlockFormat.writeHeader(b, subpartition, kind, payload.length, payload.length);
    b.writeBytes(payload);
    MapBlockFormat.seal(b, 0);
    return b;
  }

  /** What a map partition reader finds wrong with the block at the start of {@code b}, or null. */
  private static String readerVerdict(ByteBuf b) {
    String problem = MapBlockFormat.headerProblem(b, 0, b.readableBytes());
    return problem != null ? problem : MapBlockFormat.checksumProblem(b, 0);
  }

  @Test
  void headerLayoutIsMagicVersionFlagsFieldsLengthChecksum() {
    ByteBuf b = sealed(6, MapBlockFormat.KIND_DATA, new byte[] {1, 2});
    assertThat(b.readableBytes()).isEqualTo(MapBlockFormat.HEADER_SIZE + 2).isEqualTo(26);
    assertThat(b.getUnsignedShort(0)).isEqualTo(0x534d);
    assertThat((int) b.getUnsignedByte(2)).isEqualTo(2);
    assertThat(b.getUnsignedByte(3)).isZero();
    assertThat(b.getInt(4)).isEqualTo(6);
    assertThat(b.getInt(8)).isEqualTo(MapBlockFormat.KIND_DATA);
    assertThat(b.getInt(12)).isEqualTo(2);
    assertThat(b.getInt(MapBlockFormat.LENGTH_OFFSET)).isEqualTo(2);
    java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
    byte[] bytes = new byte[b.readableBytes()];
    b.getBytes(0, bytes);
    crc.update(bytes, 0, MapBlockFormat.CHECKSUM_OFFSET);
    crc.update(bytes, MapBlockFormat.HEADER_SIZE, 2);
    assertThat(b.getInt(MapBlockFormat.CHECKSUM_OFFSET)).isEqualTo((int) crc.getValue());
    assertThat(readerVerdict(b)).isNull();
  }

  /** No single flipped bit of a block, header or payload, goes unnoticed by a reader. */
  @Test
  void everySingleBitFlipOfASmallBlockIsDetected() {
    byte[] payload = new byte[40];
    new Random(17).nextBytes(payload);
    for (int kind : new int[] {MapBlockFormat.KIND_DATA, MapBlockFormat.KIND_EVENT}) {
      ByteBuf b = sealed(3, kind, payload);
      assertThat(readerVerdict(b)).isNull();
      int bits = b.readableBytes() * 8;
      for (int bit = 0; bit < bits; bit++) {
        int at = bit / 8;
        byte original = b.getByte(at);
        b.setByte(at, original ^ (1 << (bit % 8)));
        assertThat(readerVerdict(b))
            .as("kind %d, bit %d (byte %d) flipped", kind, bit % 8, at)
            .isNotNull();
        b.setByte(at, original);
      }
      assertThat(readerVerdict(b)).isNull();
    }
  }

  @Test
  void checksumProblemsNamesTheBlockAndItsOffset() {
    ByteBuf body =
        Unpooled.wrappedBuffer(
            sealed(0, MapBlockFormat.KIND_DATA, new byte[7]),
            sealed(2, MapBlockFormat.KIND_DATA, new byte[5]));
    assertThat(MapBlockFormat.checksumProblems(body)).isNull();
    int second = MapBlockFormat.HEADER_SIZE + 7;
    body.setByte(second + MapBlockFormat.HEADER_SIZE, 1);
    int expected = body.getInt(second + MapBlockFormat.CHECKSUM_OFFSET);
    assertThat(MapBlockFormat.checksumProblems(body))
        .startsWith("block 1 (subpartition 2, at byte " + second + " of the frame)")
        .contains(String.format("expected 0x%08x", expected));
    body.release();
  }

  @Test
  void checkVisitsHeadersAndNamesProblems() {
    ByteBuf body =
        Unpooled.wrappedBuffer(
            sealed(0, MapBlockFormat.KIND_DATA, new byte[3]),
            sealed(1, MapBlockFormat.KIND_EVENT, new byte[2]));
    List<String> seen = new ArrayList<>();
    assertThat(
            MapBlockFormat.check(
                body, 2, (offset, sub, kind, raw, length) -> seen.add(offset + "/" + sub)))
        .isNull();
    assertThat(seen).containsExactly("0/0", (MapBlockFormat.HEADER_SIZE + 3) + "/1");
    assertThat(MapBlockFormat.check(body, 1, (o, s, k, r, l) -> {}))
        .contains("block 1 names subpartition 1 of a partition with 1");
    ByteBuf v1 = Unpooled.buffer().writeInt(0).writeInt(0).writeInt(12).writeInt(12).writeZero(12);
    assertThat(MapBlockFormat.check(v1, 1, (o, s, k, r, l) -> {})).contains("not a block header");
    assertThat(MapBlockFormat.wholeBlocks(body)).isEqualTo(body.readableBytes());
    assertThat(MapBlockFormat.wholeBlocks(body.slice(0, body.readableBytes() - 1)))
        .isEqualTo(MapBlockFormat.HEADER_SIZE + 3);
    body.release();
  }
}
