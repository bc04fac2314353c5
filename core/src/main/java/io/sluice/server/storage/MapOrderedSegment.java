package io.sluice.server.storage;

import io.netty.buffer.ByteBuf;
import io.sluice.protocol.BatchFormat;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The batches of one flush of a split, ordered by map index for one gather write: batches of one
 * map stay in the order the server accepted them (a stable sort), and batches adjacent in memory
 * and in the new order go out as one buffer. Nothing is copied: the buffers are views of the
 * accepted bodies, which stay owned by the split. When the batches arrived in map order already
 * (one map pushing, or maps pushing in turn) there is no sort.
 */
final class MapOrderedSegment {
  private final ByteBuffer[] buffers;
  private final int[] mapIndexes; // in accepted order
  private final int[] lengths; // in accepted order
  private final int[] order; // k-th batch written = order[k]-th accepted

  private MapOrderedSegment(ByteBuffer[] buffers, int[] mapIndexes, int[] lengths, int[] order) {
    this.buffers = buffers;
    this.mapIndexes = mapIndexes;
    this.lengths = lengths;
    this.order = order;
  }

  /** Orders the batches of well-formed bodies (the intake checked them). */
  static MapOrderedSegment of(List<ByteBuf> bodies) {
    int n = 0;
    for (ByteBuf body : bodies) {
      for (int pos = body.readerIndex(); pos < body.writerIndex(); n++) {
        pos += BatchFormat.HEADER_SIZE + body.getInt(pos + BatchFormat.LENGTH_OFFSET);
      }
    }
    int[] bodyOf = new int[n];
    int[] posOf = new int[n];
    int[] maps = new int[n];
    int[] lengths = new int[n];
    boolean ordered = true;
    int i = 0;
    for (int b = 0; b < bodies.size(); b++) {
      ByteBuf body = bodies.get(b);
      for (int pos = body.readerIndex(); pos < body.writerIndex(); ) {
        int length = BatchFormat.HEADER_SIZE + body.getInt(pos + BatchFormat.LENGTH_OFFSET);
        bodyOf[i] = b;
        posOf[i] = pos;
        maps[i] = body.getInt(pos + BatchFormat.MAP_INDEX_OFFSET);
        lengths[i] = length;
        ordered &= i == 0 || maps[i] >= maps[i - 1];
        pos += length;
        i++;
      }
    }
    int[] order = new int[n];
    if (ordered) {
      Arrays.setAll(order, k -> k);
    } else {
      long[] keys = new long[n];
      for (int k = 0; k < n; k++) {
        keys[k] = ((long) maps[k] << 32) | k; // map indexes are never negative
      }
      Arrays.sort(keys);
      for (int k = 0; k < n; k++) {
        order[k] = (int) keys[k];
      }
    }
    List<ByteBuffer> out = new ArrayList<>();
    int runBody = -1;
    int runStart = 0;
    int runEnd = 0;
    for (int k = 0; k < n; k++) {
      int j = order[k];
      if (bodyOf[j] == runBody && posOf[j] == runEnd) {
        runEnd += lengths[j];
        continue;
      }
      if (runBody >= 0) {
        out.add(bodies.get(runBody).nioBuffer(runStart, runEnd - runStart));
      }
      runBody = bodyOf[j];
      runStart = posOf[j];
      runEnd = runStart + lengths[j];
    }
    if (runBody >= 0) {
      out.add(bodies.get(runBody).nioBuffer(runStart, runEnd - runStart));
    }
    return new MapOrderedSegment(out.toArray(new ByteBuffer[0]), maps, lengths, order);
  }

  /** What to write, in order. */
  ByteBuffer[] buffers() {
    return buffers;
  }

  int batchCount() {
    return order.length;
  }

  /** Map index of the k-th batch written. */
  int mapIndex(int k) {
    return mapIndexes[order[k]];
  }

  /** Bytes of the k-th batch written, header included. */
  int length(int k) {
    return lengths[order[k]];
  }
}
