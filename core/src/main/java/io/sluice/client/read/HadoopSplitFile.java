package io.sluice.client.read;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.io.IOException;
import java.net.URI;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** {@link RemoteSplitFile} through Hadoop's {@link FileSystem} (positioned reads). */
final class HadoopSplitFile implements RemoteSplitFile {
  private static final Logger LOG = LoggerFactory.getLogger(HadoopSplitFile.class);
  private final String uri;
  private final FileSystem fs;
  private final FSDataInputStream in;

  private HadoopSplitFile(String uri, FileSystem fs, FSDataInputStream in) {
    this.uri = uri;
    this.fs = fs;
    this.in = in;
  }

  static HadoopSplitFile open(String uri, Map<String, String> hadoopSettings) throws IOException {
    Configuration conf = new Configuration();
    for (Map.Entry<String, String> e : hadoopSettings.entrySet()) {
      conf.set(e.getKey(), e.getValue());
    }
    try {
      // FileSystem.get caches per scheme, authority and user: one client for all of a task's reads
      FileSystem fs = FileSystem.get(URI.create(uri), conf);
      return new HadoopSplitFile(uri, fs, fs.open(new Path(uri)));
    } catch (IOException | RuntimeException e) {
      throw new IOException("Cannot open " + uri + " of the distributed tier: " + e, e);
    }
  }

  /** Reads into a pooled heap buffer (Hadoop's positioned read fills an array), not a new one. */
  @Override
  public ByteBuf read(long offset, int length) throws IOException {
    ByteBuf chunk = PooledByteBufAllocator.DEFAULT.heapBuffer(length, length);
    try {
      in.readFully(offset, chunk.array(), chunk.arrayOffset(), length);
      chunk.writerIndex(length);
      return chunk;
    } catch (IOException e) {
      chunk.release();
      throw new IOException(
          "Reading bytes [" + offset + ", " + (offset + length) + ") of " + uri + " failed: " + e,
          e);
    } catch (RuntimeException e) {
      chunk.release();
      throw e;
    }
  }

  @Override
  public long length() throws IOException {
    try {
      return fs.getFileStatus(new Path(uri)).getLen();
    } catch (IOException e) {
      throw new IOException("Reading the length of " + uri + " failed: " + e, e);
    }
  }

  @Override
  public void close() {
    try {
      in.close();
    } catch (IOException e) {
      LOG.debug("Closing {} failed: {}", uri, e.toString());
    }
  }
}
