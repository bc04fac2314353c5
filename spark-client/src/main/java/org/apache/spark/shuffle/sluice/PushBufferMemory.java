package org.apache.spark.shuffle.sluice;

import java.io.IOException;
import java.util.BitSet;
import org.apache.spark.memory.MemoryConsumer;
import org.apache.spark.memory.MemoryMode;
import org.apache.spark.memory.TaskMemoryManager;

/**
 * Accounts a map task's push buffers with Spark's task memory manager. Each partition written since
 * the last spill holds one buffer of {@code sluice.push.bufferSize} bytes; before a partition gets
 * one, that much execution memory is acquired. When Spark cannot grant it, or another consumer of
 * the task needs memory, the writer spills: every buffer is pushed (the {@link Spiller}) and all
 * memory is released. Used by the task thread only.
 */
final class PushBufferMemory extends MemoryConsumer {
  /** Pushes whatever the writer buffers. */
  interface Spiller {
    void spillAll() throws IOException;
  }

  private final long bufferSize;
  private final Spiller spiller;
  private final BitSet buffered = new BitSet();
  private long held;
  private long spills;

  PushBufferMemory(TaskMemoryManager memory, long bufferSize, Spiller spiller) {
    super(memory, memory.pageSizeBytes(), MemoryMode.ON_HEAP);
    this.bufferSize = bufferSize;
    this.spiller = spiller;
  }

  /** Called before a record goes to {@code partition}; reserves its buffer when it has none. */
  void beforeWrite(int partition) throws IOException {
    if (buffered.get(partition)) {
      return;
    }
    long granted = acquireMemory(bufferSize); // may call spill() on us first
    if (granted < bufferSize) {
      freeMemory(granted);
      spillNow();
      granted = acquireMemory(bufferSize);
    }
    // with less than one buffer granted the record still goes out; the buffer is counted as far
    // as Spark allowed
    held += granted;
    buffered.set(partition);
  }

  /** Pushes everything buffered now and releases the memory. */
  void spillNow() throws IOException {
    if (buffered.isEmpty()) {
      return;
    }
    spiller.spillAll();
    spills++;
    releaseAll();
  }

  /** Releases all memory (the buffers were pushed or dropped). */
  void releaseAll() {
    buffered.clear();
    if (held > 0) {
      freeMemory(held);
      held = 0;
    }
  }

  @Override
  public long spill(long size, MemoryConsumer trigger) throws IOException {
    long before = held;
    spillNow();
    return before;
  }

  long held() {
    return held;
  }

  /** Times the buffers were pushed early for lack of memory. */
  long spills() {
    return spills;
  }
}
