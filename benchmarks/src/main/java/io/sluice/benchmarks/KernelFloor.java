package io.sluice.benchmarks;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * The baseline of the server CPU figure: what the kernel alone charges, on this machine and in the
 * servers' directory, for the three things a shuffle server must do with every byte whatever its
 * code, measured as the CPU time (user + system) of the thread doing it:
 *
 * <ul>
 *   <li><b>write</b>: {@code FileChannel.write} of 1 MiB direct buffers into a new file (what a
 *       flusher does with pushed bytes: page allocation and the copy into the page cache);
 *   <li><b>receive</b>: reading a loopback TCP connection into a 64 KiB direct buffer (what an
 *       event loop does with a push; the sender's side pays the TCP receive processing, as an
 *       executor pushing does);
 *   <li><b>sendfile</b>: {@code FileChannel.transferTo} of that file to a loopback connection (what
 *       an event loop does to serve a fetch; on loopback the sending thread also runs the
 *       receiver's TCP processing).
 * </ul>
 *
 * Each is the least of a few rounds. A workload's floor is then {@code pushed × (write + receive) +
 * read × sendfile}: a server doing nothing but these would spend that much CPU.
 */
final class KernelFloor {
  private static final int RECEIVE_BUFFER = 64 << 10;
  private static final double GIB = 1L << 30;

  final double writeSecondsPerGiB;
  final double receiveSecondsPerGiB;
  final double sendfileSecondsPerGiB;

  private KernelFloor(double write, double receive, double sendfile) {
    this.writeSecondsPerGiB = write;
    this.receiveSecondsPerGiB = receive;
    this.sendfileSecondsPerGiB = sendfile;
  }

  /** CPU seconds the kernel alone would charge a server for {@code pushed} and {@code read}. */
  double seconds(long pushed, long read) {
    return pushed / GIB * (writeSecondsPerGiB + receiveSecondsPerGiB)
        + read / GIB * sendfileSecondsPerGiB;
  }

  @Override
  public String toString() {
    return String.format(
        Locale.ROOT,
        "write %.2f, receive %.2f, sendfile %.2f CPU-s/GiB",
        writeSecondsPerGiB,
        receiveSecondsPerGiB,
        sendfileSecondsPerGiB);
  }

  /** The least over {@code rounds} rounds of moving {@code bytes} bytes each way in {@code dir}. */
  static KernelFloor measure(Path dir, long bytes, int rounds) throws IOException {
    if (!ManagementFactory.getThreadMXBean().isCurrentThreadCpuTimeSupported()) {
      return null;
    }
    double write = Double.MAX_VALUE;
    double receive = Double.MAX_VALUE;
    double sendfile = Double.MAX_VALUE;
    for (int i = 0; i < rounds; i++) {
      Path file = Files.createTempFile(dir, "kernel-floor-", ".bin");
      try {
        write = Math.min(write, perGiB(writeFile(file, bytes), bytes));
        long[] nanos = sendOverLoopback(file);
        sendfile = Math.min(sendfile, perGiB(nanos[0], bytes));
        receive = Math.min(receive, perGiB(nanos[1], bytes));
      } finally {
        Files.deleteIfExists(file);
      }
    }
    return new KernelFloor(write, receive, sendfile);
  }

  private static double perGiB(long nanos, long bytes) {
    return nanos / 1e9 / (bytes / GIB);
  }

  private static long threadCpu() {
    return ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime();
  }

  /** Writes {@code bytes} random bytes; the writing thread's CPU nanoseconds. */
  private static long writeFile(Path file, long bytes) throws IOException {
    ByteBuffer buffer = RawDiskBaseline.randomBuffer();
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
      long start = threadCpu();
      RawDiskBaseline.write(channel, buffer, bytes);
      return threadCpu() - start;
    }
  }

  /** Sends {@code file} over loopback; CPU nanoseconds of {sending thread, receiving thread}. */
  private static long[] sendOverLoopback(Path file) throws IOException {
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    try (ServerSocketChannel listener = ServerSocketChannel.open()) {
      listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      CompletableFuture<Long> received =
          CompletableFuture.supplyAsync(
              () -> {
                try (SocketChannel in = listener.accept()) {
                  ByteBuffer buffer = ByteBuffer.allocateDirect(RECEIVE_BUFFER);
                  long start = threads.getCurrentThreadCpuTime();
                  while (in.read(buffer.clear()) >= 0) {
                    // read until the sender closes
                  }
                  return threads.getCurrentThreadCpuTime() - start;
                } catch (IOException e) {
                  throw new IllegalStateException("the kernel-floor receiver failed", e);
                }
              },
              runnable -> new Thread(runnable, "kernel-floor-receiver").start());
      long sent;
      try (FileChannel source = FileChannel.open(file, StandardOpenOption.READ);
          SocketChannel out = SocketChannel.open(listener.getLocalAddress())) {
        long start = threadCpu();
        long size = source.size();
        for (long position = 0; position < size; ) {
          position += source.transferTo(position, size - position, out);
        }
        sent = threadCpu() - start;
      }
      try {
        return new long[] {sent, received.get()};
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("interrupted while measuring the kernel floor", e);
      } catch (ExecutionException e) {
        throw new IOException(e.getCause().getMessage(), e.getCause());
      }
    }
  }
}
