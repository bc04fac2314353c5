package io.sluice.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The comparison of {@code shuffle-bench server --replication both}: the rounds of a run with
 * replication factor 1 next to those of a run with factor 2 on the same two servers, paired by
 * pusher count. {@code replicationRatio} is push + commit time with factor 2 over factor 1 (the
 * records are the same in both: same seed, same sizes).
 */
final class ReplicationReport {
  private final ChecksumRun factor1;
  private final ChecksumRun factor2;

  ReplicationReport(ChecksumRun factor1, ChecksumRun factor2) {
    this.factor1 = factor1;
    this.factor2 = factor2;
  }

  /** Push + commit time of {@code f2} over {@code f1}; NaN when either round failed. */
  static double ratio(RoundResult f1, RoundResult f2) {
    if (f1.failure != null || f2.failure != null) {
      return Double.NaN;
    }
    return (double) (f2.pushNanos + f2.commitNanos) / (f1.pushNanos + f1.commitNanos);
  }

  /** Over every pusher count that completed in both runs. */
  double ratio() {
    return (double) ingestNanos(factor2) / ingestNanos(factor1);
  }

  /** Push + commit time of {@code run}'s rounds whose pusher count completed in both runs. */
  private long ingestNanos(ChecksumRun run) {
    long nanos = 0;
    for (int i = 0; i < rounds(); i++) {
      RoundResult r = run.results.get(i);
      if (!Double.isNaN(ratio(factor1.results.get(i), factor2.results.get(i)))) {
        nanos += r.pushNanos + r.commitNanos;
      }
    }
    return nanos;
  }

  private int rounds() {
    return Math.min(factor1.results.size(), factor2.results.size());
  }

  /** The table printed under the two runs' own, and the line with the totals. */
  List<String> lines() {
    List<String> lines = new ArrayList<>();
    lines.add("replication factor 2 / factor 1 (the same two servers, the same records):");
    lines.add(
        String.format(
            Locale.ROOT,
            "%7s %6s %13s %8s %8s %13s %13s %22s %22s %9s",
            "pushers",
            "factor",
            "push+commit s",
            "ingest",
            "read",
            "srv CPU s/GiB",
            "client CPU",
            "server-0 MB taken",
            "server-1 MB taken",
            "repl"));
    lines.add(
        String.format(
            Locale.ROOT,
            "%7s %6s %13s %8s %8s %13s %13s %22s %22s %9s",
            "",
            "",
            "",
            "MB/s",
            "MB/s",
            "written",
            "s/GiB wr",
            "(of which replica)",
            "(of which replica)",
            "ratio"));
    for (int i = 0; i < rounds(); i++) {
      RoundResult f1 = factor1.results.get(i);
      RoundResult f2 = factor2.results.get(i);
      lines.add(row(f1, 1, ""));
      lines.add(row(f2, 2, String.format(Locale.ROOT, "%.3f", ratio(f1, f2))));
    }
    lines.add(
        String.format(
            Locale.ROOT,
            "over every measured round: replicationRatio %.3f (push+commit %.2f / %.2f s), ingest"
                + " %.1f / %.1f MB/s, read %.1f / %.1f MB/s, server CPU per GiB %.2f / %.2f s,"
                + " process CPU per GiB %.2f / %.2f s",
            ratio(),
            ingestNanos(factor2) / 1e9,
            ingestNanos(factor1) / 1e9,
            factor2.ingestMBps(),
            factor1.ingestMBps(),
            factor2.readMBps(),
            factor1.readMBps(),
            factor2.serverCpuSecPerGiB(),
            factor1.serverCpuSecPerGiB(),
            factor2.processCpuSecPerGiB(),
            factor1.processCpuSecPerGiB()));
    lines.add(
        "srv CPU: both servers' threads while pushing and committing; client CPU: the rest of the"
            + " process then (map tasks, their connections, GC, JIT). MB taken: the batches each"
            + " server accepted (sluice.server.bytesPushed, framing included), of which replica"
            + " copies (sluice.server.replicaBytesPushed).");
    return lines;
  }

  private static String row(RoundResult r, int factor, String ratio) {
    return String.format(
        Locale.ROOT,
        "%7d %6d %13.2f %8.1f %8.1f %13.2f %13.2f %22s %22s %9s",
        r.pushers,
        factor,
        (r.pushNanos + r.commitNanos) / 1e9,
        r.ingestMBps(),
        r.readMBps(),
        r.serverCpuSecPerGiBWrite(),
        r.clientCpuSecPerGiBWrite(),
        taken(r, 0),
        taken(r, 1),
        ratio);
  }

  private static String taken(RoundResult r, int server) {
    if (server >= r.serverBytesPushed.length) {
      return "-";
    }
    return String.format(
        Locale.ROOT,
        "%.1f (%.1f)",
        r.serverBytesPushed[server] / RoundResult.MIB,
        r.serverReplicaBytesPushed[server] / RoundResult.MIB);
  }

  /** The fields the last JSON line gets: both runs, the ratio per pusher count and overall. */
  String json(double rawDiskMBps) {
    StringBuilder s = new StringBuilder();
    s.append(",\"factor1Run\":").append(factor1.toJson(rawDiskMBps));
    s.append(",\"factor2Run\":").append(factor2.toJson(rawDiskMBps));
    s.append(",\"replicationRatio\":").append(Json.num(ratio()));
    s.append(",\"replicationIngestRatio\":")
        .append(Json.num(factor2.ingestMBps() / factor1.ingestMBps()));
    s.append(",\"replicationReadRatio\":")
        .append(Json.num(factor2.readMBps() / factor1.readMBps()));
    s.append(",\"replicationServerCpuRatio\":")
        .append(Json.num(factor2.serverCpuSecPerGiB() / factor1.serverCpuSecPerGiB()));
    s.append(",\"replicationProcessCpuRatio\":")
        .append(Json.num(factor2.processCpuSecPerGiB() / factor1.processCpuSecPerGiB()));
    s.append(",\"replicationByPushers\":[");
    for (int i = 0; i < rounds(); i++) {
      RoundResult f1 = factor1.results.get(i);
      RoundResult f2 = factor2.results.get(i);
      s.append(i == 0 ? "{" : ",{");
      s.append("\"pushers\":").append(f1.pushers);
      s.append(",\"replicationRatio\":").append(Json.num(ratio(f1, f2)));
      s.append(",\"factor1IngestMBps\":").append(Json.num(f1.ingestMBps()));
      s.append(",\"factor2IngestMBps\":").append(Json.num(f2.ingestMBps()));
      s.append(",\"factor1ReadMBps\":").append(Json.num(f1.readMBps()));
      s.append(",\"factor2ReadMBps\":").append(Json.num(f2.readMBps()));
      s.append(",\"factor1ServerCpuSecPerGiBWrite\":")
          .append(Json.num(f1.serverCpuSecPerGiBWrite()));
      s.append(",\"factor2ServerCpuSecPerGiBWrite\":")
          .append(Json.num(f2.serverCpuSecPerGiBWrite()));
      s.append(",\"factor1ClientCpuSecPerGiBWrite\":")
          .append(Json.num(f1.clientCpuSecPerGiBWrite()));
      s.append(",\"factor2ClientCpuSecPerGiBWrite\":")
          .append(Json.num(f2.clientCpuSecPerGiBWrite()));
      s.append('}');
    }
    return s.append(']').toString();
  }
}
