package io.sluice.benchmarks;

import java.util.Arrays;

/**
 * The spread of one measure over the rounds of a benchmark: its least, median and greatest value
 * and every round's value in order. Values that are not finite (a round that measured nothing) are
 * kept in the list but left out of the least, median and greatest.
 */
final class Spread {
  private final double[] values;
  private final double[] sorted;

  private Spread(double[] values) {
    this.values = values.clone();
    this.sorted = Arrays.stream(values).filter(Double::isFinite).sorted().toArray();
  }

  static Spread of(double... values) {
    return new Spread(values);
  }

  double min() {
    return sorted.length == 0 ? Double.NaN : sorted[0];
  }

  double max() {
    return sorted.length == 0 ? Double.NaN : sorted[sorted.length - 1];
  }

  double median() {
    return median(sorted);
  }

  /** The median of values sorted ascending; NaN when there are none. */
  static double median(double[] ascending) {
    if (ascending.length == 0) {
      return Double.NaN;
    }
    int mid = ascending.length / 2;
    return ascending.length % 2 == 1 ? ascending[mid] : (ascending[mid - 1] + ascending[mid]) / 2;
  }

  /** {@code {"min":..,"median":..,"max":..,"rounds":[..]}}. */
  String json() {
    StringBuilder s =
        new StringBuilder("{\"min\":")
            .append(Json.num(min()))
            .append(",\"median\":")
            .append(Json.num(median()))
            .append(",\"max\":")
            .append(Json.num(max()))
            .append(",\"rounds\":[");
    for (int i = 0; i < values.length; i++) {
      s.append(i == 0 ? "" : ",").append(Json.num(values[i]));
    }
    return s.append("]}").toString();
  }
}
