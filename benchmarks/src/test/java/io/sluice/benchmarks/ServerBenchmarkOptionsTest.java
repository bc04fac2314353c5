package io.sluice.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.beust.jcommander.JCommander;
import com.beust.jcommander.ParameterException;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;

/**
 * {@code shuffle-bench server --replication}, {@code --maps-per-pusher}, {@code --record-bytes} and
 * {@code --chart}: the values they take and those they refuse, a small run of many map tasks, and
 * the chart of a result table.
 */
class ServerBenchmarkOptionsTest {
  private static ServerBenchmarkOptions parse(String... args) {
    ServerBenchmarkOptions options = new ServerBenchmarkOptions();
    JCommander.newBuilder().addObject(options).build().parse(args);
    return options;
  }

  private static ServerBenchmarkOptions valid(String... args) {
    ServerBenchmarkOptions options = parse(args);
    options.validate();
    return options;
  }

  @Test
  void replicationDefaultsToFactorOneOnOneServer() {
    ServerBenchmarkOptions options = valid();

    assertThat(options.replicationRuns()).containsExactly(1);
    assertThat(options.serverCount()).isEqualTo(1);
  }

  @Test
  void factorTwoRunsOnTwoServers() {
    ServerBenchmarkOptions options = valid("--replication", "2");

    assertThat(options.replicationRuns()).containsExactly(2);
    assertThat(options.serverCount()).isEqualTo(2);
  }

  @Test
  void bothRunsFactorOneThenTwoOnTwoServers() {
    ServerBenchmarkOptions options = valid("--replication", " Both ");

    assertThat(options.replication).isEqualTo("both");
    assertThat(options.replicationRuns()).containsExactly(1, 2);
    assertThat(options.serverCount()).isEqualTo(2);
  }

  @Test
  void factorTwoCombinesWithTheOtherComparisons() {
    assertThat(valid("--replication", "2", "--checksums", "both").checksumRuns())
        .containsExactly(false, true);
    assertThat(valid("--replication", "2", "--tls").securityRuns())
        .containsExactly(WireSecurity.PLAIN, WireSecurity.TLS);
  }

  @Test
  void otherFactorsAreRefusedNamingTheOption() {
    for (String bad : List.of("0", "3", "two", "")) {
      assertThatThrownBy(() -> valid("--replication", bad))
          .isInstanceOf(ParameterException.class)
          .hasMessageContaining("--replication must be 1, 2 or both");
    }
  }

  @Test
  void bothIsOneComparisonAtATime() {
    for (List<String> other :
        List.of(List.of("--checksums", "both"), List.of("--tls"), List.of("--auth"))) {
      List<String> args = new ArrayList<>(List.of("--replication", "both"));
      args.addAll(other);

      assertThatThrownBy(() -> valid(args.toArray(new String[0])))
          .isInstanceOf(ParameterException.class)
          .hasMessageContaining("--replication both");
    }
  }

  @Test
  void theFactorIsNotAConfSetting() {
    assertThatThrownBy(() -> valid("--conf", "sluice.replication.factor=2"))
        .isInstanceOf(ParameterException.class)
        .hasMessageContaining("--conf")
        .hasMessageContaining("--replication");
  }

  @Test
  void aBadValueEndsTheRunWithExitCodeTwoAndTheMessage() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();

    int exit =
        ServerBenchmark.run(
            new String[] {"--replication", "3"},
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));

    assertThat(exit).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8))
        .contains("shuffle-bench server: --replication must be 1, 2 or both, not 3");
    assertThat(out.toString(StandardCharsets.UTF_8)).isEmpty();
  }

  private static int run(ByteArrayOutputStream out, ByteArrayOutputStream err, String... args) {
    return ServerBenchmark.run(
        args,
        new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
  }

  @Test
  void chartIsOffByDefaultAndNamesAFileInADirectoryThatExists(@TempDir Path dir) {
    assertThat(valid().chart).isNull();
    assertThat(valid("--chart", dir.resolve("server.svg").toString()).chart)
        .isEqualTo(dir.resolve("server.svg").toString());
    ByteArrayOutputStream help = new ByteArrayOutputStream();
    assertThat(run(help, new ByteArrayOutputStream(), "--help")).isZero();
    assertThat(help.toString(StandardCharsets.UTF_8)).contains("--chart");
  }

  @Test
  void aChartInADirectoryThatDoesNotExistIsRefusedBeforeTheRun(@TempDir Path dir) {
    String missing = dir.resolve("no-such-dir/server.svg").toString();
    assertThatThrownBy(() -> parse("--chart", missing))
        .isInstanceOf(ParameterException.class)
        .hasMessageContaining("--chart");
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();

    int exit = run(out, err, "--chart", missing, "--dir", dir.resolve("data").toString());

    assertThat(exit).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8))
        .contains("shuffle-bench server: --chart")
        .contains("does not exist");
    assertThat(out.toString(StandardCharsets.UTF_8)).isEmpty();
    assertThat(dir.resolve("data")).doesNotExist();
  }

  private static RoundResult round(
      int pushers, long pushMillis, long commitMillis, long readMillis) {
    RoundResult.Builder b = new RoundResult.Builder(pushers);
    b.bytesWritten = 1L << 30;
    b.pushNanos = pushMillis * 1_000_000;
    b.commitNanos = commitMillis * 1_000_000;
    b.readNanos = readMillis * 1_000_000;
    return b.build();
  }

  @Test
  void theChartShowsRawDiskAndSluiceRatesPerPusherCountAndRun() throws Exception {
    ServerBenchmarkOptions options = valid("--checksums", "both", "--size", "1g");
    ChecksumRun off = new ChecksumRun(false, false, WireSecurity.PLAIN, 1);
    ChecksumRun on = new ChecksumRun(true, true, WireSecurity.PLAIN, 1);
    // 1 GiB: pushed in 2 s (512 MB/s), committed 2 s later (256 MB/s), read in 1 s (1024 MB/s)
    off.results.add(round(1, 2000, 2000, 1000));
    on.results.add(round(1, 4000, 4000, 2000));
    off.results.add(round(16, 1000, 1000, 500));
    on.results.add(RoundResult.failed(16, "lost"));

    Document doc = BarChartTest.parse(ServerBenchmark.chart(options, List.of(off, on), 300).svg());

    assertThat(BarChartTest.texts(doc, "group"))
        .containsExactly(
            "1 pusher, checksums off",
            "1 pusher, checksums on",
            "16 pushers, checksums off",
            "16 pushers, checksums on");
    assertThat(BarChartTest.texts(doc, "legend"))
        .containsExactly("raw disk write+fsync", "sluice push", "sluice ingest", "sluice read");
    assertThat(BarChartTest.texts(doc, "unit")).containsExactly("MB/s (MB = 2^20 bytes)");
    assertThat(BarChartTest.texts(doc, "title").get(0))
        .startsWith("shuffle-bench server:")
        .contains("1 GiB per run");
    // the failed round draws only the raw disk bar
    assertThat(BarChartTest.texts(doc, "value"))
        .containsExactly(
            "300", "512", "256", "1024", "300", "256", "128", "512", "300", "1024", "512", "2048",
            "300");
  }

  @Test
  void manySmallMapTasksPushSmallBatchesAndTheReportCountsThem(@TempDir Path dir) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();

    int exit =
        run(
            out,
            err,
            "--dir",
            dir.toString(),
            "--size",
            "1m",
            "--warmup",
            "0",
            "--memory",
            "64m",
            "--partitions",
            "100",
            "--pushers",
            "2",
            "--maps-per-pusher",
            "20",
            "--partitions-per-reader",
            "7",
            "--record-bytes",
            "32");

    String printed = out.toString(StandardCharsets.UTF_8);
    assertThat(exit).as(err.toString(StandardCharsets.UTF_8)).isZero();
    String json = printed.strip().substring(printed.strip().lastIndexOf('\n') + 1);
    assertThat(json)
        .contains(
            "\"mapsPerPusher\":20",
            "\"recordBytes\":32",
            "\"partitionsPerReader\":7",
            "\"verified\":true")
        .containsPattern("\"serverCpuMicrosPerBatch\":[0-9]");
    // 1 MiB of 32-byte records from 40 map tasks over 100 partitions: about 80 records, so one
    // or two batches, per map task and partition
    long batches = Long.parseLong(json.replaceAll(".*?\"batchesPushed\":([0-9]+).*", "$1"));
    assertThat(batches).isBetween(3_000L, 8_000L);
  }

  @Test
  void mapsPerPusherAndRecordBytesOutOfRangeAreRefusedByName() {
    assertThatThrownBy(() -> valid("--maps-per-pusher", "0"))
        .isInstanceOf(ParameterException.class)
        .hasMessageContaining("--maps-per-pusher: 0 is not between 1 and 100000");
    assertThatThrownBy(() -> valid("--record-bytes", "15"))
        .isInstanceOf(ParameterException.class)
        .hasMessageContaining("--record-bytes: 15 is not between 16 and 8192");
    assertThatThrownBy(() -> valid("--partitions", "10", "--partitions-per-reader", "11"))
        .isInstanceOf(ParameterException.class)
        .hasMessageContaining("--partitions-per-reader: 11 is not between 1 and --partitions (10)");
    assertThatThrownBy(() -> valid("--size", "1m", "--pushers", "4", "--maps-per-pusher", "100"))
        .isInstanceOf(ParameterException.class)
        .hasMessageContaining("too small for 400 map tasks");
  }
}
