package io.sluice.client.push;

import java.io.IOException;
import java.io.OutputStream;

/**
 * An output stream into a {@link MapOutputPusher}'s partition buffers: the bytes written between
 * {@link #startRecord} and {@link #endRecord} are one whole record of that partition, appended
 * where they will be compressed from, so a serializer that flushes after each record copies it once
 * on its way to a batch (writing to a byte stream and then {@link MapOutputPusher#write} copies it
 * twice). A record is never split across batches; a {@link MapOutputPusher#flush} while a record is
 * open pushes the records before it and keeps it. The pusher holds the open record; this stream
 * only forwards to it. Not thread safe; the pusher's task thread only.
 */
public final class RecordStream extends OutputStream {
  private final MapOutputPusher pusher;

  RecordStream(MapOutputPusher pusher) {
    this.pusher = pusher;
  }

  /** The bytes written from now until {@link #endRecord} are one record of {@code partition}. */
  public void startRecord(int partition) throws IOException {
    pusher.startRecord(partition);
  }

  /**
   * Ends the record: it stays in its partition's buffer or goes out in a batch.
   *
   * @return the record's length in bytes
   */
  public int endRecord() throws IOException {
    return pusher.endRecord();
  }

  @Override
  public void write(int b) throws IOException {
    pusher.appendToRecord(b);
  }

  @Override
  public void write(byte[] b, int off, int len) throws IOException {
    if (len > 0) {
      pusher.appendToRecord(b, off, len);
    }
  }

  /** Nothing to flush: a record's bytes are in its partition's buffer as soon as written. */
  @Override
  public void flush() {}

  /** Leaves the pusher as it is: it is finished or closed on its own. */
  @Override
  public void close() {}
}
