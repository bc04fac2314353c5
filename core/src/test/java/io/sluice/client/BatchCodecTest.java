package io.sluice.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sluice.protocol.BatchLimits;
import java.io.IOException;
import java.util.Random;
import org.junit.jupiter.api.Test;

class BatchCodecTest {
  @Test
  void roundTripsBothCodecs() throws IOException {
    byte[] raw = new byte[100_000];
    new Random(1).nextBytes(raw);
    for (int i = 0; i < raw.length; i += 3) {
      raw[i] = 7; // some redundancy so LZ4 has work
    }
    for (BatchCodec codec : new BatchCodec[] {BatchCodec.LZ4, BatchCodec.NONE}) {
      ByteBuf out = Unpooled.directBuffer();
      codec.compress(raw, 10, raw.length - 10, out);
      assertThat(out.readableBytes())
          .isLessThanOrEqualTo(codec.maxCompressedLength(raw.length - 10));
      byte[] back = codec.decompress(out);
      assertThat(back).hasSize(raw.length - 10);
      assertThat(back[0]).isEqualTo(raw[10]);
      assertThat(back[back.length - 1]).isEqualTo(raw[raw.length - 1]);

      // into a buffer that holds it: that buffer, the raw bytes first; into a small one: a new one
      byte[] reused = new byte[raw.length + 50];
      assertThat(codec.rawLength(out)).isEqualTo(raw.length - 10);
      assertThat(codec.decompress(out, reused)).isSameAs(reused);
      assertThat(java.util.Arrays.copyOf(reused, raw.length - 10)).isEqualTo(back);
      byte[] small = new byte[10];
      assertThat(codec.decompress(out, small)).isNotSameAs(small).isEqualTo(back);
      out.release();
    }
  }

  @Test
  void corruptLz4IsAnIoExceptionNotACrash() {
    ByteBuf bad = Unpooled.buffer().writeInt(1000).writeBytes(new byte[] {1, 2, 3, 4, 5});
    assertThatThrownBy(() -> BatchCodec.LZ4.decompress(bad)).isInstanceOf(IOException.class);
    ByteBuf absurd = Unpooled.buffer().writeInt(-5);
    assertThatThrownBy(() -> BatchCodec.LZ4.decompress(absurd))
        .hasMessageContaining("impossible raw length");
  }

  @Test
  void aBlockShorterThanItsClaimedRawLengthIsRefusedNamingBoth() throws IOException {
    byte[] raw = new byte[50];
    new Random(3).nextBytes(raw);
    ByteBuf good = Unpooled.buffer();
    BatchCodec.LZ4.compress(raw, 0, raw.length, good);
    // the same block, claiming 100 raw bytes: the decoder must stop at the block's end
    ByteBuf lying = Unpooled.buffer().writeInt(100).writeBytes(good, 4, good.readableBytes() - 4);
    assertThatThrownBy(() -> BatchCodec.LZ4.decompress(lying))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("holds 50 bytes but the payload claims 100");
  }

  /** Seeded mutations of a valid payload: each decodes to its claimed length or is refused. */
  @Test
  void mutatedPayloadsDecodeWhollyOrFailAsIoExceptions() throws IOException {
    byte[] raw = new byte[4000];
    Random random = new Random(42);
    for (int i = 0; i < raw.length; i++) {
      raw[i] = (byte) (i % 17 == 0 ? random.nextInt() : i % 7);
    }
    ByteBuf good = Unpooled.buffer();
    BatchCodec.LZ4.compress(raw, 0, raw.length, good);
    byte[] payload = new byte[good.readableBytes()];
    good.getBytes(0, payload);
    for (int round = 0; round < 5000; round++) {
      byte[] mutated = payload.clone();
      int flips = 1 + random.nextInt(3);
      for (int f = 0; f < flips; f++) {
        mutated[4 + random.nextInt(mutated.length - 4)] = (byte) random.nextInt();
      }
      try {
        byte[] back = BatchCodec.LZ4.decompress(Unpooled.wrappedBuffer(mutated));
        assertThat(back.length).as("round %d", round).isEqualTo(raw.length);
      } catch (IOException expected) {
        // refused: the reader reports a corrupt batch
      }
    }
  }

  @Test
  void readersAcceptExactlyTheRawSizeWritersMayBuild() {
    ByteBuf over = Unpooled.buffer().writeInt(BatchLimits.MAX_RAW_SIZE + 1).writeZero(16);
    assertThatThrownBy(() -> BatchCodec.LZ4.decompress(over))
        .hasMessageContaining("impossible raw length")
        .hasMessageContaining("" + BatchLimits.MAX_RAW_SIZE);
  }

  @Test
  void boundedCompressionAppendsNothingWhenTheResultIsTooLarge() {
    byte[] noise = new byte[10_000];
    new Random(3).nextBytes(noise);
    for (BatchCodec codec : new BatchCodec[] {BatchCodec.LZ4, BatchCodec.NONE}) {
      ByteBuf out = Unpooled.directBuffer().writeInt(42);
      assertThat(codec.compress(noise, 0, noise.length, out, 9_000)).isEqualTo(-1);
      assertThat(out.readableBytes()).isEqualTo(4);
      int n = codec.compress(noise, 0, noise.length, out, codec.maxCompressedLength(noise.length));
      assertThat(out.readableBytes()).isEqualTo(4 + n);
      out.release();
    }
  }

  @Test
  void unknownCodecNamesTheSetting() {
    assertThatThrownBy(() -> BatchCodec.named("zstd"))
        .hasMessageContaining("sluice.push.compression")
        .hasMessageContaining("zstd");
  }

  @Test
  void backoffGrowsWithJitterAndIsCapped() {
    Backoff b = new Backoff(100, 1000);
    for (int i = 0; i < 50; i++) {
      assertThat(b.delayMillis(1)).isBetween(50L, 100L);
      assertThat(b.delayMillis(3)).isBetween(200L, 400L);
      assertThat(b.delayMillis(30)).isBetween(500L, 1000L);
    }
  }
}
