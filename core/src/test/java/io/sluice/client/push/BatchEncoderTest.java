package io.sluice.client.push;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.sluice.client.BatchCodec;
import io.sluice.protocol.BatchFormat;
import java.io.IOException;
import java.util.Random;
import org.junit.jupiter.api.Test;

class BatchEncoderTest {
  private static final UnpooledByteBufAllocator ALLOC = new UnpooledByteBufAllocator(true);

  private static byte[] random(int n) {
    byte[] b = new byte[n];
    new Random(n).nextBytes(b);
    return b;
  }

  @Test
  void uncompressedBatchOfExactlyTheMaximumIsBuiltAndOneByteMoreIsNot() {
    BatchEncoder e = new BatchEncoder(BatchCodec.NONE, ALLOC, 1024, 1 << 20);
    byte[] record = random(1024 - BatchFormat.HEADER_SIZE + 1);
    ByteBuf batch = e.encode(3, 1, 7, record, 0, record.length - 1);
    assertThat(batch.readableBytes()).isEqualTo(1024);
    assertThat(BatchFormat.headerProblem(batch, 0, batch.readableBytes())).isNull();
    assertThat(BatchFormat.mapIndex(batch, 0)).isEqualTo(3);
    assertThat(BatchFormat.attempt(batch, 0)).isEqualTo(1);
    assertThat(BatchFormat.batchId(batch, 0)).isEqualTo(7);
    assertThat(BatchFormat.length(batch, 0)).isEqualTo(1024 - BatchFormat.HEADER_SIZE);
    assertThat(BatchFormat.checksumProblem(batch, 0)).isNull();
    batch.release();
    assertThat(e.encode(3, 1, 7, record, 0, record.length)).isNull();
    assertThat(e.maxRawAlwaysFits()).isEqualTo(1024 - BatchFormat.HEADER_SIZE);
  }

  @Test
  void buffersUpToMaxRawAlwaysFitsMakeABatchHoweverBadlyTheyCompress() throws IOException {
    int max = 64 << 10;
    BatchEncoder e = new BatchEncoder(BatchCodec.LZ4, ALLOC, max, 1 << 20);
    int fits = e.maxRawAlwaysFits();
    assertThat(BatchFormat.HEADER_SIZE + BatchCodec.LZ4.maxCompressedLength(fits))
        .isLessThanOrEqualTo(max);
    assertThat(BatchFormat.HEADER_SIZE + BatchCodec.LZ4.maxCompressedLength(fits + 1))
        .isGreaterThan(max);
    byte[] noise = random(fits + 1000);
    ByteBuf batch = e.encode(0, 0, 0, noise, 0, fits);
    assertThat(batch.readableBytes()).isLessThanOrEqualTo(max);
    assertThat(BatchFormat.checksumProblem(batch, 0)).isNull();
    byte[] back =
        BatchCodec.LZ4.decompress(
            batch.slice(BatchFormat.HEADER_SIZE, BatchFormat.length(batch, 0)));
    assertThat(back).hasSize(fits);
    assertThat(back[fits - 1]).isEqualTo(noise[fits - 1]);
    batch.release();
    assertThat(e.encode(0, 0, 1, noise, 0, noise.length)).as("incompressible, too large").isNull();
  }

  @Test
  void aRecordLargerThanABatchFitsWhenItCompressesIntoOne() throws IOException {
    BatchEncoder e = new BatchEncoder(BatchCodec.LZ4, ALLOC, 64 << 10, 1 << 20);
    byte[] zeros = new byte[1 << 20];
    ByteBuf batch = e.encode(0, 0, 0, zeros, 0, zeros.length);
    assertThat(batch.readableBytes()).isLessThan(64 << 10);
    assertThat(BatchCodec.LZ4.decompress(batch.skipBytes(BatchFormat.HEADER_SIZE)))
        .hasSize(1 << 20);
    batch.release();
  }

  @Test
  void aRecordOverTheRawMaximumIsRefusedHoweverWellItCompresses() {
    BatchEncoder e = new BatchEncoder(BatchCodec.LZ4, ALLOC, 64 << 10, 1 << 20);
    byte[] zeros = new byte[(1 << 20) + 1];
    assertThat(e.encode(0, 0, 0, zeros, 0, 1 << 20)).isNotNull().matches(ByteBuf::release);
    assertThat(e.encode(0, 0, 0, zeros, 0, zeros.length)).isNull();
  }

  @Test
  void everyBatchIsSealedWithItsChecksumUnlessABenchmarkTurnedThemOff() {
    byte[] record = random(500);
    ByteBuf sealed =
        new BatchEncoder(BatchCodec.LZ4, ALLOC, 4096, 1 << 20).encode(1, 0, 2, record, 0, 500);
    assertThat(BatchFormat.withoutChecksum(sealed, 0)).isFalse();
    assertThat(BatchFormat.storedChecksum(sealed, 0))
        .isEqualTo(BatchFormat.computeChecksum(sealed, 0));
    sealed.release();
    ByteBuf unsealed =
        new BatchEncoder(BatchCodec.LZ4, ALLOC, 4096, 1 << 20, false)
            .encode(1, 0, 2, record, 0, 500);
    assertThat(BatchFormat.headerProblem(unsealed, 0, unsealed.readableBytes())).isNull();
    assertThat(BatchFormat.withoutChecksum(unsealed, 0)).isTrue();
    assertThat(BatchFormat.checksumProblem(unsealed, 0)).contains("carries no checksum");
    unsealed.release();
  }
}
