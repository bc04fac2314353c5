package io.sluice.e2e.flink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.e2e.flink.FlinkHarness.ServerTotals;
import io.sluice.testutil.TestCluster;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.flink.api.common.BatchShuffleMode;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Real Flink batch jobs whose blocking exchanges go through two in-process Sluice servers, each
 * compared with the same job on Flink's built-in shuffle: word count, keyed reduces at several
 * parallelisms, a join, a broadcast exchange, partitions of many regions, and a consumer whose
 * parallelism Flink derives from the byte counts the Sluice writers report. With {@code
 * sluice.flink.fallback: never}, hybrid exchanges and streaming (pipelined) jobs are refused with
 * an error naming the setting to change ({@link FlinkFallbackIT}: they run on Netty). The reference
 * results come first, from a built-in MiniCluster stopped before the Sluice one starts.
 */
class FlinkShuffleIT {
  @TempDir static Path tmp;

  private static final int PARALLELISM = 3;
  private static final Map<String, Function<StreamExecutionEnvironment, DataStream<String>>> JOBS =
      new LinkedHashMap<>();

  static {
    JOBS.put("wordCount", FlinkJobs::wordCount);
    JOBS.put("reduce-1", env -> FlinkJobs.keyedReduce(env, 1));
    JOBS.put("reduce-3", env -> FlinkJobs.keyedReduce(env, 3));
    JOBS.put("reduce-5", env -> FlinkJobs.keyedReduce(env, 5));
    JOBS.put("join", FlinkJobs::join);
    JOBS.put("broadcast", FlinkJobs::broadcast);
    JOBS.put("manyRegions", FlinkJobs::manyRegions);
  }

  private static final Map<String, List<String>> expected = new HashMap<>();
  private static TestCluster servers;
  private static MiniCluster flink;

  @BeforeAll
  static void start() throws Exception {
    MiniCluster builtin = FlinkHarness.builtin();
    try {
      for (Map.Entry<String, Function<StreamExecutionEnvironment, DataStream<String>>> job :
          JOBS.entrySet()) {
        expected.put(
            job.getKey(),
            FlinkHarness.collectSorted(
                job.getValue().apply(FlinkHarness.batch(builtin, PARALLELISM))));
      }
      expected.put(
          "adaptive",
          FlinkHarness.collectSorted(
              FlinkJobs.adaptiveParallelism(FlinkHarness.batch(builtin, -1))));
    } finally {
      builtin.close();
    }
    servers = TestCluster.start(tmp.resolve("sluice"), 2);
    // without the fallback to Flink's Netty shuffle, so the refusals below show (the fallback:
    // FlinkFallbackIT)
    Configuration never = new Configuration();
    never.setString("sluice.flink.fallback", "never");
    flink = FlinkHarness.sluice(servers, never);
  }

  @AfterAll
  static void stop() throws Exception {
    if (flink != null) {
      flink.close();
    }
    if (servers != null) {
      servers.close();
    }
  }

  /** Runs a job on Sluice, checks its result, and returns what the servers carried for it. */
  private static ServerTotals runAndCompare(String name) throws Exception {
    ServerTotals before = FlinkHarness.totals(servers);
    List<String> result =
        FlinkHarness.collectSorted(JOBS.get(name).apply(FlinkHarness.batch(flink, PARALLELISM)));
    ServerTotals carried = FlinkHarness.totals(servers).since(before);
    assertThat(result).as(name).isNotEmpty().isEqualTo(expected.get(name));
    assertThat(carried.bytesPushed).as(name + ": bytes pushed to Sluice").isPositive();
    assertThat(carried.mapReads).as(name + ": map partition reads on Sluice").isPositive();
    return carried;
  }

  @Test
  void wordCount() throws Exception {
    runAndCompare("wordCount");
  }

  @ParameterizedTest
  @ValueSource(ints = {1, 3, 5})
  void keyedReduce(int parallelism) throws Exception {
    runAndCompare("reduce-" + parallelism);
  }

  @Test
  void join() throws Exception {
    runAndCompare("join");
    // orders of customers 500..599 find no customer
    assertThat(expected.get("join")).hasSize(16_672);
  }

  @Test
  void broadcast() throws Exception {
    runAndCompare("broadcast");
    assertThat(expected.get("broadcast"))
        .containsExactly(
            "subtask 0 saw a total of 49995000",
            "subtask 1 saw a total of 49995000",
            "subtask 2 saw a total of 49995000");
  }

  @Test
  void partitionsOfManyRegions() throws Exception {
    ServerTotals carried = runAndCompare("manyRegions");
    // compressed, the data is still many times one region (128k) per producer
    assertThat(carried.bytesPushed).isGreaterThan(20L * 128 * 1024);
  }

  @Test
  void aFinishedJobLeavesNoFilesOnTheServers() throws Exception {
    runAndCompare("wordCount");
    // the job's end unregisters its application on every server it used, which deletes its files
    long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
    while (System.nanoTime() < deadline && (applications() > 0 || !mapFiles().isEmpty())) {
      Thread.sleep(20);
    }
    assertThat(applications()).isZero();
    assertThat(mapFiles()).isEmpty();
  }

  private static int applications() {
    int n = 0;
    for (io.sluice.server.ShuffleServer s : servers.servers()) {
      n += s.registry().applicationCount();
    }
    return n;
  }

  /** Map partition files on the servers; the root itself while a deletion is under way. */
  private static List<Path> mapFiles() throws java.io.IOException {
    try (java.util.stream.Stream<Path> files = java.nio.file.Files.walk(servers.root())) {
      return files
          .filter(f -> f.getFileName().toString().startsWith("map-"))
          .collect(java.util.stream.Collectors.toList());
    } catch (java.io.UncheckedIOException | java.nio.file.NoSuchFileException e) {
      // a directory went away while it was walked: the servers are still deleting
      return List.of(servers.root());
    }
  }

  @Test
  void adaptiveParallelismFollowsTheBytesSluiceWritersReport() throws Exception {
    ServerTotals before = FlinkHarness.totals(servers);
    List<String> result =
        FlinkHarness.collectSorted(FlinkJobs.adaptiveParallelism(FlinkHarness.batch(flink, -1)));
    assertThat(FlinkHarness.totals(servers).since(before).bytesPushed).isPositive();
    assertThat(result).isEqualTo(expected.get("adaptive"));
    // about 2 MB at 64k per subtask: the most allowed; without byte counts Flink would pick 1
    assertThat(result).allSatisfy(line -> assertThat(line).startsWith("parallelism 4 "));
  }

  /** (Flink itself refuses pipelined exchanges in a batch job before any reaches Sluice.) */
  @Test
  void refusesHybridExchangesNamingTheSetting() {
    StreamExecutionEnvironment env =
        FlinkHarness.environment(flink, 2, BatchShuffleMode.ALL_EXCHANGES_HYBRID_FULL);
    assertThatThrownBy(() -> FlinkHarness.collectSorted(FlinkJobs.keyedReduce(env, 2)))
        .hasStackTraceContaining("Sluice serves blocking exchanges only")
        .hasStackTraceContaining("execution.batch-shuffle-mode: ALL_EXCHANGES_BLOCKING");
  }

  @Test
  void refusesStreamingJobsNamingTheSetting() {
    StreamExecutionEnvironment env = FlinkHarness.streaming(flink, 2);
    assertThatThrownBy(() -> FlinkHarness.collectSorted(FlinkJobs.keyedReduce(env, 2)))
        .hasStackTraceContaining("execution.batch-shuffle-mode: ALL_EXCHANGES_BLOCKING")
        .hasStackTraceContaining("streaming jobs need Flink's default shuffle service")
        .hasStackTraceContaining("sluice.flink.fallback: auto");
  }
}
