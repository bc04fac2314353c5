package io.sluice.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The rounds of the server benchmark run with one setting (batch checksums on or off, how
 * connections are secured, the replication factor), and their totals: bytes, time and CPU summed
 * over every measured round (the warmup excluded), so the comparison of two runs does not hang on
 * one round.
 */
final class ChecksumRun {
  final boolean checksums;
  final boolean verifyOnPush;
  final WireSecurity security;
  final int replicationFactor;
  final List<RoundResult> results = new ArrayList<>();
  boolean warmupVerified = true;
  boolean serverCpuSupported;
  long memoryPeak;
  long checksumFailures;

  ChecksumRun(
      boolean checksums, boolean verifyOnPush, WireSecurity security, int replicationFactor) {
    this.checksums = checksums;
    this.verifyOnPush = verifyOnPush;
    this.security = security;
    this.replicationFactor = replicationFactor;
  }

  String describe() {
    if (!checksums) {
      return "off (batches carry none; readers and the server verify none)";
    }
    return "on (pushers seal, readers verify"
        + (verifyOnPush ? ", the server verifies on push)" : "; the server does not verify)");
  }

  boolean verified() {
    return warmupVerified && results.stream().allMatch(RoundResult::verified);
  }

  private List<RoundResult> completed() {
    List<RoundResult> done = new ArrayList<>();
    for (RoundResult r : results) {
      if (r.failure == null) {
        done.add(r);
      }
    }
    return done;
  }

  private long bytes() {
    return completed().stream().mapToLong(r -> r.bytesWritten).sum();
  }

  /** Every measured round's records over the time until each was committed. */
  double ingestMBps() {
    long nanos = completed().stream().mapToLong(r -> r.pushNanos + r.commitNanos).sum();
    return nanos > 0 ? bytes() / RoundResult.MIB / (nanos / 1e9) : Double.NaN;
  }

  double readMBps() {
    long nanos = completed().stream().mapToLong(r -> r.readNanos).sum();
    return nanos > 0 ? bytes() / RoundResult.MIB / (nanos / 1e9) : Double.NaN;
  }

  /** Server threads' CPU seconds, writing and reading, per GiB of records. */
  double serverCpuSecPerGiB() {
    long nanos =
        completed().stream().mapToLong(r -> r.serverCpuWriteNanos + r.serverCpuReadNanos).sum();
    return perGiB(nanos);
  }

  /** The whole process's CPU seconds (map tasks, readers, server), per GiB of records. */
  double processCpuSecPerGiB() {
    long nanos =
        completed().stream().mapToLong(r -> r.processCpuWriteNanos + r.processCpuReadNanos).sum();
    return perGiB(nanos);
  }

  private double perGiB(long nanos) {
    long bytes = bytes();
    return bytes > 0 ? nanos / 1e9 / (bytes / RoundResult.GIB) : Double.NaN;
  }

  String toJson(double rawDiskMBps) {
    StringBuilder s = new StringBuilder("{\"checksums\":").append(checksums);
    s.append(",\"security\":").append(Json.str(security.key));
    s.append(",\"verifyOnPush\":").append(verifyOnPush);
    s.append(",\"replicationFactor\":").append(replicationFactor);
    s.append(",\"bytes\":").append(bytes());
    s.append(",\"ingestMBps\":").append(Json.num(ingestMBps()));
    s.append(",\"readMBps\":").append(Json.num(readMBps()));
    s.append(",\"serverCpuSecPerGiB\":").append(Json.num(serverCpuSecPerGiB()));
    s.append(",\"processCpuSecPerGiB\":").append(Json.num(processCpuSecPerGiB()));
    s.append(",\"serverChecksumFailures\":").append(checksumFailures);
    s.append(",\"verified\":").append(verified());
    s.append(",\"runs\":[");
    for (int i = 0; i < results.size(); i++) {
      s.append(i == 0 ? "" : ",").append(results.get(i).toJson(rawDiskMBps));
    }
    return s.append("]}").toString();
  }

  /** One line comparing a plain run with one secured another way ({@code tls}). */
  static String securityComparison(ChecksumRun plain, ChecksumRun tls) {
    return String.format(
        Locale.ROOT,
        "%s / plain, over every measured round: ingest %.1f / %.1f MB/s (ratio %.3f), read %.1f /"
            + " %.1f MB/s (ratio %.3f), server CPU per GiB %.2f / %.2f s (ratio %.3f), process CPU"
            + " per GiB %.2f / %.2f s (ratio %.3f)",
        tls.security.key,
        tls.ingestMBps(),
        plain.ingestMBps(),
        tls.ingestMBps() / plain.ingestMBps(),
        tls.readMBps(),
        plain.readMBps(),
        tls.readMBps() / plain.readMBps(),
        tls.serverCpuSecPerGiB(),
        plain.serverCpuSecPerGiB(),
        tls.serverCpuSecPerGiB() / plain.serverCpuSecPerGiB(),
        tls.processCpuSecPerGiB(),
        plain.processCpuSecPerGiB(),
        tls.processCpuSecPerGiB() / plain.processCpuSecPerGiB());
  }

  /** A few lines comparing a run without checksums ({@code off}) with one with them. */
  static String comparison(ChecksumRun off, ChecksumRun on) {
    return String.format(
        Locale.ROOT,
        "checksums on / off, over every measured round: server CPU per GiB %.2f / %.2f s (ratio"
            + " %.3f), process CPU per GiB %.2f / %.2f s (ratio %.3f), ingest %.1f / %.1f MB/s"
            + " (ratio %.3f), read %.1f / %.1f MB/s (ratio %.3f)",
        on.serverCpuSecPerGiB(),
        off.serverCpuSecPerGiB(),
        on.serverCpuSecPerGiB() / off.serverCpuSecPerGiB(),
        on.processCpuSecPerGiB(),
        off.processCpuSecPerGiB(),
        on.processCpuSecPerGiB() / off.processCpuSecPerGiB(),
        on.ingestMBps(),
        off.ingestMBps(),
        on.ingestMBps() / off.ingestMBps(),
        on.readMBps(),
        off.readMBps(),
        on.readMBps() / off.readMBps());
  }
}
