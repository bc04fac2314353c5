package io.sluice.client;

import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.nio.ByteBuffer;
import net.jpountz.lz4.LZ4Compressor;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4FastDecompressor;

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

  /** Most bytes {@link #compress} may write for {@code rawLength} input bytes. */
  public abstract int maxCompressedLength(int rawLength);

  /** Appends the compressed form of {@code src[off, off+len)} to {@code out}. */
  public abstract void compress(byte[] src, int off, int len, ByteBuf out);

  /**
   * Decompresses a payload.
   *
   * @throws IOException when the payload is corrupt
   */
  public abstract byte[] decompress(ByteBuf payload) throws IOException;

  private static final class None extends BatchCodec {
    @Override
    public int maxCompressedLength(int rawLength) {
      return rawLength;
    }

    @Override
    public void compress(byte[] src, int off, int len, ByteBuf out) {
      out.writeBytes(src, off, len);
    }

    @Override
    public byte[] decompress(ByteBuf payload) {
      byte[] raw = new byte[payload.readableBytes()];
      payload.getBytes(payload.readerIndex(), raw);
      return raw;
    }

    @Override
    public String toString() {
      return "none";
    }
  }

  private static final class Lz4 extends BatchCodec {
    private final LZ4Compressor compressor = LZ4Factory.fastestInstance().fastCompressor();
    private final LZ4FastDecompressor decompressor =
        LZ4Factory.fastestInstance().fastDecompressor();

    @Override
    public int maxCompressedLength(int rawLength) {
      return 4 + compressor.maxCompressedLength(rawLength);
    }

    @Override
    public void compress(byte[] src, int off, int len, ByteBuf out) {
      out.ensureWritable(maxCompressedLength(len));
      out.writeInt(len);
      ByteBuffer dest = out.nioBuffer(out.writerIndex(), out.writableBytes());
      int written =
          compressor.compress(
              ByteBuffer.wrap(src), off, len, dest, dest.position(), dest.remaining());
      out.writerIndex(out.writerIndex() + written);
    }

    @Override
    public byte[] decompress(ByteBuf payload) throws IOException {
      if (payload.readableBytes() < 4) {
        throw new IOException("LZ4 payload of " + payload.readableBytes() + " bytes is truncated");
      }
      int rawLength = payload.getInt(payload.readerIndex());
      if (rawLength < 0 || rawLength > (256 << 20)) {
        throw new IOException("LZ4 payload claims an impossible raw length " + rawLength);
      }
      byte[] raw = new byte[rawLength];
      ByteBuffer src = payload.nioBuffer(payload.readerIndex() + 4, payload.readableBytes() - 4);
      try {
        int read = decompressor.decompress(src, src.position(), ByteBuffer.wrap(raw), 0, rawLength);
        if (read != src.remaining()) {
          throw new IOException(
              "LZ4 payload has " + (src.remaining() - read) + " trailing bytes after the block");
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
