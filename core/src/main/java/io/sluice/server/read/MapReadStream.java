package io.sluice.server.read;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.sluice.protocol.MapBlockFormat;
import io.sluice.server.storage.CommittedMapPartition;
import io.sluice.server.storage.MapPartitionIndex;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.ArrayDeque;

/**
 * A credit-based read of subpartitions {@code [start, end]} of one committed map partition: the
 * data of each region, subpartition by subpartition. Its segments (one per region and subpartition
 * with data) come from the index when the stream opens. Credits waiting to be answered are queued
 * here; the {@link MapReadScheduler} serves them.
 */
public final class MapReadStream {
  private final long id;
  private final Channel owner;
  private final CommittedMapPartition file;
  private final int start;
  private final int end;
  private final int bufferSize;

  // segments in read order
  private final long[] segOffsets;
  private final long[] segLengths;
  private final int[] segSubpartitions;
  private final int numSegments;
  // buffersAfter[i]: read buffers the segments after segment i need at least
  private final long[] buffersAfter;

  // scheduler only (under its lock while queued)
  private int segment;
  private long positionInSegment;

  // guarded by the scheduler's lock
  final ArrayDeque<Long> credits = new ArrayDeque<>();
  boolean queued;
  boolean closed;
  String failure;

  MapReadStream(
      long id, Channel owner, CommittedMapPartition file, int start, int end, int bufferSize)
      throws IOException {
    if (start < 0 || end < start || end >= file.numSubpartitions()) {
      throw new IllegalArgumentException(
          "subpartitions ["
              + start
              + ", "
              + end
              + "] are not in "
              + file.key()
              + ", which has "
              + file.numSubpartitions());
    }
    this.id = id;
    this.owner = owner;
    this.file = file;
    this.start = start;
    this.end = end;
    this.bufferSize = bufferSize;
    int perRegion = end - start + 1;
    long[] offsets = new long[file.numRegions() * perRegion];
    long[] lengths = new long[offsets.length];
    FileChannel index = file.index();
    for (int r = 0; r < file.numRegions(); r++) {
      MapPartitionIndex.read(
          index, file.numSubpartitions(), r, start, end, offsets, lengths, r * perRegion);
    }
    int n = 0;
    for (long l : lengths) {
      if (l > 0) {
        n++;
      }
    }
    this.segOffsets = new long[n];
    this.segLengths = new long[n];
    this.segSubpartitions = new int[n];
    int k = 0;
    for (int i = 0; i < offsets.length; i++) {
      if (lengths[i] > 0) {
        if (offsets[i] < 0 || offsets[i] + lengths[i] > file.length()) {
          throw new IOException(
              "index of " + file.key() + " points past its data file (" + offsets[i] + ")");
        }
        segOffsets[k] = offsets[i];
        segLengths[k] = lengths[i];
        segSubpartitions[k] = start + i % perRegion;
        k++;
      }
    }
    this.numSegments = n;
    this.buffersAfter = new long[n + 1];
    for (int i = n - 1; i >= 0; i--) {
      buffersAfter[i] = (i + 1 < n ? buffersAfter[i + 1] + buffersFor(segLengths[i + 1]) : 0);
    }
  }

  public long id() {
    return id;
  }

  Channel owner() {
    return owner;
  }

  CommittedMapPartition file() {
    return file;
  }

  boolean atEnd() {
    return segment >= numSegments;
  }

  /** The file offset the next read starts at; the scheduler serves the smallest first. */
  long nextOffset() {
    return atEnd() ? Long.MAX_VALUE : segOffsets[segment] + positionInSegment;
  }

  /** Bytes the next read asks for. */
  int nextReadSize() {
    return (int) Math.min(bufferSize, segLengths[segment] - positionInSegment);
  }

  int nextSubpartition() {
    return segSubpartitions[segment];
  }

  private long buffersFor(long bytes) {
    return (bytes + bufferSize - 1) / bufferSize;
  }

  /**
   * Buffers still to send: every segment is read in buffers of its own, so at least the buffers of
   * each segment's remaining bytes (more when blocks do not fill a buffer exactly).
   */
  public long backlog() {
    if (atEnd()) {
      return 0;
    }
    return buffersFor(segLengths[segment] - positionInSegment) + buffersAfter[segment];
  }

  /**
   * Reads whole blocks of the current segment into {@code buf} (at most its writable bytes, at
   * least one block) and moves past them.
   *
   * @return the subpartition they belong to, or -1 (nothing read, position unchanged) when the
   *     block at the position is larger than {@code buf}
   */
  int readInto(ByteBuf buf) throws IOException {
    int sub = segSubpartitions[segment];
    long offset = segOffsets[segment] + positionInSegment;
    int want = (int) Math.min(buf.writableBytes(), segLengths[segment] - positionInSegment);
    FileChannel data = file.data();
    int got = 0;
    while (got < want) {
      int n = buf.writeBytes(data, offset + got, want - got);
      if (n < 0) {
        // the file on disk is shorter than its commit: report its size, not where this read
        // started (a later segment starts past the end). A released partition's channel is
        // closed, which reads as an end of file too: data() then fails naming the release
        long size = file.data().size();
        throw new IOException(
            "its data file "
                + file.dataPath()
                + " ends at byte offset "
                + size
                + ", but its commit recorded "
                + file.length()
                + " bytes and the read asks for bytes up to "
                + (offset + want)
                + "; the file was truncated on disk");
      }
      got += n;
    }
    int whole = MapBlockFormat.wholeBlocks(buf);
    if (whole == 0) {
      buf.clear();
      return -1;
    }
    buf.writerIndex(buf.readerIndex() + whole);
    positionInSegment += whole;
    if (positionInSegment == segLengths[segment]) {
      segment++;
      positionInSegment = 0;
    }
    return sub;
  }

  /**
   * The size of the block at the current position (header included), to size a larger buffer.
   *
   * @throws IOException naming the file and offset when the header there does not parse or claims
   *     more bytes than its segment holds (the file is corrupt)
   */
  int blockSizeAtPosition() throws IOException {
    long offset = segOffsets[segment] + positionInSegment;
    long left = segLengths[segment] - positionInSegment;
    ByteBuffer h = ByteBuffer.allocate(MapBlockFormat.HEADER_SIZE);
    if (left < MapBlockFormat.HEADER_SIZE) {
      throw new IOException(
          "a segment of "
              + file.dataPath()
              + " ("
              + file.key()
              + ") ends inside the block header at byte offset "
              + offset
              + "; the file or its index is corrupt");
    }
    MapPartitionIndex.readFully(file.data(), h, offset);
    ByteBuf header = Unpooled.wrappedBuffer(h.array());
    String problem =
        MapBlockFormat.headerProblem(header, 0, (int) Math.min(left, Integer.MAX_VALUE));
    if (problem != null) {
      throw new IOException(
          "the block at byte offset "
              + offset
              + " of "
              + file.dataPath()
              + " ("
              + file.key()
              + ") "
              + problem
              + "; the file is corrupt");
    }
    return MapBlockFormat.HEADER_SIZE + MapBlockFormat.length(header, 0);
  }

  @Override
  public String toString() {
    return "stream " + id + " over subpartitions [" + start + ", " + end + "] of " + file.key();
  }
}
