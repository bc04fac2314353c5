package io.sluice.client;

import io.netty.buffer.ByteBuf;
import io.sluice.protocol.BatchLimits;
import java.io.IOException;
import java.nio.ByteBuffer;
import net.jpountz.lz4.LZ4Compressor;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4SafeDecompressor;

/**
 * Compresses batch payloads. An LZ4 payload is {@code rawLength:int32 | LZ4 block}; a NONE payload
 * is the raw bytes. Both sides of a shuffle must use the same codec. Thread safe.
 */
public abstract class BatchCodec {
  public static final BatchCodec NONE = new None();
  public static final BatchCodec LZ4 = new Lz4();

  /** The codec called {@code name} ({@code lz4} or {@code none}). */
  public static BatchCodec named(String name) {
    switch (name) {
      case "lz4":
        return LZ4;
      case "none":
        return NONE;
      default:
        throw new IllegalArgumentException(
            "Invalid value '" + name + "' for sluice.push.compression: expected lz4 or none");
    }
  }

  /**
   * Most bytes {@link #compress} may write for {@code rawLength} input bytes ({@code rawLength} at
   * most {@link BatchLimits#MAX_RAW_SIZE}).
   */
  public abstract int maxCompressedLength(int rawLength);

  /** Appends the compressed form of {@code src[off, off+len)} to {@code out}. */
  public final void compress(byte[] src, int off, int len, ByteBuf out) {
    compress(src, off, len, out, maxCompressedLength(len));
  }

  /**
   * Appends the compressed form of {@code src[off, off+len)} to {@code out} if it takes at most
   * {@code maxLength} bytes.
   *
   * @return the bytes appended, or -1 when the compressed form is larger (then {@code out} is as it
   *     was, though its capacity may have grown)
   */
  public abstract int compress(byte[] src, int off, int len, ByteBuf out, int maxLength);

  /**
   * Decompresses a payload into an array of exactly its raw length.
   *
   * @throws IOException when the payload is corrupt
   */
  public final byte[] decompress(ByteBuf payload) throws IOException {
    return decompress(payload, null);
  }

  /**
   * The number of bytes a payload decompresses to.
   *
   * @throws IOException when the payload is corrupt
   */
  public abstract int rawLength(ByteBuf payload) throws IOException;

  /**
   * Decompresses a payload into {@code into} when it holds {@link #rawLength} bytes, else into a
   * new array of exactly that length; the raw bytes start at index 0 of the array returned.
   *
   * @throws IOException when the payload is corrupt
   */
  public abstract byte[] decompress(ByteBuf payload, byte[] into) throws IOException;

  /** {@code into} when it holds {@code length} bytes, else a new array of that length. */
  static byte[] room(byte[] into, int length) {
    return into != null && into.length >= length ? into : new byte[length];
  }

  private static final class None extends BatchCodec {
    @Override
    public int maxCompressedLength(int rawLength) {
      return rawLength;
    }

    @Override
    public int compress(byte[] src, int off, int len, ByteBuf out, int maxLength) {
      if (len > maxLength) {
        return -1;
      }
      out.writeBytes(src, off, len);
      return len;
    }

    @Override
    public int rawLength(ByteBuf payload) {
      return payload.readableBytes();
    }

    @Override
    public byte[] decompress(ByteBuf payload, byte[] into) {
      byte[] raw = room(into, payload.readableBytes());
      payload.getBytes(payload.readerIndex(), raw, 0, payload.readableBytes());
      return raw;
    }

    @Override
    public String toString() {
      return "none";
    }
  }

  private static final class Lz4 extends BatchCodec {
    private final LZ4Compressor compressor = LZ4Factory.fastestInstance().fastCompressor();
    // the safe decompressor, bounded by the block's own length: the fast one trusts the claimed
    // raw length and reads the block until it has produced that much (CVE-2025-12183 for its
    // native and unsafe forms), which a corrupt or hostile payload must not steer
    private final LZ4SafeDecompressor decompressor =
        LZ4Factory.fastestInstance().safeDecompressor();

    @Override
    public int maxCompressedLength(int rawLength) {
      return 4 + compressor.maxCompressedLength(rawLength);
    }

    @Override
    public int compress(byte[] src, int off, int len, ByteBuf out, int maxLength) {
      int max = Math.min(maxCompressedLength(len), maxLength);
      if (max < 4) {
        return -1;
      }
      out.ensureWritable(max);
      int start = out.writerIndex();
      out.writeInt(len);
      ByteBuffer dest = out.nioBuffer(out.writerIndex(), max - 4);
      int written;
      try {
        written =
            compressor.compress(
                ByteBuffer.wrap(src), off, len, dest, dest.position(), dest.remaining());
      } catch (net.jpountz.lz4.LZ4Exception e) {
        out.writerIndex(start); // the block needs more than maxLength bytes
        return -1;
      }
      out.writerIndex(out.writerIndex() + written);
      return 4 + written;
    }

    @Override
    public int rawLength(ByteBuf payload) throws IOException {
      if (payload.readableBytes() < 4) {
        throw new IOException("LZ4 payload of " + payload.readableBytes() + " bytes is truncated");
      }
      int rawLength = payload.getInt(payload.readerIndex());
      if (rawLength < 0 || rawLength > BatchLimits.MAX_RAW_SIZE) {
        throw new IOException(
            "LZ4 payload claims an impossible raw length "
                + rawLength
                + " (a batch holds at most "
                + BatchLimits.MAX_RAW_SIZE
                + " bytes uncompressed)");
      }
      return rawLength;
    }

    @Override
    public byte[] decompress(ByteBuf payload, byte[] into) throws IOException {
      int rawLength = rawLength(payload);
      byte[] raw = room(into, rawLength);
      ByteBuffer src = payload.nioBuffer(payload.readerIndex() + 4, payload.readableBytes() - 4);
      try {
        int written =
            decompressor.decompress(
                src, src.position(), src.remaining(), ByteBuffer.wrap(raw), 0, rawLength);
        if (written != rawLength) {
          throw new IOException(
              "corrupt LZ4 payload: its block holds "
                  + written
                  + " bytes but the payload claims "
                  + rawLength);
        }
      } catch (net.jpountz.lz4.LZ4Exception e) {
        throw new IOException("corrupt LZ4 payload: " + e.getMessage(), e);
      }
      return raw;
    }

    @Override
    public String toString() {
      return "lz4";
    }
  }
}
