package io.sluice.testutil;

import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.ServiceLoader;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.regex.Pattern;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import reactor.blockhound.BlockHound;
import reactor.blockhound.integration.BlockHoundIntegration;

/**
 * Fails a test when an event-loop thread made a blocking call (a disk access, a sleep, a wait on a
 * lock or a future): event loops never wait, or one slow disk or silent peer stalls every
 * connection the loop serves. Uses BlockHound with Netty's own allowances (its event loops park
 * when idle, and so on); event-loop threads are recognized by the names {@code
 * io.sluice.network.Transports} gives them. Registered for every test through {@code
 * META-INF/services}; the build's test JVMs run with {@code
 * -XX:+AllowRedefinitionToAddDeleteMethods}, which BlockHound needs.
 */
public final class BlockingCallDetector implements AfterEachCallback {
  /** Threads of Transports' event loop groups: {@code <name>-io|accept|client-<pool>-<n>}. */
  private static final Pattern EVENT_LOOP = Pattern.compile(".+-(io|accept|client)-\\d+-\\d+");

  private static final Queue<String> CALLS = new ConcurrentLinkedQueue<>();

  static {
    if (isOnClassPath("reactor.blockhound.BlockHound")) {
      Installer.install(); // modules that reuse core's test jar without BlockHound skip it
    }
  }

  private static boolean isOnClassPath(String className) {
    try {
      Class.forName(className, false, BlockingCallDetector.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException e) {
      return false;
    }
  }

  /** Touches BlockHound's classes only when they are there. */
  private static final class Installer {
    static void install() {
      BlockHound.Builder builder = BlockHound.builder();
      for (BlockHoundIntegration integration : ServiceLoader.load(BlockHoundIntegration.class)) {
        if (integration.getClass().getName().startsWith("io.netty.")) {
          builder.with(integration); // Netty's allowances: idle event loops park, and so on
        }
      }
      builder
          // handing a task to another thread takes the queue's lock for an instant: not a wait
          // on a disk, a peer or a lock held across IO
          .allowBlockingCallsInside(ThreadPoolExecutor.class.getName(), "execute")
          .allowBlockingCallsInside(ScheduledThreadPoolExecutor.class.getName(), "schedule")
          // the JDK's SSL session answers its packet size under a lock its handshake tasks hold
          // for an instant (a connection's first write right after its handshake meets it)
          .allowBlockingCallsInside("io.netty.handler.ssl.SslHandler", "allocateOutNetBuf")
          // BlockHound knows java.io; file work through java.nio goes down to these natives
          .markAsBlocking("sun.nio.fs.UnixNativeDispatcher", "open0", "(JII)I")
          .markAsBlocking("sun.nio.fs.UnixNativeDispatcher", "unlink0", "(J)V")
          .markAsBlocking("sun.nio.fs.UnixNativeDispatcher", "rmdir0", "(J)V")
          .markAsBlocking("sun.nio.fs.UnixNativeDispatcher", "mkdir0", "(JI)V")
          .markAsBlocking("sun.nio.fs.UnixNativeDispatcher", "rename0", "(JJ)V")
          .markAsBlocking(
              "sun.nio.ch.FileDispatcherImpl", "pread0", "(Ljava/io/FileDescriptor;JIJ)I")
          // java.io.File's questions (a stat, a listing) and RandomAccessFile's open wait on the
          // disk too; the natives are named without the 0 up to Java 17 and with it later
          .markAsBlocking("java.io.RandomAccessFile", "open0", "(Ljava/lang/String;I)V")
          .markAsBlocking("java.io.UnixFileSystem", "getLength", "(Ljava/io/File;)J")
          .markAsBlocking("java.io.UnixFileSystem", "getLength0", "(Ljava/io/File;)J")
          .markAsBlocking("java.io.UnixFileSystem", "getBooleanAttributes0", "(Ljava/io/File;)I")
          .markAsBlocking("java.io.UnixFileSystem", "getLastModifiedTime", "(Ljava/io/File;)J")
          .markAsBlocking("java.io.UnixFileSystem", "getLastModifiedTime0", "(Ljava/io/File;)J")
          .markAsBlocking("java.io.UnixFileSystem", "list", "(Ljava/io/File;)[Ljava/lang/String;")
          .markAsBlocking("java.io.UnixFileSystem", "list0", "(Ljava/io/File;)[Ljava/lang/String;")
          .markAsBlocking("sun.nio.ch.FileDispatcherImpl", "force0", "(Ljava/io/FileDescriptor;Z)I")
          // the state store: a RocksDB write appends to its log (and may stall behind a flush or a
          // compaction); a log sync waits for the disk
          .markAsBlocking("org.rocksdb.RocksDB", "write0", "(JJJ)V")
          .markAsBlocking("org.rocksdb.RocksDB", "syncWal", "(J)V")
          .nonBlockingThreadPredicate(p -> t -> EVENT_LOOP.matcher(t.getName()).matches())
          .blockingMethodCallback(
              m -> {
                StringBuilder where = new StringBuilder();
                where
                    .append(Thread.currentThread().getName())
                    .append(" called ")
                    .append(m)
                    .append(':');
                StackTraceElement[] stack = new Throwable().getStackTrace();
                for (int i = 0; i < Math.min(stack.length, 25); i++) {
                  where.append("\n    at ").append(stack[i]);
                }
                CALLS.add(where.toString());
              })
          .install();
    }
  }

  @Override
  public void afterEach(ExtensionContext context) {
    if (CALLS.isEmpty()) {
      return;
    }
    List<String> calls = new ArrayList<>(CALLS);
    CALLS.clear();
    throw new AssertionError(
        calls.size()
            + " blocking call(s) on event-loop threads in or before "
            + context.getDisplayName()
            + ":\n"
            + String.join("\n---\n", calls));
  }
}
