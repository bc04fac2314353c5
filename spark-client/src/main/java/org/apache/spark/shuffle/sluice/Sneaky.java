package org.apache.spark.shuffle.sluice;

/**
 * Throws checked exceptions through Scala interfaces whose Java view declares none (an iterator's
 * {@code next}, a reader's {@code read}): Spark expects a {@code FetchFailedException} to travel
 * out of the reduce task's record iterator as it is.
 */
final class Sneaky {
  private Sneaky() {}

  static RuntimeException raise(Throwable t) {
    Sneaky.<RuntimeException>doRaise(t);
    return new IllegalStateException("unreachable", t);
  }

  @SuppressWarnings("unchecked")
  private static <E extends Throwable> void doRaise(Throwable t) throws E {
    throw (E) t;
  }
}
