package io.sluice.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.FastThreadLocal;
import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * CRC32C (Castagnoli, {@link CRC32C}: the JVM computes it with the CPU's CRC32 instructions) of the
 * bytes of a header and its payload, as {@link BatchFormat} and {@link MapBlockFormat} define it:
 * the header's bytes before its checksum field, then the payload. Works on any {@link ByteBuf}
 * (heap, direct, composite): a heap array and large direct ranges in place, a small direct range (a
 * batch header, a short payload) from a copy in the calling thread's scratch array.
 */
final class Crc32c {
  /** Direct bytes up to this many are checksummed from a copy in the thread's scratch array. */
  private static final int SCRATCH_BYTES = 2048;

  private static final FastThreadLocal<byte[]> SCRATCH =
      new FastThreadLocal<>() {
        @Override
        protected byte[] initialValue() {
          return new byte[SCRATCH_BYTES];
        }
      };

  private Crc32c() {}

  /**
   * The checksum of {@code buf[header, header + headerBytes)} followed by {@code buf[payload,
   * payload + payloadLength)}.
   */
  static int of(ByteBuf buf, int header, int headerBytes, int payload, int payloadLength) {
    CRC32C crc = new CRC32C();
    update(crc, buf, header, headerBytes);
    update(crc, buf, payload, payloadLength);
    return (int) crc.getValue();
  }

  private static void update(CRC32C crc, ByteBuf buf, int index, int length) {
    if (length == 0) {
      return;
    }
    if (buf.hasArray()) {
      crc.update(buf.array(), buf.arrayOffset() + index, length);
      return;
    }
    if (length <= SCRATCH_BYTES) {
      // a few bytes of a direct buffer: copied, not wrapped in NIO buffers (an array of views,
      // allocated for every header and payload of a small batch cost more than the checksum)
      byte[] scratch = SCRATCH.get();
      buf.getBytes(index, scratch, 0, length);
      crc.update(scratch, 0, length);
      return;
    }
    for (ByteBuffer b : buf.nioBuffers(index, length)) {
      crc.update(b);
    }
  }

  /** {@code 0x1234abcd}: how errors show a checksum. */
  static String hex(int crc) {
    return String.format("0x%08x", crc);
  }
}
