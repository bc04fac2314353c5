package io.sluice.benchmarks;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * The baseline of the server benchmark: how fast this JVM writes the same number of bytes to a file
 * in the same directory with plain {@code FileChannel.write} of 1 MiB direct buffers, followed by
 * one fsync. The file is deleted afterwards.
 */
final class RawDiskBaseline {
  private static final int BUFFER_SIZE = 1 << 20;

  final long bytes;
  final long writeNanos;
  final long syncNanos;

  private RawDiskBaseline(long bytes, long writeNanos, long syncNanos) {
    this.bytes = bytes;
    this.writeNanos = writeNanos;
    this.syncNanos = syncNanos;
  }

  /** MB/s (MB = 2^20 bytes) of the writes and the fsync together. */
  double mbps() {
    return bytes / RoundResult.MIB / ((writeNanos + syncNanos) / 1e9);
  }

  @Override
  public String toString() {
    return String.format(
        Locale.ROOT,
        "%.1f MB/s (write %.2f s + fsync %.2f s)",
        mbps(),
        writeNanos / 1e9,
        syncNanos / 1e9);
  }

  /** Writes and fsyncs {@code bytes} bytes in {@code dir}, timing both. */
  static RawDiskBaseline measure(Path dir, long bytes) throws IOException {
    ByteBuffer buffer = randomBuffer();
    Path file = Files.createTempFile(dir, "raw-disk-", ".bin");
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
      long start = System.nanoTime();
      write(channel, buffer, bytes);
      long written = System.nanoTime();
      channel.force(true);
      return new RawDiskBaseline(bytes, written - start, System.nanoTime() - written);
    } finally {
      Files.deleteIfExists(file);
    }
  }

  /** A 1 MiB direct buffer of seeded random bytes, for {@link #write}. */
  static ByteBuffer randomBuffer() {
    ByteBuffer buffer = ByteBuffer.allocateDirect(BUFFER_SIZE);
    SplittableRandom random = new SplittableRandom(42);
    while (buffer.remaining() >= Long.BYTES) {
      buffer.putLong(random.nextLong());
    }
    return buffer;
  }

  /**
   * Writes {@code bytes} bytes to {@code channel}, {@code buffer} (from {@link #randomBuffer}) over
   * and over.
   */
  static void write(FileChannel channel, ByteBuffer buffer, long bytes) throws IOException {
    long left = bytes;
    while (left > 0) {
      buffer.clear().limit((int) Math.min(left, buffer.capacity()));
      while (buffer.hasRemaining()) {
        left -= channel.write(buffer);
      }
    }
  }
}
