package io.sluice.server.storage;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * A shuffle's open splits by (partition, epoch) id. Every pushed batch looks its split up here, so
 * a lookup takes no lock and allocates nothing (no boxed key, unlike a map of {@code Long}): an
 * open-addressing table of primitive ids, half full at most. Adds come from one thread at a time
 * (the caller's lock) and nothing is ever removed; a lookup racing an add or a resize may miss the
 * split just added, so a caller that finds nothing looks again under its lock before adding.
 */
final class SplitTable {
  private static final int INITIAL_CAPACITY = 16;

  /**
   * One generation of the table. A slot's id is written before its split is published through the
   * array's volatile store, so a reader that sees the split sees its id.
   */
  private static final class Slots {
    final long[] ids;
    final AtomicReferenceArray<ReducePartitionSplit> splits;
    final int mask;

    Slots(int capacity) {
      ids = new long[capacity];
      splits = new AtomicReferenceArray<>(capacity);
      mask = capacity - 1;
    }

    ReducePartitionSplit get(long id) {
      for (int i = slot(id, mask); ; i = (i + 1) & mask) {
        ReducePartitionSplit split = splits.get(i);
        if (split == null || ids[i] == id) {
          return split;
        }
      }
    }

    void put(long id, ReducePartitionSplit split) {
      int i = slot(id, mask);
      while (splits.get(i) != null) {
        i = (i + 1) & mask;
      }
      ids[i] = id;
      splits.set(i, split);
    }
  }

  private volatile Slots slots = new Slots(INITIAL_CAPACITY);
  private int size; // written by adders only, under the caller's lock

  private static int slot(long id, int mask) {
    long h = id * 0x9E3779B97F4A7C15L;
    return (int) (h ^ (h >>> 32)) & mask;
  }

  /** The split with this id, or null (possibly one being added right now: see the class doc). */
  ReducePartitionSplit get(long id) {
    return slots.get(id);
  }

  /** Adds a split whose id is not in the table. Callers hold one lock for all adds. */
  void add(long id, ReducePartitionSplit split) {
    Slots current = slots;
    if (2 * (size + 1) > current.ids.length) {
      Slots grown = new Slots(current.ids.length * 2);
      for (int i = 0; i < current.ids.length; i++) {
        ReducePartitionSplit s = current.splits.get(i);
        if (s != null) {
          grown.put(current.ids[i], s);
        }
      }
      grown.put(id, split);
      slots = grown;
    } else {
      current.put(id, split);
    }
    size++;
  }

  /** The splits in the table now, in no particular order. */
  List<ReducePartitionSplit> values() {
    Slots current = slots;
    List<ReducePartitionSplit> out = new ArrayList<>();
    for (int i = 0; i < current.ids.length; i++) {
      ReducePartitionSplit s = current.splits.get(i);
      if (s != null) {
        out.add(s);
      }
    }
    return out;
  }
}
