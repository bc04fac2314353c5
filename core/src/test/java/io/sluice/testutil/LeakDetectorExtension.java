package io.sluice.testutil;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakDetectorFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails a test when Netty's leak detector reports a buffer that was never released. Registered for
 * every test through {@code META-INF/services} (JUnit extension auto-detection is on in the build),
 * and the build runs tests with {@code -Dio.netty.leakDetection.level=paranoid}, so every buffer is
 * tracked. After each test it collects garbage and allocates a few buffers, which makes the
 * detector report leaked buffers that have become unreachable.
 */
public final class LeakDetectorExtension implements AfterEachCallback {
  private static final Queue<String> LEAKS = new ConcurrentLinkedQueue<>();

  static {
    ResourceLeakDetectorFactory.setResourceLeakDetectorFactory(new RecordingFactory());
  }

  @Override
  public void afterEach(ExtensionContext context) throws InterruptedException {
    for (int i = 0; i < 3 && LEAKS.isEmpty(); i++) {
      System.gc();
      System.runFinalization();
      Thread.sleep(20);
      provokeReport();
    }
    if (!LEAKS.isEmpty()) {
      List<String> leaks = new ArrayList<>(LEAKS);
      LEAKS.clear();
      throw new AssertionError(
          leaks.size()
              + " Netty buffer(s) leaked in or before "
              + context.getDisplayName()
              + ":\n"
              + String.join("\n---\n", leaks));
    }
  }

  private static void provokeReport() {
    for (int i = 0; i < 8; i++) {
      ByteBuf a = PooledByteBufAllocator.DEFAULT.directBuffer(16);
      ByteBuf b = PooledByteBufAllocator.DEFAULT.heapBuffer(16);
      ByteBuf c = UnpooledByteBufAllocator.DEFAULT.directBuffer(16);
      a.release();
      b.release();
      c.release();
    }
  }

  private static final class RecordingFactory extends ResourceLeakDetectorFactory {
    @Override
    @SuppressWarnings("deprecation") // the abstract method Netty 4.1 asks factories to implement
    public <T> ResourceLeakDetector<T> newResourceLeakDetector(
        Class<T> resource, int samplingInterval, long maxActive) {
      return new ResourceLeakDetector<T>(resource, samplingInterval) {
        @Override
        protected void reportTracedLeak(String resourceType, String records) {
          LEAKS.add(resourceType + " leaked:" + records);
          super.reportTracedLeak(resourceType, records);
        }

        @Override
        protected void reportUntracedLeak(String resourceType) {
          LEAKS.add(resourceType + " leaked (no records)");
          super.reportUntracedLeak(resourceType);
        }
      };
    }
  }
}
