package io.sluice.common;

/** Time, injected so tests can move it by hand. */
public interface Clock {
  Clock SYSTEM =
      new Clock() {
        @Override
        public long millis() {
          return System.currentTimeMillis();
        }

        @Override
        public long nanos() {
          return System.nanoTime();
        }
      };

  /** Wall-clock milliseconds. */
  long millis();

  /** Monotonic nanoseconds, for measuring intervals. */
  long nanos();
}
