package io.sluice.e2e.spark;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerSpeculativeTaskSubmitted;

/**
 * Lets a slow task wait until the driver has decided to speculate it, without guessing durations:
 * the listener (driver) creates a marker file when Spark submits a speculative task; the task
 * (another JVM on the same machine) waits for that file.
 */
final class SpeculationMarker extends SparkListener {
  private final Path marker;

  SpeculationMarker(Path marker) {
    this.marker = marker;
  }

  @Override
  public void onSpeculativeTaskSubmitted(SparkListenerSpeculativeTaskSubmitted event) {
    try {
      Files.createDirectories(marker.getParent());
      if (!Files.exists(marker)) {
        Files.createFile(marker);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  boolean seen() {
    return Files.exists(marker);
  }

  /** Task side: waits for the marker, at most {@code maxMillis}. */
  static void await(String marker, long maxMillis) throws InterruptedException {
    long deadline = System.currentTimeMillis() + maxMillis;
    while (!Files.exists(Path.of(marker)) && System.currentTimeMillis() < deadline) {
      Thread.sleep(20);
    }
  }
}
