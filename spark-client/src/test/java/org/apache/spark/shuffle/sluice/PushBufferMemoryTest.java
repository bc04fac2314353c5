package org.apache.spark.shuffle.sluice;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.SparkConf;
import org.apache.spark.memory.MemoryConsumer;
import org.apache.spark.memory.MemoryMode;
import org.apache.spark.memory.TaskMemoryManager;
import org.apache.spark.memory.UnifiedMemoryManager;
import org.junit.jupiter.api.Test;

/** The writer's buffering against Spark's real task memory manager with a small budget. */
class PushBufferMemoryTest {
  private static final long BUFFER = 64 << 10;

  /** A task memory manager whose execution pool holds about {@code bytes}. */
  private static TaskMemoryManager budget(long bytes) {
    SparkConf conf =
        new SparkConf(false)
            .set("spark.memory.fraction", "1.0")
            .set("spark.memory.storageFraction", "0.0");
    UnifiedMemoryManager manager = new UnifiedMemoryManager(conf, bytes, 0L, 1);
    return new TaskMemoryManager(manager, 1);
  }

  @Test
  void buffersWithinTheBudgetStayAndPartitionsAreCountedOnce() throws Exception {
    AtomicInteger spills = new AtomicInteger();
    TaskMemoryManager tmm = budget(10 * BUFFER);
    PushBufferMemory memory = new PushBufferMemory(tmm, BUFFER, spills::incrementAndGet);
    for (int i = 0; i < 3; i++) {
      memory.beforeWrite(0);
      memory.beforeWrite(1);
      memory.beforeWrite(2);
    }
    // grants double with what is held: 1, 1 and 2 buffers
    assertThat(memory.held()).isEqualTo(4 * BUFFER);
    assertThat(memory.grants()).isEqualTo(3);
    assertThat(spills).hasValue(0);
    memory.releaseAll();
    assertThat(memory.held()).isZero();
    assertThat(tmm.getMemoryConsumptionForThisTask()).isZero();
  }

  @Test
  void thousandsOfPartitionsAskTheMemoryManagerAFewHundredTimes() throws Exception {
    TaskMemoryManager tmm = budget(4096 * BUFFER);
    PushBufferMemory memory = new PushBufferMemory(tmm, BUFFER, () -> {});
    for (int p = 0; p < 2000; p++) {
      memory.beforeWrite(p);
      memory.beforeWrite(p);
    }
    // 1, 1, 2, 4, 8 buffers, then 16 at a time: 129 grants, not 2000
    assertThat(memory.grants()).isEqualTo(129);
    assertThat(memory.held())
        .isGreaterThanOrEqualTo(2000 * BUFFER)
        .isLessThan((2000 + PushBufferMemory.MAX_GRANT_BUFFERS) * BUFFER);
    assertThat(tmm.getMemoryConsumptionForThisTask()).isEqualTo(memory.held());
    assertThat(memory.spills()).isZero();
    memory.releaseAll();
    assertThat(tmm.getMemoryConsumptionForThisTask()).isZero();
  }

  @Test
  void runningOutOfMemoryPushesEverythingAndStartsOver() throws Exception {
    AtomicInteger spills = new AtomicInteger();
    TaskMemoryManager tmm = budget(3 * BUFFER);
    PushBufferMemory memory = new PushBufferMemory(tmm, BUFFER, spills::incrementAndGet);
    for (int p = 0; p < 7; p++) {
      memory.beforeWrite(p);
    }
    // partitions 0 and 1 hold a buffer each; 2 asks for two more, of which one is left, so Spark
    // spills the writer and grants the two; and so on: pushed after 0-1, 2-3 and 4-5
    assertThat(spills.get()).isEqualTo(3);
    assertThat(memory.spills()).isEqualTo(3);
    assertThat(memory.held()).isEqualTo(2 * BUFFER); // partition 6 buffered, one buffer ahead
    memory.releaseAll();
    assertThat(tmm.getMemoryConsumptionForThisTask()).isZero();
  }

  @Test
  void anotherConsumerOfTheTaskMakesTheBuffersGo() throws Exception {
    AtomicInteger spills = new AtomicInteger();
    TaskMemoryManager tmm = budget(4 * BUFFER);
    PushBufferMemory memory = new PushBufferMemory(tmm, BUFFER, spills::incrementAndGet);
    for (int p = 0; p < 4; p++) {
      memory.beforeWrite(p);
    }
    MemoryConsumer other =
        new MemoryConsumer(tmm, tmm.pageSizeBytes(), MemoryMode.ON_HEAP) {
          @Override
          public long spill(long size, MemoryConsumer trigger) {
            return 0;
          }
        };
    assertThat(tmm.acquireExecutionMemory(2 * BUFFER, other)).isEqualTo(2 * BUFFER);
    assertThat(spills).hasValue(1);
    assertThat(memory.held()).isZero();
    tmm.releaseExecutionMemory(2 * BUFFER, other);
  }
}
