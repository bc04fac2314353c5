package io.sluice.client.read;

import io.netty.buffer.ByteBuf;
import java.io.Closeable;
import java.io.IOException;
import java.util.Map;

/**
 * A split of the distributed tier opened for reading: its file in a Hadoop file system, read chunk
 * by chunk at the offsets the commit recorded. Hadoop's classes are only loaded when a reader meets
 * such a split ({@link #open}), so readers of other splits need no Hadoop on their class path.
 */
interface RemoteSplitFile extends Closeable {
  /**
   * The bytes [offset, offset + length) of the file, in a buffer the caller releases.
   *
   * @throws IOException naming the file when it cannot be read or is shorter
   */
  ByteBuf read(long offset, int length) throws IOException;

  /**
   * The file's length: the split's data and its map-run trailer.
   *
   * @throws IOException naming the file when its status cannot be read
   */
  long length() throws IOException;

  @Override
  void close();

  /**
   * Opens the file at {@code uri} with the Hadoop configuration on the class path plus {@code
   * hadoopSettings}.
   *
   * @throws IOException naming the file when it cannot be opened, or when Hadoop is not on the
   *     class path
   */
  static RemoteSplitFile open(String uri, Map<String, String> hadoopSettings) throws IOException {
    try {
      return HadoopSplitFile.open(uri, hadoopSettings);
    } catch (LinkageError e) {
      throw new IOException(
          "Cannot read "
              + uri
              + ": the split is in Sluice's distributed tier (sluice.storage.policy names hdfs on"
              + " its server), and reading it needs Hadoop's FileSystem on the reader's class path ("
              + e
              + ")",
          e);
    }
  }
}
