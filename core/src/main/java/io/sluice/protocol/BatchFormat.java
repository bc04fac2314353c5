package io.sluice.protocol;

import io.netty.buffer.ByteBuf;

/**
 * The batch: the unit map tasks push and readers filter.
 *
 * <p>Layout, big-endian: {@code mapIndex:int32 | attempt:int32 | batchId:int32 | length:int32}
 * followed by {@code length} payload bytes (compressed, serialized records; the server never looks
 * inside). A push body and a split file are plain sequences of batches.
 *
 * <p>{@code batchId} numbers the batches of one map attempt for one partition, densely from 0 in
 * the order the map task builds them; a batch sent again (a retry, a move to a new split) keeps its
 * id, so a reader drops the copy by (partition, map, batch id). The server does not use it.
 *
 * <p>How large a batch and its payload may be is set out in {@link BatchLimits}.
 */
public final class BatchFormat {
  public static final int HEADER_SIZE = 16;

  /** Where the payload length sits in the header. */
  public static final int LENGTH_OFFSET = 12;

  private BatchFormat() {}

  /** Receives the headers of a body being checked. */
  public interface HeaderVisitor {
    void batch(int mapIndex, int attempt, int batchId, int length);
  }

  public static void writeHeader(ByteBuf out, int mapIndex, int attempt, int batchId, int length) {
    out.writeInt(mapIndex).writeInt(attempt).writeInt(batchId).writeInt(length);
  }

  /**
   * Walks the batch headers of {@code body} without moving its indexes and reports each to {@code
   * visitor}.
   *
   * @return null when the body is a well-formed sequence of batches, else what is wrong with it
   */
  public static String check(ByteBuf body, HeaderVisitor visitor) {
    return check(body, visitor, Integer.MAX_VALUE);
  }

  /**
   * Like {@link #check(ByteBuf, HeaderVisitor)}, and every map index must be below {@code numMaps},
   * the count its shuffle registered.
   */
  public static String check(ByteBuf body, HeaderVisitor visitor, int numMaps) {
    int pos = body.readerIndex();
    int end = body.writerIndex();
    if (pos == end) {
      return "push body is empty";
    }
    int index = 0;
    while (pos < end) {
      if (end - pos < HEADER_SIZE) {
        return "batch "
            + index
            + " is truncated: "
            + (end - pos)
            + " bytes left for a 16-byte header";
      }
      int mapIndex = body.getInt(pos);
      int attempt = body.getInt(pos + 4);
      int batchId = body.getInt(pos + 8);
      int length = body.getInt(pos + 12);
      if (mapIndex < 0 || attempt < 0 || batchId < 0) {
        return "batch "
            + index
            + " has a negative map index, attempt or batch id ("
            + mapIndex
            + ", "
            + attempt
            + ", "
            + batchId
            + ")";
      }
      if (mapIndex >= numMaps) {
        return "batch "
            + index
            + " names map index "
            + mapIndex
            + " but the shuffle registered "
            + numMaps
            + " maps";
      }
      if (length < 0 || length > end - pos - HEADER_SIZE) {
        return "batch "
            + index
            + " of map "
            + mapIndex
            + " claims "
            + length
            + " payload bytes but "
            + (end - pos - HEADER_SIZE)
            + " remain in the body";
      }
      visitor.batch(mapIndex, attempt, batchId, length);
      pos += HEADER_SIZE + length;
      index++;
    }
    return null;
  }
}
