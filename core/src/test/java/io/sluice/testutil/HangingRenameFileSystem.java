package io.sluice.testutil;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.URI;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;

/**
 * The local file system under the scheme {@code hangrename}, whose {@code rename} waits while the
 * test holds it: a distributed tier whose name node stops answering after the data was written.
 * Register it with {@code fs.hangrename.impl} (and {@code fs.hangrename.impl.disable.cache}).
 */
public final class HangingRenameFileSystem extends RawLocalFileSystem {
  private static volatile CountDownLatch gate = new CountDownLatch(0);
  private static final AtomicInteger renamesPassed = new AtomicInteger();

  /** From now on, renaming a file waits until {@link #release()}. */
  public static void hold() {
    renamesPassed.set(0);
    gate = new CountDownLatch(1);
  }

  /** Renames that returned since {@link #hold()}. */
  public static int renamesPassed() {
    return renamesPassed.get();
  }

  public static void release() {
    gate.countDown();
  }

  @Override
  public String getScheme() {
    return "hangrename";
  }

  @Override
  public URI getUri() {
    return URI.create("hangrename:///");
  }

  @Override
  public boolean rename(Path src, Path dst) throws IOException {
    try {
      if (!gate.await(60, TimeUnit.SECONDS)) {
        throw new IOException("the test never released the rename of " + src);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("interrupted renaming " + src);
    }
    try {
      return super.rename(src, dst);
    } finally {
      renamesPassed.incrementAndGet();
    }
  }
}
