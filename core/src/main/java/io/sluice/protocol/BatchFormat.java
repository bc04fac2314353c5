package io.sluice.protocol;

import io.netty.buffer.ByteBuf;

/**
 * The batch: the unit map tasks push and readers filter.
 *
 * <p><b>Layout, format version 2</b> (big-endian): a 24-byte header, then {@code length} payload
 * bytes (compressed, serialized records; the server never looks inside). A push body and a split
 * file are plain sequences of batches.
 *
 * <table>
 *   <caption>Batch header</caption>
 *   <tr><th>offset</th><th>field</th><th>meaning</th></tr>
 *   <tr><td>0</td><td>{@code magic:uint16}</td><td>0x5342 ("SB")</td></tr>
 *   <tr><td>2</td><td>{@code version:uint8}</td><td>{@value #VERSION}</td></tr>
 *   <tr><td>3</td><td>{@code flags:uint8}</td><td>0; bit 0 ({@link #FLAG_NO_CHECKSUM}) marks a batch
 *   written without a checksum, which only a benchmark run that measures what checksums cost
 *   writes, and every normal reader refuses; other bits must be 0</td></tr>
 *   <tr><td>4</td><td>{@code mapIndex:int32}</td><td>not negative</td></tr>
 *   <tr><td>8</td><td>{@code attempt:int32}</td><td>not negative</td></tr>
 *   <tr><td>12</td><td>{@code batchId:int32}</td><td>not negative</td></tr>
 *   <tr><td>16</td><td>{@code length:int32}</td><td>payload bytes that follow the header</td></tr>
 *   <tr><td>20</td><td>{@code crc32c:int32}</td><td>CRC32C ({@link java.util.zip.CRC32C}) of
 *   header bytes [0, 20) followed by the payload</td></tr>
 * </table>
 *
 * <p>The checksum covers every byte a reader uses: a flipped bit anywhere in a batch, header or
 * payload, makes the reader fail before it hands out any record of that batch (a CRC of 32 bits
 * detects every error burst of up to 32 bits, and any other corruption but one in 2^32). Readers
 * verify every batch, also those they then drop (a duplicate, a losing attempt), so a corrupt id
 * cannot make a batch silently disappear. The server checks headers on push ({@link #check}); it
 * verifies checksums on push only when {@code sluice.integrity.verifyOnPush} is on. The server
 * finds batch boundaries with {@link #HEADER_SIZE} and {@link #LENGTH_OFFSET} alone.
 *
 * <p>Version 1 (a 16-byte header {@code mapIndex | attempt | batchId | length}, no checksum) is
 * neither written nor read: its first bytes are not the magic, so a version 1 body is refused as
 * malformed and a version 1 file fails its reader.
 *
 * <p>{@code batchId} numbers the batches of one map attempt for one partition, densely from 0 in
 * the order the map task builds them; a batch sent again (a retry, a move to a new split) keeps its
 * id, so a reader drops the copy by (partition, map, batch id). The server does not use it.
 *
 * <p>How large a batch and its payload may be is set out in {@link BatchLimits}.
 */
public final class BatchFormat {
  public static final int HEADER_SIZE = 24;

  /** The first two bytes of every batch: "SB". */
  public static final int MAGIC = 0x5342;

  static final String MAGIC_HEX = "0x5342";

  /** The format this build writes and reads. */
  public static final int VERSION = 2;

  /** Flag: the batch carries no checksum (benchmark runs only). */
  public static final int FLAG_NO_CHECKSUM = 1;

  /** Where the map index sits in the header. */
  public static final int MAP_INDEX_OFFSET = 4;

  private static final int ATTEMPT_OFFSET = 8;
  private static final int BATCH_ID_OFFSET = 12;

  /** Where the payload length sits in the header. */
  public static final int LENGTH_OFFSET = 16;

  /** Where the checksum sits in the header: the bytes before it are covered by it. */
  public static final int CHECKSUM_OFFSET = 20;

  private static final int KNOWN_FLAGS = FLAG_NO_CHECKSUM;

  private BatchFormat() {}

  /** Receives the headers of a body being checked. */
  public interface HeaderVisitor {
    void batch(int mapIndex, int attempt, int batchId, int length);
  }

  /**
   * Appends a header whose checksum is 0: {@link #seal} it once the payload follows. Tests also use
   * it to build malformed batches ({@code length} is written as given).
   */
  public static void writeHeader(ByteBuf out, int mapIndex, int attempt, int batchId, int length) {
    out.writeShort(MAGIC)
        .writeByte(VERSION)
        .writeByte(0)
        .writeInt(mapIndex)
        .writeInt(attempt)
        .writeInt(batchId)
        .writeInt(length)
        .writeInt(0);
  }

  /** Appends a whole, sealed batch of {@code payload}'s readable bytes (which stay unread). */
  public static void writeBatch(
      ByteBuf out, int mapIndex, int attempt, int batchId, ByteBuf payload) {
    int header = out.writerIndex();
    writeHeader(out, mapIndex, attempt, batchId, payload.readableBytes());
    out.writeBytes(payload, payload.readerIndex(), payload.readableBytes());
    seal(out, header);
  }

  /** Appends a whole, sealed batch of {@code payload}. */
  public static void writeBatch(
      ByteBuf out, int mapIndex, int attempt, int batchId, byte[] payload) {
    int header = out.writerIndex();
    writeHeader(out, mapIndex, attempt, batchId, payload.length);
    out.writeBytes(payload);
    seal(out, header);
  }

  /**
   * Stores the checksum of the batch whose header starts at {@code header}: its header fields and
   * the {@code length} payload bytes after it, which must be in {@code buf}.
   */
  public static void seal(ByteBuf buf, int header) {
    buf.setInt(header + CHECKSUM_OFFSET, computeChecksum(buf, header));
  }

  /**
   * Marks the batch at {@code header} as carrying no checksum: only for a benchmark run that
   * measures what checksums cost. Every normal reader refuses such a batch.
   */
  public static void sealWithoutChecksum(ByteBuf buf, int header) {
    buf.setByte(header + 3, buf.getByte(header + 3) | FLAG_NO_CHECKSUM);
    buf.setInt(header + CHECKSUM_OFFSET, 0);
  }

  public static int mapIndex(ByteBuf buf, int header) {
    return buf.getInt(header + MAP_INDEX_OFFSET);
  }

  public static int attempt(ByteBuf buf, int header) {
    return buf.getInt(header + ATTEMPT_OFFSET);
  }

  public static int batchId(ByteBuf buf, int header) {
    return buf.getInt(header + BATCH_ID_OFFSET);
  }

  /** Payload bytes after the header. */
  public static int length(ByteBuf buf, int header) {
    return buf.getInt(header + LENGTH_OFFSET);
  }

  /** The checksum the header carries. */
  public static int storedChecksum(ByteBuf buf, int header) {
    return buf.getInt(header + CHECKSUM_OFFSET);
  }

  /** The checksum of the header fields and payload as they are in {@code buf} now. */
  public static int computeChecksum(ByteBuf buf, int header) {
    return Crc32c.of(
        buf, header, CHECKSUM_OFFSET, header + HEADER_SIZE, buf.getInt(header + LENGTH_OFFSET));
  }

  /** Whether the batch was written without a checksum ({@link #FLAG_NO_CHECKSUM}). */
  public static boolean withoutChecksum(ByteBuf buf, int header) {
    return (buf.getByte(header + 3) & FLAG_NO_CHECKSUM) != 0;
  }

  /**
   * Parses the header at {@code header}, with {@code available} bytes of {@code buf} from there on:
   * the magic, the version, the flags, ids not negative and a payload length within what is
   * available.
   *
   * @return null when the header is well formed, else what is wrong with it
   */
  public static String headerProblem(ByteBuf buf, int header, int available) {
    if (available < HEADER_SIZE) {
      return "is truncated: " + available + " bytes left for a " + HEADER_SIZE + "-byte header";
    }
    int magic = buf.getUnsignedShort(header);
    int version = buf.getUnsignedByte(header + 2);
    int flags = buf.getUnsignedByte(header + 3);
    if (magic != MAGIC) {
      return String.format(
          "is not a batch header: it starts with 0x%04x, not the magic %s of format version %d",
          magic, MAGIC_HEX, VERSION);
    }
    if (version != VERSION) {
      return "has format version " + version + "; this build reads version " + VERSION;
    }
    if ((flags & ~KNOWN_FLAGS) != 0) {
      return String.format("has unknown flags 0x%02x", flags);
    }
    int mapIndex = mapIndex(buf, header);
    int attempt = attempt(buf, header);
    int batchId = batchId(buf, header);
    int length = length(buf, header);
    if (mapIndex < 0 || attempt < 0 || batchId < 0) {
      return "has a negative map index, attempt or batch id ("
          + mapIndex
          + ", "
          + attempt
          + ", "
          + batchId
          + ")";
    }
    if (length < 0 || length > available - HEADER_SIZE) {
      return "of map "
          + mapIndex
          + " claims "
          + length
          + " payload bytes but "
          + (available - HEADER_SIZE)
          + " remain after the header";
    }
    return null;
  }

  /**
   * Verifies the checksum of the well-formed batch at {@code header} ({@link #headerProblem} found
   * nothing wrong).
   *
   * @return null when the checksum the header carries is that of its fields and payload, else what
   *     is wrong, with the checksum expected (carried) and the one found (computed)
   */
  public static String checksumProblem(ByteBuf buf, int header) {
    if (withoutChecksum(buf, header)) {
      return "carries no checksum (flag "
          + FLAG_NO_CHECKSUM
          + ": only benchmark runs without checksums write such batches)";
    }
    int expected = storedChecksum(buf, header);
    int actual = computeChecksum(buf, header);
    if (expected != actual) {
      return "fails its CRC32C check: expected "
          + Crc32c.hex(expected)
          + " (carried in its header), actual "
          + Crc32c.hex(actual)
          + " (computed over its header fields and payload)";
    }
    return null;
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
   * the count its shuffle registered. Checksums are not verified here ({@link #checksumProblems}).
   */
  public static String check(ByteBuf body, HeaderVisitor visitor, int numMaps) {
    int pos = body.readerIndex();
    int end = body.writerIndex();
    if (pos == end) {
      return "push body is empty";
    }
    int index = 0;
    while (pos < end) {
      String problem = headerProblem(body, pos, end - pos);
      if (problem != null) {
        return "batch " + index + " " + problem;
      }
      int mapIndex = mapIndex(body, pos);
      if (mapIndex >= numMaps) {
        return "batch "
            + index
            + " names map index "
            + mapIndex
            + " but the shuffle registered "
            + numMaps
            + " maps";
      }
      int length = length(body, pos);
      visitor.batch(mapIndex, attempt(body, pos), batchId(body, pos), length);
      pos += HEADER_SIZE + length;
      index++;
    }
    return null;
  }

  /**
   * Verifies the checksum of every batch of a body that {@link #check} found well formed.
   *
   * @return null when every batch verifies, else the first that does not: its index, map, attempt,
   *     batch id and byte offset in the body, and the checksums expected and found
   */
  public static String checksumProblems(ByteBuf body) {
    int start = body.readerIndex();
    int pos = start;
    int end = body.writerIndex();
    int index = 0;
    while (pos < end) {
      String problem = checksumProblem(body, pos);
      if (problem != null) {
        return "batch "
            + index
            + " (map "
            + mapIndex(body, pos)
            + " attempt "
            + attempt(body, pos)
            + " batch id "
            + batchId(body, pos)
            + ", at byte "
            + (pos - start)
            + " of the body) "
            + problem;
      }
      pos += HEADER_SIZE + length(body, pos);
      index++;
    }
    return null;
  }
}
