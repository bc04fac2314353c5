package io.sluice.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.MessageLite;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sluice.client.push.MapOutputPusher;
import io.sluice.client.read.PartitionReader;
import io.sluice.client.read.ShuffleBatch;
import io.sluice.protocol.BatchFormat;
import io.sluice.protocol.MapBlockFormat;
import io.sluice.protocol.MessageType;
import io.sluice.protocol.proto.CloseStream;
import io.sluice.protocol.proto.CommitMapPartition;
import io.sluice.protocol.proto.CommitShuffle;
import io.sluice.protocol.proto.FetchChunk;
import io.sluice.protocol.proto.Heartbeat;
import io.sluice.protocol.proto.Hello;
import io.sluice.protocol.proto.MapPartitionRef;
import io.sluice.protocol.proto.OpenMapStream;
import io.sluice.protocol.proto.OpenStream;
import io.sluice.protocol.proto.PushData;
import io.sluice.protocol.proto.ReadMapBuffer;
import io.sluice.protocol.proto.RegionData;
import io.sluice.protocol.proto.RegionFinish;
import io.sluice.protocol.proto.RegionStart;
import io.sluice.protocol.proto.RegisterShuffle;
import io.sluice.protocol.proto.ReleaseMapPartition;
import io.sluice.protocol.proto.Response;
import io.sluice.protocol.proto.Status;
import io.sluice.protocol.proto.UnregisterApplication;
import io.sluice.protocol.proto.UnregisterShuffle;
import io.sluice.server.ShuffleServer;
import io.sluice.testutil.RawConnection;
import io.sluice.testutil.Records;
import io.sluice.testutil.TestCluster;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A seeded fuzzer against a real server: over 100,000 frames of every message type over thousands
 * of short connections, each frame valid, with one field set to a boundary value, truncated,
 * oversized or random bytes. Afterwards the server still answers a full push, commit and read round
 * trip correctly, its memory budget and the direct memory its Netty buffers pin are back at their
 * baseline, and the leak detector (on for every test) reports nothing. The seed is in every failure
 * message; run one seed with {@code -Dsluice.fuzz.seed=N}.
 */
class ProtocolFuzzIT {
  private static final String APP = "fuzz-app";
  private static final int MIN_CONNECTIONS = 2_000;
  private static final int MIN_FRAMES = 100_000;
  private static final int FRAMES_PER_CONNECTION = 52;
  private static final int[] BOUNDARIES = {
    0, 1, 2, 3, -1, Integer.MAX_VALUE, Integer.MAX_VALUE - 1, Integer.MIN_VALUE, 16, 65_536, 1 << 24
  };
  private static final String[] APPS = {APP, "fuzz-other", "", "../etc", "x".repeat(300)};

  @TempDir Path tmp;

  @Test
  void randomFramesCannotCrashOrLeak() throws Exception {
    long seed = Long.getLong("sluice.fuzz.seed", System.nanoTime());
    String context = "fuzz seed " + seed + " (rerun with -Dsluice.fuzz.seed=" + seed + ")";
    try (TestCluster cluster =
        TestCluster.start(
            tmp,
            1,
            Map.of(
                "sluice.memory.max", "16m",
                "sluice.network.maxFrameSize", "4m",
                "sluice.read.chunkSize", "64k"))) {
      ShuffleServer server = cluster.server(0);
      long pinnedBefore = server.nettyPinnedDirectMemory();
      AtomicLong frames = new AtomicLong();
      AtomicLong answers = new AtomicLong();
      ExecutorService pool = Executors.newFixedThreadPool(4);
      try {
        // connections end early (truncated frames, garbage the server closes on): open new ones
        // until at least MIN_FRAMES frames and MIN_CONNECTIONS connections went out
        java.util.concurrent.atomic.AtomicInteger next =
            new java.util.concurrent.atomic.AtomicInteger();
        List<Future<?>> work = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
          work.add(
              pool.submit(
                  () -> {
                    int c;
                    while ((c = next.getAndIncrement()) < MIN_CONNECTIONS
                        || frames.get() < MIN_FRAMES) {
                      fuzzOneConnection(server.port(), new Random(seed * 31 + c), frames, answers);
                    }
                    return null;
                  }));
        }
        for (Future<?> f : work) {
          f.get(5, TimeUnit.MINUTES);
        }
      } finally {
        pool.shutdownNow();
      }
      assertThat(frames.get()).as(context).isGreaterThanOrEqualTo(MIN_FRAMES);
      assertThat(answers.get()).as(context + ": the server answered").isPositive();

      // the server still does its job for a well-behaved client
      cluster.coordinator().registerShuffle(0, 2, 3);
      for (int map = 0; map < 2; map++) {
        try (MapOutputPusher pusher = cluster.pusher(0, map, 0)) {
          for (int p = 0; p < 3; p++) {
            for (int seq = 0; seq < 10; seq++) {
              byte[] r = Records.record(map, p, seq, 100 + seq * 50);
              pusher.write(p, r, 0, r.length);
            }
          }
          pusher.finish();
        }
      }
      Records.Checker checker = new Records.Checker();
      try (PartitionReader reader = cluster.reader(0, 0, 3, 0, 2)) {
        ShuffleBatch batch;
        while ((batch = reader.next()) != null) {
          checker.accept(batch.partitionId(), batch.payload());
        }
      }
      for (int map = 0; map < 2; map++) {
        for (int p = 0; p < 3; p++) {
          assertThat(checker.count(map, p)).as(context).isEqualTo(10);
        }
      }

      // whatever the fuzzer registered goes; then nothing is held
      for (String app : APPS) {
        server.registry().unregisterApplication(app).get(1, TimeUnit.MINUTES);
      }
      cluster.coordinator().unregisterShuffle(0);
      assertThat(server.memory().held()).as(context + ": memory held").isZero();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (server.nettyPinnedDirectMemory() > pinnedBefore + (256 << 10)
          && System.nanoTime() < deadline) {
        Thread.sleep(20); // connections still closing release their buffers
      }
      assertThat(server.nettyPinnedDirectMemory())
          .as(context + ": Netty direct memory pinned by the server")
          .isLessThanOrEqualTo(pinnedBefore + (256 << 10));
      assertThat(server.dataDirectories().all())
          .as(context + ": no directory marked failed")
          .allSatisfy(d -> assertThat(d.health().name()).isNotEqualTo("FAILED"));
    }
  }

  private static void fuzzOneConnection(
      int port, Random random, AtomicLong frames, AtomicLong answers) throws IOException {
    try (RawConnection c = new RawConnection("127.0.0.1", port)) {
      Thread drain =
          new Thread(
              () -> {
                try {
                  while (true) {
                    Response r = c.readResponse();
                    if (r.getStatus() != Status.STATUS_UNSPECIFIED) {
                      answers.incrementAndGet();
                    }
                  }
                } catch (IOException e) {
                  // the connection ended
                }
              });
      drain.setDaemon(true);
      drain.start();
      try {
        for (int i = 0; i < FRAMES_PER_CONNECTION; i++) {
          byte[] frame = nextFrame(random);
          frames.incrementAndGet();
          int mode = random.nextInt(100);
          if (mode < 3) {
            // truncated: the rest never comes
            c.send(Arrays.copyOf(frame, random.nextInt(frame.length)));
            break;
          }
          if (mode < 5) {
            // a length past everything the server allows
            ByteBuffer.wrap(frame).putInt(0, BOUNDARIES[random.nextInt(BOUNDARIES.length)]);
          } else if (mode < 8) {
            // random bytes where the header is
            for (int k = 9; k < frame.length && k < 40; k++) {
              frame[k] = (byte) random.nextInt();
            }
          }
          c.send(frame);
        }
      } catch (IOException e) {
        // the server closed a connection that sent garbage: expected
      }
      c.close();
      try {
        drain.join(10_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private static int value(Random random) {
    return random.nextInt(3) == 0
        ? BOUNDARIES[random.nextInt(BOUNDARIES.length)]
        : random.nextInt(8);
  }

  private static String app(Random random) {
    return random.nextInt(4) == 0 ? APPS[random.nextInt(APPS.length)] : APP;
  }

  private static MapPartitionRef ref(Random random) {
    return MapPartitionRef.newBuilder()
        .setAppId(app(random))
        .setShuffleId(value(random))
        .setMapIndex(value(random))
        .setAttempt(value(random))
        .build();
  }

  private static byte[] nextFrame(Random random) {
    MessageType[] types = MessageType.values();
    MessageType type = types[random.nextInt(types.length)];
    long id = random.nextLong();
    MessageLite header;
    byte[] body = new byte[0];
    switch (type) {
      case REGISTER_SHUFFLE:
        header =
            RegisterShuffle.newBuilder()
                .setRequestId(id)
                .setAppId(app(random))
                .setShuffleId(value(random))
                .setNumMaps(value(random))
                .setNumPartitions(value(random))
                .build();
        break;
      case HEARTBEAT:
        header = Heartbeat.newBuilder().setRequestId(id).setAppId(app(random)).build();
        break;
      case UNREGISTER_SHUFFLE:
        header =
            UnregisterShuffle.newBuilder()
                .setRequestId(id)
                .setAppId(app(random))
                .setShuffleId(value(random))
                .build();
        break;
      case UNREGISTER_APPLICATION:
        header = UnregisterApplication.newBuilder().setRequestId(id).setAppId(app(random)).build();
        break;
      case PUSH_DATA:
        header =
            PushData.newBuilder()
                .setRequestId(id)
                .setAppId(app(random))
                .setShuffleId(value(random))
                .setPartitionId(value(random))
                .setEpoch(value(random))
                .build();
        body = batches(random);
        break;
      case COMMIT_SHUFFLE:
        header =
            CommitShuffle.newBuilder()
                .setRequestId(id)
                .setAppId(app(random))
                .setShuffleId(value(random))
                .build();
        break;
      case OPEN_STREAM:
        header =
            OpenStream.newBuilder()
                .setRequestId(id)
                .setAppId(app(random))
                .setShuffleId(value(random))
                .setPartitionId(value(random))
                .setEpoch(value(random))
                .setStartMapIndex(value(random))
                .setEndMapIndex(value(random))
                .build();
        break;
      case FETCH_CHUNK:
        header =
            FetchChunk.newBuilder()
                .setRequestId(id)
                .setStreamId(value(random))
                .setChunkIndex(value(random))
                .build();
        break;
      case CLOSE_STREAM:
        header = CloseStream.newBuilder().setRequestId(id).setStreamId(value(random)).build();
        break;
      case REGION_START:
        header =
            RegionStart.newBuilder()
                .setRequestId(id)
                .setPartition(ref(random))
                .setNumSubpartitions(value(random))
                .setRegionIndex(value(random))
                .setBroadcast(random.nextBoolean())
                .build();
        break;
      case REGION_DATA:
        header =
            RegionData.newBuilder()
                .setRequestId(id)
                .setPartition(ref(random))
                .setRegionIndex(value(random))
                .setSequence(value(random))
                .build();
        body = blocks(random);
        break;
      case REGION_FINISH:
        header =
            RegionFinish.newBuilder()
                .setRequestId(id)
                .setPartition(ref(random))
                .setRegionIndex(value(random))
                .build();
        break;
      case COMMIT_MAP_PARTITION:
        header =
            CommitMapPartition.newBuilder()
                .setRequestId(id)
                .setPartition(ref(random))
                .setNumRegions(value(random))
                .build();
        break;
      case RELEASE_MAP_PARTITION:
        header =
            ReleaseMapPartition.newBuilder().setRequestId(id).setPartition(ref(random)).build();
        break;
      case OPEN_MAP_STREAM:
        header =
            OpenMapStream.newBuilder()
                .setRequestId(id)
                .setPartition(ref(random))
                .setStartSubpartition(value(random))
                .setEndSubpartition(value(random))
                .build();
        break;
      case READ_MAP_BUFFER:
        header = ReadMapBuffer.newBuilder().setRequestId(id).setStreamId(value(random)).build();
        break;
      case HELLO:
        header =
            Hello.newBuilder()
                .setRequestId(id)
                .setProtocolVersion(value(random))
                .setRelease(app(random))
                .build();
        break;
      default:
        // responses and coordinator requests a server does not answer, and unknown type ids
        byte[] junk = new byte[random.nextInt(64)];
        random.nextBytes(junk);
        return RawConnection.frame(
            random.nextBoolean() ? type.id() : (byte) random.nextInt(), junk, new byte[0]);
    }
    return RawConnection.frame(type, header, body);
  }

  /** Sealed batches (current format), with boundary values in their headers now and then. */
  private static byte[] batches(Random random) {
    ByteBuf b = Unpooled.buffer();
    int n = random.nextInt(4);
    for (int i = 0; i < n; i++) {
      byte[] payload = new byte[random.nextInt(200)];
      random.nextBytes(payload);
      int header = b.writerIndex();
      BatchFormat.writeBatch(b, value(random), value(random), value(random), payload);
      mutateHeader(random, b, header, BatchFormat.HEADER_SIZE);
    }
    return bytes(b);
  }

  /** Sealed map partition blocks, with boundary values in their headers now and then. */
  private static byte[] blocks(Random random) {
    ByteBuf b = Unpooled.buffer();
    int n = random.nextInt(4);
    for (int i = 0; i < n; i++) {
      byte[] payload = new byte[random.nextInt(200)];
      random.nextBytes(payload);
      int header = b.writerIndex();
      MapBlockFormat.writeHeader(
          b, value(random), random.nextInt(3), payload.length, payload.length);
      b.writeBytes(payload);
      MapBlockFormat.seal(b, header);
      mutateHeader(random, b, header, MapBlockFormat.HEADER_SIZE);
    }
    return bytes(b);
  }

  /** One time in ten, one int of the header becomes a boundary value. */
  private static void mutateHeader(Random random, ByteBuf b, int header, int headerSize) {
    if (random.nextInt(10) == 0) {
      int field = random.nextInt(headerSize / 4);
      b.setInt(header + 4 * field, BOUNDARIES[random.nextInt(BOUNDARIES.length)]);
    }
  }

  private static byte[] bytes(ByteBuf b) {
    byte[] out = new byte[b.readableBytes()];
    b.readBytes(out);
    b.release();
    return out;
  }
}
