package io.sluice.server.read;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.function.Supplier;

/**
 * Work waiting per application, taken in turn: each {@link #poll} takes the next item of the
 * application whose turn it is, which then goes to the back of the line if it has more. Within an
 * application, items come in the order its queue gives (first come, or a priority). So a job with
 * thousands of reads waiting delays a small job's by one turn, not all of them. Not thread safe:
 * its owner guards it.
 */
final class ApplicationTurns<T> {
  private final Supplier<Queue<T>> newQueue;

  /** Applications with work waiting, in turn order. */
  private final Map<String, Queue<T>> waiting = new LinkedHashMap<>();

  /**
   * @param newQueue a new, empty queue for one application's items
   */
  ApplicationTurns(Supplier<Queue<T>> newQueue) {
    this.newQueue = newQueue;
  }

  void add(String appId, T item) {
    waiting.computeIfAbsent(appId, id -> newQueue.get()).add(item);
  }

  /** The next item, in its application's turn; null when nothing waits. */
  T poll() {
    Iterator<Map.Entry<String, Queue<T>>> turns = waiting.entrySet().iterator();
    if (!turns.hasNext()) {
      return null;
    }
    Map.Entry<String, Queue<T>> turn = turns.next();
    turns.remove();
    T item = turn.getValue().poll();
    if (!turn.getValue().isEmpty()) {
      waiting.put(turn.getKey(), turn.getValue());
    }
    return item;
  }

  /** Takes {@code item} of {@code appId} out of the line, if it waits. */
  void remove(String appId, T item) {
    Queue<T> queue = waiting.get(appId);
    if (queue != null && queue.remove(item) && queue.isEmpty()) {
      waiting.remove(appId);
    }
  }

  boolean isEmpty() {
    return waiting.isEmpty();
  }

  /** Every waiting item, in no particular order. */
  List<T> all() {
    List<T> items = new ArrayList<>();
    for (Queue<T> queue : waiting.values()) {
      items.addAll(queue);
    }
    return items;
  }

  void clear() {
    waiting.clear();
  }
}
