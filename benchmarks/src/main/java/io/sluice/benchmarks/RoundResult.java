package io.sluice.benchmarks;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The measurements of one shuffle of the server benchmark (one pusher count). Rates are in MB/s
 * with MB = 2^20 bytes; CPU is in seconds per GiB of records.
 */
final class RoundResult {
  static final double MIB = 1 << 20;
  static final double GIB = 1 << 30;

  final int pushers;
  final long bytesWritten;
  final long pushNanos;
  final long commitNanos;
  final long readNanos;
  final long serverCpuWriteNanos;
  final long serverCpuReadNanos;
  final long processCpuWriteNanos;
  final long processCpuReadNanos;
  final long congestedPushes;

  /** Batches the servers took (sluice.server.batchesPushed), replica pushes included. */
  final long batchesPushed;

  /** Bytes of pushes each server took (sluice.server.bytesPushed), replica pushes included. */
  final long[] serverBytesPushed;

  /** Of those, the bytes of replica pushes (sluice.server.replicaBytesPushed). */
  final long[] serverReplicaBytesPushed;

  final ReadVerifier.Outcome outcome;
  final String failure;

  private RoundResult(Builder b) {
    this.pushers = b.pushers;
    this.bytesWritten = b.bytesWritten;
    this.pushNanos = b.pushNanos;
    this.commitNanos = b.commitNanos;
    this.readNanos = b.readNanos;
    this.serverCpuWriteNanos = b.serverCpuWriteNanos;
    this.serverCpuReadNanos = b.serverCpuReadNanos;
    this.processCpuWriteNanos = b.processCpuWriteNanos;
    this.processCpuReadNanos = b.processCpuReadNanos;
    this.congestedPushes = b.congestedPushes;
    this.batchesPushed = b.batchesPushed;
    this.serverBytesPushed = b.serverBytesPushed.clone();
    this.serverReplicaBytesPushed = b.serverReplicaBytesPushed.clone();
    this.outcome = b.outcome;
    this.failure = b.failure;
  }

  /** A round that did not complete. */
  static RoundResult failed(int pushers, String failure) {
    Builder b = new Builder(pushers);
    b.failure = failure;
    return b.build();
  }

  boolean verified() {
    return failure == null && outcome != null && outcome.verified();
  }

  private double rate(long nanos) {
    return failure == null && nanos > 0 ? bytesWritten / MIB / (nanos / 1e9) : Double.NaN;
  }

  /** Until every push was acknowledged (the last {@code finish()} returned). */
  double pushMBps() {
    return rate(pushNanos);
  }

  /** Until the shuffle was committed: pushed, flushed and fsynced, readable. */
  double ingestMBps() {
    return rate(pushNanos + commitNanos);
  }

  double readMBps() {
    return rate(readNanos);
  }

  /** CPU seconds per GiB of records written of what is not the server's, pushing and committing. */
  double clientCpuSecPerGiBWrite() {
    return perGiB(processCpuWriteNanos - serverCpuWriteNanos);
  }

  double serverCpuSecPerGiBWrite() {
    return perGiB(serverCpuWriteNanos);
  }

  /** The servers' CPU pushing and committing, per batch they took, in microseconds. */
  double serverCpuMicrosPerBatch() {
    return failure == null && batchesPushed > 0
        ? serverCpuWriteNanos / 1e3 / batchesPushed
        : Double.NaN;
  }

  private double perGiB(long cpuNanos) {
    return failure == null && bytesWritten > 0 ? cpuNanos / 1e9 / (bytesWritten / GIB) : Double.NaN;
  }

  String tableRow(double rawDiskMBps) {
    return String.format(
        Locale.ROOT,
        "%7d %9.1f %10.1f %8.2f %9.1f %10.2f %8.2f %8.2f %8.2f %8.2f %9.2f %10d %11d  %s",
        pushers,
        pushMBps(),
        ingestMBps(),
        failure == null ? commitNanos / 1e9 : Double.NaN,
        readMBps(),
        ingestMBps() / rawDiskMBps,
        perGiB(serverCpuWriteNanos),
        perGiB(serverCpuReadNanos),
        perGiB(processCpuWriteNanos),
        perGiB(processCpuReadNanos),
        serverCpuMicrosPerBatch(),
        congestedPushes,
        outcome == null ? 0 : outcome.outOfOrderRecords,
        verified() ? "yes" : "NO");
  }

  static String tableHeader() {
    return String.format(
        Locale.ROOT,
        "%7s %9s %10s %8s %9s %10s %8s %8s %8s %8s %9s %10s %11s  %s%n"
            + "%7s %9s %10s %8s %9s %10s %8s %8s %8s %8s %9s %10s %11s  %s",
        "pushers",
        "push",
        "ingest",
        "commit",
        "read",
        "ingest/",
        "srv CPU",
        "srv CPU",
        "proc CPU",
        "proc CPU",
        "srv CPU",
        "CONGESTED",
        "out of",
        "verified",
        "",
        "MB/s",
        "MB/s",
        "s",
        "MB/s",
        "raw disk",
        "s/GiB wr",
        "s/GiB rd",
        "s/GiB wr",
        "s/GiB rd",
        "µs/batch",
        "answers",
        "push order",
        "");
  }

  String toJson(double rawDiskMBps) {
    StringBuilder s = new StringBuilder("{");
    s.append("\"pushers\":").append(pushers);
    s.append(",\"bytes\":").append(bytesWritten);
    s.append(",\"pushSeconds\":").append(Json.num(pushNanos / 1e9));
    s.append(",\"commitSeconds\":").append(Json.num(commitNanos / 1e9));
    s.append(",\"readSeconds\":").append(Json.num(readNanos / 1e9));
    s.append(",\"pushMBps\":").append(Json.num(pushMBps()));
    s.append(",\"ingestMBps\":").append(Json.num(ingestMBps()));
    s.append(",\"readMBps\":").append(Json.num(readMBps()));
    s.append(",\"ratio\":").append(Json.num(ingestMBps() / rawDiskMBps));
    s.append(",\"serverCpuSecPerGiBWrite\":").append(Json.num(perGiB(serverCpuWriteNanos)));
    s.append(",\"serverCpuSecPerGiBRead\":").append(Json.num(perGiB(serverCpuReadNanos)));
    s.append(",\"processCpuSecPerGiBWrite\":").append(Json.num(perGiB(processCpuWriteNanos)));
    s.append(",\"processCpuSecPerGiBRead\":").append(Json.num(perGiB(processCpuReadNanos)));
    s.append(",\"clientCpuSecPerGiBWrite\":").append(Json.num(clientCpuSecPerGiBWrite()));
    s.append(",\"congestedPushes\":").append(congestedPushes);
    s.append(",\"batchesPushed\":").append(batchesPushed);
    s.append(",\"serverCpuMicrosPerBatch\":").append(Json.num(serverCpuMicrosPerBatch()));
    s.append(",\"serverBytesPushed\":").append(Arrays.toString(serverBytesPushed));
    s.append(",\"serverReplicaBytesPushed\":").append(Arrays.toString(serverReplicaBytesPushed));
    if (outcome != null) {
      s.append(",\"verifiedBytes\":").append(outcome.verifiedBytes);
      s.append(",\"outOfOrderRecords\":").append(outcome.outOfOrderRecords);
      s.append(",\"errors\":").append(outcome.errorCount);
    }
    if (failure != null) {
      s.append(",\"failure\":").append(Json.str(failure));
    }
    s.append(",\"verified\":").append(verified());
    return s.append('}').toString();
  }

  /** Problems to print under the table. */
  List<String> problems() {
    if (failure != null) {
      return List.of(failure);
    }
    return outcome == null ? List.of() : outcome.firstErrors;
  }

  /** Collects the measurements of a round as it runs. */
  static final class Builder {
    final int pushers;
    long bytesWritten;
    long pushNanos;
    long commitNanos;
    long readNanos;
    long serverCpuWriteNanos;
    long serverCpuReadNanos;
    long processCpuWriteNanos;
    long processCpuReadNanos;
    long congestedPushes;
    long batchesPushed;
    long[] serverBytesPushed = {};
    long[] serverReplicaBytesPushed = {};
    ReadVerifier.Outcome outcome;
    String failure;

    Builder(int pushers) {
      this.pushers = pushers;
    }

    RoundResult build() {
      return new RoundResult(this);
    }
  }
}
