package io.sluice.protocol;

import io.netty.buffer.ByteBuf;

/**
 * The block: the unit of a map partition (Flink). A region's data is a sequence of blocks in
 * non-decreasing subpartition order; a reader hands each block over as one engine buffer.
 *
 * <p>Layout, big-endian: {@code subpartition:int32 | kind:int32 | uncompressedLength:int32 |
 * length:int32} followed by {@code length} payload bytes. The server reads the headers to build the
 * region index and to cut read buffers at block boundaries; it never looks inside a payload.
 */
public final class MapBlockFormat {
  public static final int HEADER_SIZE = 16;

  /** Serialized records, stored as they are. */
  public static final int KIND_DATA = 0;

  /** Serialized records, LZ4-compressed. */
  public static final int KIND_DATA_LZ4 = 1;

  /** One serialized engine event, stored as it is. */
  public static final int KIND_EVENT = 2;

  private MapBlockFormat() {}

  /** Receives the headers of a body being checked. */
  public interface HeaderVisitor {
    /**
     * @param offset of the block's header, relative to the start of the body
     */
    void block(int offset, int subpartition, int kind, int uncompressedLength, int length);
  }

  public static void writeHeader(
      ByteBuf out, int subpartition, int kind, int uncompressedLength, int length) {
    out.writeInt(subpartition).writeInt(kind).writeInt(uncompressedLength).writeInt(length);
  }

  /**
   * Walks the block headers of {@code body} without moving its indexes and reports each to {@code
   * visitor}.
   *
   * @return null when the body is a well-formed sequence of blocks whose subpartitions lie in
   *     {@code [0, numSubpartitions)}, else what is wrong with it
   */
  public static String check(ByteBuf body, int numSubpartitions, HeaderVisitor visitor) {
    int start = body.readerIndex();
    int pos = start;
    int end = body.writerIndex();
    if (pos == end) {
      return "region data body is empty";
    }
    int index = 0;
    while (pos < end) {
      if (end - pos < HEADER_SIZE) {
        return "block " + index + " is truncated: " + (end - pos) + " bytes left for a header";
      }
      int subpartition = body.getInt(pos);
      int kind = body.getInt(pos + 4);
      int uncompressed = body.getInt(pos + 8);
      int length = body.getInt(pos + 12);
      if (subpartition < 0 || subpartition >= numSubpartitions) {
        return "block "
            + index
            + " names subpartition "
            + subpartition
            + " of a partition with "
            + numSubpartitions;
      }
      if (kind != KIND_DATA && kind != KIND_DATA_LZ4 && kind != KIND_EVENT) {
        return "block " + index + " has unknown kind " + kind;
      }
      if (length < 0 || uncompressed < 0 || length > end - pos - HEADER_SIZE) {
        return "block "
            + index
            + " claims "
            + length
            + " payload bytes ("
            + uncompressed
            + " uncompressed) but "
            + (end - pos - HEADER_SIZE)
            + " remain in the body";
      }
      visitor.block(pos - start, subpartition, kind, uncompressed, length);
      pos += HEADER_SIZE + length;
      index++;
    }
    return null;
  }

  /**
   * The length of the longest prefix of {@code buf}'s readable bytes that is whole blocks. Reading
   * stops at the first block that does not fit.
   */
  public static int wholeBlocks(ByteBuf buf) {
    int start = buf.readerIndex();
    int pos = start;
    int end = buf.writerIndex();
    while (end - pos >= HEADER_SIZE) {
      int length = buf.getInt(pos + 12);
      if (length < 0 || length > end - pos - HEADER_SIZE) {
        break;
      }
      pos += HEADER_SIZE + length;
    }
    return pos - start;
  }
}
