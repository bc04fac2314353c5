package io.sluice.testutil;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.URI;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.util.Progressable;

/**
 * The local file system under the scheme {@code hangfile}, whose {@code create} waits while the
 * test holds it: a distributed tier that stops answering. Register it with {@code
 * fs.hangfile.impl}.
 */
public final class HangingFileSystem extends RawLocalFileSystem {
  private static volatile CountDownLatch gate = new CountDownLatch(0);
  private static final AtomicInteger createsPassed = new AtomicInteger();

  /** From now on, creating a file waits until {@link #release()}. */
  public static void hold() {
    createsPassed.set(0);
    gate = new CountDownLatch(1);
  }

  /** Creates that returned since {@link #hold()}: their files exist from then on, until deleted. */
  public static int createsPassed() {
    return createsPassed.get();
  }

  public static void release() {
    gate.countDown();
  }

  @Override
  public String getScheme() {
    return "hangfile";
  }

  @Override
  public URI getUri() {
    return URI.create("hangfile:///");
  }

  @Override
  public FSDataOutputStream create(
      Path f,
      boolean overwrite,
      int bufferSize,
      short replication,
      long blockSize,
      Progressable progress)
      throws IOException {
    await(f);
    try {
      return super.create(f, overwrite, bufferSize, replication, blockSize, progress);
    } finally {
      createsPassed.incrementAndGet();
    }
  }

  @Override
  public FSDataOutputStream create(
      Path f,
      FsPermission permission,
      boolean overwrite,
      int bufferSize,
      short replication,
      long blockSize,
      Progressable progress)
      throws IOException {
    await(f);
    try {
      return super.create(f, permission, overwrite, bufferSize, replication, blockSize, progress);
    } finally {
      createsPassed.incrementAndGet();
    }
  }

  private static void await(Path f) throws IOException {
    try {
      if (!gate.await(60, TimeUnit.SECONDS)) {
        throw new IOException("the test never released " + f);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("interrupted creating " + f);
    }
  }
}
