package io.sluice.server.state;

import io.sluice.server.storage.MapIndexSet;
import java.util.ArrayList;
import java.util.List;

/** A {@link MapIndexSet}'s runs as the state store's repeated field ({@code map_runs}). */
final class MapRuns {
  private MapRuns() {}

  static List<Integer> toList(MapIndexSet set) {
    int[] runs = set.toRuns();
    List<Integer> out = new ArrayList<>(runs.length);
    for (int r : runs) {
      out.add(r);
    }
    return out;
  }

  static int[] toArray(List<Integer> runs) {
    int[] out = new int[runs.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = runs.get(i);
    }
    return out;
  }
}
