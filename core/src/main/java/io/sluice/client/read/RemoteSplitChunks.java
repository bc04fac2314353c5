package io.sluice.client.read;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.sluice.client.ClientMetrics;
import io.sluice.protocol.ChunkExtents;
import io.sluice.protocol.MapRunIndex;
import io.sluice.protocol.proto.CommittedSplit;
import java.io.Closeable;
import java.io.IOException;
import java.util.List;
import java.util.Map;

/**
 * The chunks of a split of the distributed tier, read from its file (not from a server, which may
 * be gone): every chunk its commit recorded, or, for a read of some maps only, just the runs of
 * those maps, found in the map-run trailer after the data ({@link MapRunIndex}), packed in chunks
 * no larger than the split's own, as the server serves a map range. A file without a trailer is
 * read whole (the reader's filter keeps the maps in range). Not thread safe.
 */
final class RemoteSplitChunks implements Closeable {
  private final RemoteSplitFile file;
  private final String what;
  private final ChunkExtents chunks;
  private final ClientMetrics metrics;

  private RemoteSplitChunks(
      RemoteSplitFile file, String what, ChunkExtents chunks, ClientMetrics metrics) {
    this.file = file;
    this.what = what;
    this.chunks = chunks;
    this.metrics = metrics;
  }

  /**
   * Opens the split's file for a read of maps [startMap, endMap) of {@code numMaps}.
   *
   * @param what names the split in errors
   * @throws IOException naming the split when its file cannot be opened or its trailer is damaged
   */
  static RemoteSplitChunks open(
      CommittedSplit s,
      int startMap,
      int endMap,
      int numMaps,
      Map<String, String> hadoopSettings,
      ClientMetrics metrics,
      String what)
      throws IOException {
    RemoteSplitFile file;
    try {
      file = RemoteSplitFile.open(s.getRemotePath(), hadoopSettings);
    } catch (IOException e) {
      throw new IOException("Opening " + what + " failed: " + e.getMessage(), e);
    }
    try {
      ChunkExtents whole = ChunkExtents.contiguous(s.getChunkOffsetsList());
      ChunkExtents chunks =
          startMap > 0 || endMap < numMaps
              ? mapRange(file, s, whole, startMap, endMap, what)
              : whole;
      metrics.remoteSplitRead();
      return new RemoteSplitChunks(file, what, chunks, metrics);
    } catch (IOException | RuntimeException e) {
      file.close();
      throw e;
    }
  }

  private static ChunkExtents mapRange(
      RemoteSplitFile file,
      CommittedSplit s,
      ChunkExtents whole,
      int startMap,
      int endMap,
      String what)
      throws IOException {
    long dataLength = s.getLength();
    long size = file.length();
    if (size == dataLength) {
      return whole;
    }
    long trailerLength = size - dataLength;
    if (trailerLength < MapRunIndex.FOOTER_SIZE || trailerLength > Integer.MAX_VALUE) {
      throw new IOException(
          what
              + " has "
              + size
              + " bytes, which is no map-run trailer after its "
              + dataLength
              + " bytes of data");
    }
    ByteBuf trailer = file.read(dataLength, (int) trailerLength);
    MapRunIndex index;
    try {
      index = MapRunIndex.parse(trailer.nioBuffer(), dataLength, size, s.getRemotePath());
    } finally {
      trailer.release();
    }
    long chunkSize = 1;
    for (int c = 0; c < whole.numChunks(); c++) {
      chunkSize = Math.max(chunkSize, whole.chunkLength(c));
    }
    return index.range(startMap, endMap, chunkSize);
  }

  int numChunks() {
    return chunks.numChunks();
  }

  /** Where each chunk starts in the file (for errors), as a stream handle gives them. */
  List<Long> chunkOffsets() {
    return chunks.handleOffsets();
  }

  /** Chunk {@code c}: its byte ranges, one after another, in a buffer the caller releases. */
  ByteBuf read(int c) throws IOException {
    int extents = chunks.extentCount(c);
    if (extents == 1) {
      // a whole-split read, or a map range of one run: the file's buffer as it is
      ByteBuf chunk = file.read(chunks.extentOffset(c, 0), extentLength(c, 0));
      metrics.remoteBytesRead(chunk.readableBytes());
      return chunk;
    }
    CompositeByteBuf chunk = Unpooled.compositeBuffer(Math.max(2, extents));
    try {
      for (int k = 0; k < extents; k++) {
        chunk.addComponent(true, file.read(chunks.extentOffset(c, k), extentLength(c, k)));
      }
      metrics.remoteBytesRead(chunk.readableBytes());
      return chunk;
    } catch (IOException | RuntimeException e) {
      chunk.release();
      throw e;
    }
  }

  private int extentLength(int c, int k) throws IOException {
    long length = chunks.extentLength(c, k);
    if (length < 0 || length > Integer.MAX_VALUE) {
      throw new IOException(
          "The coordinator's record of " + what + " has a chunk of " + length + " bytes");
    }
    return (int) length;
  }

  @Override
  public void close() {
    file.close();
  }
}
