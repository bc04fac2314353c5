package io.sluice.e2e.flink;

import static io.sluice.e2e.flink.FlinkJobs.CONSUMER;
import static io.sluice.e2e.flink.FlinkJobs.PRODUCER;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sluice.e2e.flink.FlinkJobs.Runs;
import io.sluice.e2e.flink.FlinkJobs.Sum;
import io.sluice.protocol.MapBlockFormat;
import io.sluice.testutil.TestCluster;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.client.JobStatusMessage;
import org.apache.flink.runtime.executiongraph.AccessExecution;
import org.apache.flink.runtime.executiongraph.AccessExecutionVertex;
import org.apache.flink.runtime.executiongraph.ArchivedExecutionGraph;
import org.apache.flink.runtime.executiongraph.ErrorInfo;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A committed map partition file damaged after its producer finished does not change a Flink job's
 * result: the consumer that reads the damage fails (the block's checksum, the server's read of the
 * file, or the reader's comparison with the writer's integrity records at the end of the stream),
 * the input gate reports a {@code PartitionNotFoundException} of that producer's partition, Flink
 * runs the producer again, and the job returns the result of Flink's built-in shuffle. The error
 * the consumer failed with names what was wrong: producer 0's data file and, where there is one,
 * the offset. The job is {@link FlinkJobs#sumPerKey} with four producers and two consumers,
 * uncompressed ({@code sluice.push.compression: none}), so without the checks a flipped payload bit
 * or a replaced block went into a sum.
 *
 * <p>The damages ({@link Damage}), all to producer 0's data file {@code map-0-0.data}: a flipped
 * payload byte, a flipped byte of a block header (in its length field), the file truncated inside a
 * block, and one block gone (overwritten by an intact copy of another block of its subpartition, so
 * every block still passes its CRC32C and the index stays valid).
 *
 * <p>Deterministic timing: the first consumer attempt to open (every producer has finished: the
 * exchange is blocking) damages the file before any consumer reads; every first-attempt consumer
 * waits in {@code open()} until that is done. With the readers' check turned off, the payload flip
 * makes the job return 32 results instead of the built-in shuffle's 31.
 */
class FlinkCorruptedPartitionIT {
  @TempDir Path tmp;

  /** The servers the running job uses, for its operators (the MiniCluster runs in this JVM). */
  private static volatile TestCluster servers;

  /** The damage the running job's consumers inflict, once. */
  private static volatile Damage damage;

  // guarded by the class: what was damaged, and what the consumer's error must name
  private static String damaged;
  private static List<String> named;
  private static Throwable damageFailed;

  private static List<String> expected;

  @BeforeAll
  static void builtinResult() throws Exception {
    MiniCluster builtin = FlinkHarness.builtin();
    try {
      expected = FlinkHarness.collectSorted(job(FlinkHarness.batch(builtin, 2), new Sum()));
    } finally {
      builtin.close();
    }
    assertThat(expected).hasSize(31);
  }

  /** What is done to producer 0's committed data file before the consumers read it. */
  enum Damage {
    /** The lowest bit of a byte of the first record of the first block: a key or a value. */
    PAYLOAD_BYTE {
      @Override
      List<String> apply(FileChannel ch, List<Block> blocks) throws IOException {
        Block first = blocks.get(0);
        assertThat(first.kind).isEqualTo(MapBlockFormat.KIND_DATA);
        assertThat(first.length).isGreaterThanOrEqualTo(20);
        // byte 19 of the payload lies in the first serialized Tuple2<Long, Long>: without
        // checksums the flipped bit silently changes a key or a value of the result
        flip(ch, first.offset + MapBlockFormat.HEADER_SIZE + 19);
        return List.of("at byte offset " + first.offset + " of", "CRC32C");
      }
    },
    /**
     * The lowest bit of the second byte of the first block's big-endian payload length (header byte
     * 17): the block claims 65536 payload bytes more than it has, more than its segment of the file
     * holds, so the server's read of the segment fails on that header before any of it is sent.
     */
    HEADER_LENGTH_BYTE {
      @Override
      List<String> apply(FileChannel ch, List<Block> blocks) throws IOException {
        Block first = blocks.get(0);
        assertThat(first.kind).isEqualTo(MapBlockFormat.KIND_DATA);
        assertThat(first.length).isLessThan(1 << 16);
        flip(ch, first.offset + MapBlockFormat.LENGTH_OFFSET + 1);
        return List.of(
            "the block at byte offset " + first.offset + " of ",
            "claims " + (first.length + (1 << 16)) + " payload bytes");
      }
    },
    /**
     * The file cut in the middle of the payload of the first data block that ends after the file's
     * middle byte.
     */
    TRUNCATED {
      @Override
      List<String> apply(FileChannel ch, List<Block> blocks) throws IOException {
        long middle = ch.size() / 2;
        Block cut =
            blocks.stream()
                .filter(b -> b.kind == MapBlockFormat.KIND_DATA && middle < b.end())
                .findFirst()
                .orElseThrow();
        long size = cut.offset + MapBlockFormat.HEADER_SIZE + cut.length / 2;
        assertThat(size).isGreaterThan(cut.offset + MapBlockFormat.HEADER_SIZE);
        ch.truncate(size);
        return List.of("ends at byte offset " + size, "truncated");
      }
    },
    /**
     * A data block overwritten by an intact copy of another data block of the same subpartition, of
     * the same size and starting at the same place in a record, so every block passes its CRC32C,
     * the index stays valid and the records still deserialize: without the readers' integrity
     * records one block's records were silently lost and another's counted twice.
     */
    BLOCK_REPLACED {
      @Override
      List<String> apply(FileChannel ch, List<Block> blocks) throws IOException {
        Map<Integer, Records> records = records(ch, blocks);
        for (Block victim : blocks) {
          for (Block donor : blocks) {
            if (donor != victim
                && victim.kind == MapBlockFormat.KIND_DATA
                && donor.kind == MapBlockFormat.KIND_DATA
                && donor.subpartition == victim.subpartition
                && donor.length == victim.length
                && records.get(victim.subpartition).spliceable(victim, donor)) {
              ByteBuffer copy = ByteBuffer.allocate(MapBlockFormat.HEADER_SIZE + donor.length);
              readFully(ch, copy, donor.offset);
              copy.flip();
              while (copy.hasRemaining()) {
                ch.write(copy, victim.offset + copy.position());
              }
              return List.of(
                  "subpartition " + victim.subpartition + " of its data file",
                  "a block is missing, duplicated or from another attempt");
            }
          }
        }
        throw new AssertionError(
            "no two data blocks of a subpartition to swap in " + blocks + ", records " + records);
      }
    };

    /**
     * Damages the data file; returns what the error of a consumer that reads the damage names
     * besides the file.
     */
    abstract List<String> apply(FileChannel ch, List<Block> blocks) throws IOException;
  }

  /**
   * Where the serialized records of one subpartition start in its data (the data payloads of its
   * blocks in file order, which is the order the reader hands them out): each is Flink's 4-byte
   * length, then that many bytes.
   */
  static final class Records {
    final NavigableMap<Long, Integer> starts = new TreeMap<>();
    final SortedMap<Integer, Integer> sizes = new TreeMap<>();
    long total;

    /** Where {@code at} lies in a record: 0 at a record's start or at the end of the data. */
    private long inRecord(long at) {
      return at == total ? 0 : at - starts.floorKey(at);
    }

    /**
     * Whether {@code donor}'s payload can replace {@code victim}'s (of the same length) leaving a
     * sequence of well-formed records: both start where a record starts and end at the same place
     * in records of the same size, so the records around the victim continue where the donor's
     * leave off.
     */
    boolean spliceable(Block victim, Block donor) {
      long victimEnd = victim.inSubpartition + victim.length;
      long donorEnd = donor.inSubpartition + donor.length;
      return starts.containsKey(victim.inSubpartition)
          && starts.containsKey(donor.inSubpartition)
          && inRecord(victimEnd) == inRecord(donorEnd)
          && (inRecord(victimEnd) == 0
              || starts
                  .floorEntry(victimEnd)
                  .getValue()
                  .equals(starts.floorEntry(donorEnd).getValue()));
    }

    @Override
    public String toString() {
      return starts.size() + " records over " + total + " bytes, by size: " + sizes;
    }
  }

  /** The records of each subpartition of the data file whose blocks are {@code blocks}. */
  private static Map<Integer, Records> records(FileChannel ch, List<Block> blocks)
      throws IOException {
    Map<Integer, java.io.ByteArrayOutputStream> data = new TreeMap<>();
    for (Block b : blocks) {
      if (b.kind == MapBlockFormat.KIND_DATA) {
        ByteBuffer payload = ByteBuffer.allocate(b.length);
        readFully(ch, payload, b.offset + MapBlockFormat.HEADER_SIZE);
        data.computeIfAbsent(b.subpartition, s -> new java.io.ByteArrayOutputStream())
            .write(payload.array());
      }
    }
    Map<Integer, Records> records = new TreeMap<>();
    for (Map.Entry<Integer, java.io.ByteArrayOutputStream> e : data.entrySet()) {
      ByteBuffer bytes = ByteBuffer.wrap(e.getValue().toByteArray());
      Records r = new Records();
      r.total = bytes.capacity();
      for (int at = 0; at < bytes.capacity(); ) {
        assertThat(bytes.capacity() - at).as("a record's length").isGreaterThanOrEqualTo(4);
        int size = 4 + bytes.getInt(at);
        r.starts.put((long) at, size);
        r.sizes.merge(size, 1, Integer::sum);
        at += size;
        assertThat(at).as("the end of a record").isLessThanOrEqualTo(bytes.capacity());
      }
      records.put(e.getKey(), r);
    }
    return records;
  }

  /** A block of the data file, where it is, and where its payload starts in its subpartition. */
  static final class Block {
    final long offset;
    final int subpartition;
    final int kind;
    final int length;

    /** Where the payload starts in its subpartition's data: the data payloads before it. */
    final long inSubpartition;

    Block(long offset, int subpartition, int kind, int length, long inSubpartition) {
      this.offset = offset;
      this.subpartition = subpartition;
      this.kind = kind;
      this.length = length;
      this.inSubpartition = inSubpartition;
    }

    long end() {
      return offset + MapBlockFormat.HEADER_SIZE + length;
    }

    @Override
    public String toString() {
      return "block at "
          + offset
          + " (subpartition "
          + subpartition
          + ", kind "
          + kind
          + ", "
          + length
          + " bytes, at "
          + inSubpartition
          + " of its subpartition)";
    }
  }

  @ParameterizedTest
  @EnumSource(Damage.class)
  void aDamagedMapPartitionIsRecomputedByRunningItsProducerAgain(Damage what) throws Exception {
    Runs.clear();
    synchronized (FlinkCorruptedPartitionIT.class) {
      damaged = null;
      named = null;
      damageFailed = null;
    }
    damage = what;
    servers = TestCluster.start(tmp.resolve("sluice"), 2);
    try {
      Configuration settings = new Configuration();
      settings.setString("sluice.push.compression", "none");
      MiniCluster flink = FlinkHarness.sluice(servers, settings);
      try {
        List<String> result =
            FlinkHarness.collectSorted(
                job(FlinkHarness.batch(flink, 2), new DamageProducerZeroOnOpen()));

        assertThat(result).hasSize(31).isEqualTo(expected);
        String file;
        List<String> names;
        synchronized (FlinkCorruptedPartitionIT.class) {
          assertThat(damageFailed).as("damaging the file").isNull();
          assertThat(damaged).as("the file the consumers found damaged").isNotNull();
          file = damaged;
          names = named;
        }
        // producer 0 ran again; the other producers' output was read as it was
        assertThat(Runs.attempts(PRODUCER)).contains("0/0", "0/1", "1/0", "2/0", "3/0");
        assertThat(Runs.attempts(PRODUCER)).doesNotContain("1/1", "2/1", "3/1");
        assertThat(Runs.attempts(CONSUMER)).hasSizeGreaterThan(2);
        // a consumer attempt failed on the damage, naming the file and what was wrong with it
        assertThat(failures(flink))
            .as("the failures of the job's task attempts after %s of %s", what, file)
            .anyMatch(
                f ->
                    f.contains("PartitionNotFoundException")
                        && f.contains("/0/map-0-0.data")
                        && names.stream().allMatch(f::contains));
      } finally {
        flink.close();
      }
    } finally {
      servers.close();
      servers = null;
      damage = null;
    }
  }

  private static org.apache.flink.streaming.api.datastream.DataStream<String> job(
      org.apache.flink.streaming.api.environment.StreamExecutionEnvironment env, Sum sum) {
    return FlinkJobs.sumPerKey(env, 4, 2, sum);
  }

  /**
   * The failures (stack traces, with suppressed exceptions) of every task attempt of the one job
   * {@code flink} ran, as the JobMaster recorded them.
   */
  private static List<String> failures(MiniCluster flink) throws Exception {
    Collection<JobStatusMessage> jobs = flink.listJobs().get();
    assertThat(jobs).hasSize(1);
    JobID job = jobs.iterator().next().getJobId();
    ArchivedExecutionGraph graph = flink.getArchivedExecutionGraph(job).get();
    List<String> failures = new ArrayList<>();
    for (AccessExecutionVertex v : graph.getAllExecutionVertices()) {
      List<AccessExecution> attempts =
          new ArrayList<>(v.getExecutionHistory().getHistoricalExecutions());
      attempts.addAll(v.getCurrentExecutions());
      for (AccessExecution a : attempts) {
        a.getFailureInfo().map(ErrorInfo::getExceptionAsString).ifPresent(failures::add);
      }
    }
    return failures;
  }

  private static void flip(FileChannel ch, long at) throws IOException {
    ByteBuffer b = ByteBuffer.allocate(1);
    readFully(ch, b, at);
    b.put(0, (byte) (b.get(0) ^ 1));
    b.rewind();
    ch.write(b, at);
  }

  private static void readFully(FileChannel ch, ByteBuffer b, long at) throws IOException {
    while (b.hasRemaining()) {
      if (ch.read(b, at + b.position()) < 0) {
        throw new IOException("unexpected end of file at " + (at + b.position()));
      }
    }
  }

  /** The blocks of a data file, in file order; every header parses. */
  private static List<Block> blocks(FileChannel ch) throws IOException {
    ByteBuffer all = ByteBuffer.allocate((int) ch.size());
    readFully(ch, all, 0);
    ByteBuf b = Unpooled.wrappedBuffer(all.array());
    List<Block> blocks = new ArrayList<>();
    Map<Integer, Long> streamed = new TreeMap<>();
    int pos = 0;
    while (pos < all.capacity()) {
      assertThat(MapBlockFormat.headerProblem(b, pos, all.capacity() - pos)).isNull();
      int sub = MapBlockFormat.subpartition(b, pos);
      int kind = MapBlockFormat.kind(b, pos);
      int length = MapBlockFormat.length(b, pos);
      long in = streamed.getOrDefault(sub, 0L);
      blocks.add(new Block(pos, sub, kind, length, in));
      if (kind == MapBlockFormat.KIND_DATA) {
        streamed.put(sub, in + length);
      }
      pos += MapBlockFormat.HEADER_SIZE + length;
    }
    return blocks;
  }

  /**
   * Damages producer 0's data file (shuffle 0, the producers' data set: {@code map-0-0.data}) as
   * {@link #damage} says, once; later calls wait for it.
   */
  private static synchronized void damageProducerZeroOnce() {
    if (damaged != null || damageFailed != null) {
      return;
    }
    try {
      damage();
    } catch (Throwable e) {
      damageFailed = e; // the test reports it: an operator's failure would only be retried
    }
  }

  /** Caller holds the class's lock. */
  private static void damage() throws IOException {
    Path file;
    try (Stream<Path> files = Files.walk(servers.root())) {
      List<Path> found =
          files
              .filter(p -> p.getFileName().toString().equals("map-0-0.data"))
              .filter(p -> p.getParent().getFileName().toString().equals("0"))
              .collect(Collectors.toList());
      assertThat(found).as("producer 0's data file").hasSize(1);
      file = found.get(0);
    }
    try (FileChannel ch =
        FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      named = damage.apply(ch, blocks(ch));
    }
    damaged = file.toString();
  }

  /** The first attempt of each consumer: the data file is damaged before any consumer reads. */
  static final class DamageProducerZeroOnOpen extends Sum {
    private static final long serialVersionUID = 1L;

    @Override
    public void open(OpenContext openContext) throws Exception {
      super.open(openContext);
      if (FlinkJobs.attempt(getRuntimeContext()) == 0) {
        damageProducerZeroOnce();
      }
    }
  }
}
