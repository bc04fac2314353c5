package org.apache.spark.shuffle.sluice;

import java.io.IOException;
import java.util.BitSet;
import org.apache.spark.memory.MemoryConsumer;
import org.apache.spark.memory.MemoryMode;
import org.apache.spark.memory.TaskMemoryManager;

/**
 * Accounts a map task's push buffers with Spark's task memory manager. Each partition written since
 * the last spill holds one buffer of {@code sluice.push.bufferSize} bytes, and the writer holds
 * execution memory for every one of them. It asks for that memory ahead, in grants that double with
 * what it holds up to {@value #MAX_GRANT_BUFFERS} buffers, so a map task over thousands of
 * partitions asks Spark's memory manager (a lock shared by the executor's tasks) a few hundred
 * times, not once per partition. When Spark cannot grant even one buffer, or another consumer of
 * the task needs memory, the writer spills: every buffer is pushed (the {@link Spiller}) and all
 * memory is released. Near the end of the task's memory a grant larger than what is left makes
 * Spark spill the writer itself, so it pushes early by at most one grant: at most {@value
 * #MAX_GRANT_BUFFERS} buffers' worth of a budget that is usually hundreds of them. Used by the task
 * thread only.
 */
final class PushBufferMemory extends MemoryConsumer {
  /** Pushes whatever the writer buffers. */
  interface Spiller {
    void spillAll() throws IOException;
  }

  /** The largest grant asked for at once, in buffers. */
  static final int MAX_GRANT_BUFFERS = 16;

  private final long bufferSize;
  private final Spiller spiller;
  private final BitSet buffered = new BitSet();
  private int buffers; // partitions set in buffered
  private long held;
  private long spills;
  private long grants;

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
    if (held < (buffers + 1L) * bufferSize) {
      long ask = Math.max(bufferSize, Math.min(held, MAX_GRANT_BUFFERS * bufferSize));
      long granted = acquireMemory(ask); // may call spill() on us first
      grants++;
      if (granted < bufferSize) {
        freeMemory(granted);
        spillNow();
        granted = acquireMemory(bufferSize);
      }
      // with less than one buffer granted the record still goes out; the buffer is counted as far
      // as Spark allowed
      held += granted;
    }
    buffered.set(partition);
    buffers++;
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
    buffers = 0;
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

  /** Times it asked Spark's memory manager for memory. */
  long grants() {
    return grants;
  }

  /** Times the buffers were pushed early for lack of memory. */
  long spills() {
    return spills;
  }
}
