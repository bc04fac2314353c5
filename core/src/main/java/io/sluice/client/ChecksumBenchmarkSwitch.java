package io.sluice.client;

/**
 * The one way to push and read batches without checksums, for {@code shuffle-bench server
 * --checksums}, which measures what checksums cost. It is not a setting, on purpose: every shuffle
 * checks every batch it reads ({@link io.sluice.protocol.BatchFormat}), and an "off" that a
 * configuration could carry into production would turn the protection off where nobody looks.
 *
 * <p>With the system property {@value #PROPERTY} set to {@code true} when a pusher or reader is
 * created, the pusher marks its batches as carrying no checksum (flag {@link
 * io.sluice.protocol.BatchFormat#FLAG_NO_CHECKSUM}, checksum 0) and the reader skips the check of
 * such batches. Every reader created without the property refuses them, so a batch written this way
 * can never pass unchecked through a normal shuffle; a flipped flag bit fails the read like any
 * other corruption.
 */
public final class ChecksumBenchmarkSwitch {
  /** The system property: {@code true} turns checksums off for pushers and readers created next. */
  public static final String PROPERTY = "sluice.benchmark.withoutChecksums";

  private ChecksumBenchmarkSwitch() {}

  /** Whether pushers and readers created now write and verify checksums (almost always true). */
  public static boolean checksums() {
    return !Boolean.getBoolean(PROPERTY);
  }
}
