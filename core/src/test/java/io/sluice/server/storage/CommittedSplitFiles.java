package io.sluice.server.storage;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.sluice.protocol.BatchFormat;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** Test helper: writes a split file from batches and describes it as a committed split. */
public final class CommittedSplitFiles {
  private CommittedSplitFiles() {}

  /** One batch to write: map index, batch id and payload bytes. */
  public static final class Batch {
    public final int mapIndex;
    public final int batchId;
    public final byte[] payload;

    public Batch(int mapIndex, int batchId, byte[] payload) {
      this.mapIndex = mapIndex;
      this.batchId = batchId;
      this.payload = payload;
    }

    /** The batch as it sits in a file: header and payload, sealed with its checksum. */
    public byte[] bytes() {
      ByteBuf b = Unpooled.buffer(BatchFormat.HEADER_SIZE + payload.length);
      BatchFormat.writeBatch(b, mapIndex, 0, batchId, payload);
      return ByteBufUtil.getBytes(b);
    }
  }

  /** Writes {@code batches} in order to {@code file}, with one chunk holding everything. */
  public static CommittedSplitFile write(Path file, int partition, List<Batch> batches)
      throws IOException {
    MapIndexSet maps = new MapIndexSet();
    try (var out = Files.newOutputStream(file)) {
      for (Batch b : batches) {
        out.write(b.bytes());
        maps.add(b.mapIndex);
      }
    }
    long length = Files.size(file);
    return new CommittedSplitFile(
        new SplitKey("app-test", 0, partition, 0), file, length, List.of(0L, length), maps);
  }

  /**
   * Writes {@code batches} in order to {@code file}, as a split's flusher does, followed by their
   * map-run trailer; one chunk holds everything.
   */
  public static CommittedSplitFile writeIndexed(Path file, int partition, List<Batch> batches)
      throws IOException {
    MapIndexSet maps = new MapIndexSet();
    MapRunRecorder runs = new MapRunRecorder(Long.MAX_VALUE);
    long length = 0;
    try (var out = Files.newOutputStream(file)) {
      for (Batch b : batches) {
        byte[] bytes = b.bytes();
        out.write(bytes);
        maps.add(b.mapIndex);
        runs.batch(b.mapIndex, bytes.length);
        length += bytes.length;
      }
      java.nio.ByteBuffer trailer = runs.trailer();
      out.write(trailer.array(), 0, trailer.limit());
    }
    return new CommittedSplitFile(
        new SplitKey("app-test", 0, partition, 0), file, length, List.of(0L, length), maps);
  }
}
