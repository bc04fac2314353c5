package io.sluice.protocol;

import io.netty.buffer.ByteBuf;

/**
 * The block: the unit of a map partition (Flink). A region's data is a sequence of blocks in
 * non-decreasing subpartition order; a reader hands each block over as one engine buffer.
 *
 * <p><b>Layout, format version 2</b> (big-endian): a 24-byte header, then {@code length} payload
 * bytes. The server reads the headers to build the region index and to cut read buffers at block
 * boundaries, with {@link #HEADER_SIZE} and {@link #LENGTH_OFFSET}; it never looks inside a
 * payload.
 *
 * <table>
 *   <caption>Block header</caption>
 *   <tr><th>offset</th><th>field</th><th>meaning</th></tr>
 *   <tr><td>0</td><td>{@code magic:uint16}</td><td>0x534d ("SM")</td></tr>
 *   <tr><td>2</td><td>{@code version:uint8}</td><td>{@value #VERSION}</td></tr>
 *   <tr><td>3</td><td>{@code flags:uint8}</td><td>0 (no flag is defined)</td></tr>
 *   <tr><td>4</td><td>{@code subpartition:int32}</td><td>in [0, subpartitions of the
 *   partition)</td></tr>
 *   <tr><td>8</td><td>{@code kind:int32}</td><td>{@link #KIND_DATA}, {@link #KIND_DATA_LZ4} or
 *   {@link #KIND_EVENT}</td></tr>
 *   <tr><td>12</td><td>{@code uncompressedLength:int32}</td><td>not negative</td></tr>
 *   <tr><td>16</td><td>{@code length:int32}</td><td>payload bytes that follow the header</td></tr>
 *   <tr><td>20</td><td>{@code crc32c:int32}</td><td>CRC32C ({@link java.util.zip.CRC32C}) of
 *   header bytes [0, 20) followed by the payload</td></tr>
 * </table>
 *
 * <p>The map partition reader verifies every block before it hands it over; a block that fails
 * fails the read naming the server, the partition and the block's offset in the data file. The
 * server checks headers when region data arrives ({@link #check}) and verifies checksums then only
 * when {@code sluice.integrity.verifyOnPush} is on. Version 1 (a 16-byte header {@code subpartition
 * | kind | uncompressedLength | length}, no checksum) is neither written nor read.
 */
public final class MapBlockFormat {
  public static final int HEADER_SIZE = 24;

  /** The first two bytes of every block: "SM". */
  public static final int MAGIC = 0x534d;

  /** The format this build writes and reads. */
  public static final int VERSION = 2;

  private static final int SUBPARTITION_OFFSET = 4;
  private static final int KIND_OFFSET = 8;
  private static final int UNCOMPRESSED_OFFSET = 12;

  /** Where the payload length sits in the header. */
  public static final int LENGTH_OFFSET = 16;

  /** Where the checksum sits in the header: the bytes before it are covered by it. */
  public static final int CHECKSUM_OFFSET = 20;

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

  /**
   * Appends a header whose checksum is 0: {@link #seal} it once the payload follows. Tests also use
   * it to build malformed blocks ({@code length} is written as given).
   */
  public static void writeHeader(
      ByteBuf out, int subpartition, int kind, int uncompressedLength, int length) {
    int at = out.writerIndex();
    out.ensureWritable(HEADER_SIZE);
    setHeader(out, at, subpartition, kind, uncompressedLength, length);
    out.writerIndex(at + HEADER_SIZE);
  }

  /**
   * Writes a header with checksum 0 at {@code at} of {@code buf}, which must have room for it,
   * without moving the indexes: {@link #seal} it once the payload follows.
   */
  public static void setHeader(
      ByteBuf buf, int at, int subpartition, int kind, int uncompressedLength, int length) {
    buf.setShort(at, MAGIC)
        .setByte(at + 2, VERSION)
        .setByte(at + 3, 0)
        .setInt(at + SUBPARTITION_OFFSET, subpartition)
        .setInt(at + KIND_OFFSET, kind)
        .setInt(at + UNCOMPRESSED_OFFSET, uncompressedLength)
        .setInt(at + LENGTH_OFFSET, length)
        .setInt(at + CHECKSUM_OFFSET, 0);
  }

  /**
   * Stores the checksum of the block whose header starts at {@code header}: its header fields and
   * the {@code length} payload bytes after it, which must be in {@code buf}.
   */
  public static void seal(ByteBuf buf, int header) {
    buf.setInt(header + CHECKSUM_OFFSET, computeChecksum(buf, header));
  }

  public static int subpartition(ByteBuf buf, int header) {
    return buf.getInt(header + SUBPARTITION_OFFSET);
  }

  public static int kind(ByteBuf buf, int header) {
    return buf.getInt(header + KIND_OFFSET);
  }

  public static int uncompressedLength(ByteBuf buf, int header) {
    return buf.getInt(header + UNCOMPRESSED_OFFSET);
  }

  /** Payload bytes after the header. */
  public static int length(ByteBuf buf, int header) {
    return buf.getInt(header + LENGTH_OFFSET);
  }

  /** The checksum the block's header carries. */
  public static int storedChecksum(ByteBuf buf, int header) {
    return buf.getInt(header + CHECKSUM_OFFSET);
  }

  /** The checksum of the header fields and payload as they are in {@code buf} now. */
  public static int computeChecksum(ByteBuf buf, int header) {
    return Crc32c.of(
        buf, header, CHECKSUM_OFFSET, header + HEADER_SIZE, buf.getInt(header + LENGTH_OFFSET));
  }

  /**
   * Parses the header at {@code header}, with {@code available} bytes of {@code buf} from there on:
   * the magic, the version, no flags, a known kind and lengths within what is available. The
   * subpartition is not checked here (its bound belongs to the partition).
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
          "is not a block header: it starts with 0x%04x, not the magic 0x%04x of format version %d",
          magic, MAGIC, VERSION);
    }
    if (version != VERSION) {
      return "has format version " + version + "; this build reads version " + VERSION;
    }
    if (flags != 0) {
      return String.format("has unknown flags 0x%02x", flags);
    }
    int kind = kind(buf, header);
    if (kind != KIND_DATA && kind != KIND_DATA_LZ4 && kind != KIND_EVENT) {
      return "has unknown kind " + kind;
    }
    int uncompressed = uncompressedLength(buf, header);
    int length = length(buf, header);
    if (length < 0 || uncompressed < 0 || length > available - HEADER_SIZE) {
      return "claims "
          + length
          + " payload bytes ("
          + uncompressed
          + " uncompressed) but "
          + (available - HEADER_SIZE)
          + " remain after the header";
    }
    return null;
  }

  /**
   * Verifies the checksum of the well-formed block at {@code header} ({@link #headerProblem} found
   * nothing wrong).
   *
   * @return null when the checksum the header carries is that of its fields and payload, else what
   *     is wrong, with the checksum expected (carried) and the one found (computed)
   */
  public static String checksumProblem(ByteBuf buf, int header) {
    int expected = buf.getInt(header + CHECKSUM_OFFSET);
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
   * Walks the block headers of {@code body} without moving its indexes and reports each to {@code
   * visitor}. Checksums are not verified here ({@link #checksumProblems}).
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
      String problem = headerProblem(body, pos, end - pos);
      if (problem != null) {
        return "block " + index + " " + problem;
      }
      int subpartition = subpartition(body, pos);
      if (subpartition < 0 || subpartition >= numSubpartitions) {
        return "block "
            + index
            + " names subpartition "
            + subpartition
            + " of a partition with "
            + numSubpartitions;
      }
      int length = length(body, pos);
      visitor.block(
          pos - start, subpartition, kind(body, pos), uncompressedLength(body, pos), length);
      pos += HEADER_SIZE + length;
      index++;
    }
    return null;
  }

  /**
   * Verifies the checksum of every block of {@code body} up to the first whose header does not
   * parse (which {@link #check} then names).
   *
   * @return null when every block verifies, else the first that does not: its index, subpartition
   *     and byte offset in the body, and the checksums expected and found
   */
  public static String checksumProblems(ByteBuf body) {
    int start = body.readerIndex();
    int pos = start;
    int end = body.writerIndex();
    int index = 0;
    while (pos < end && headerProblem(body, pos, end - pos) == null) {
      String problem = checksumProblem(body, pos);
      if (problem != null) {
        return "block "
            + index
            + " (subpartition "
            + subpartition(body, pos)
            + ", at byte "
            + (pos - start)
            + " of the frame) "
            + problem;
      }
      pos += HEADER_SIZE + length(body, pos);
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
      int length = buf.getInt(pos + LENGTH_OFFSET);
      if (length < 0 || length > end - pos - HEADER_SIZE) {
        break;
      }
      pos += HEADER_SIZE + length;
    }
    return pos - start;
  }
}
